/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_DAEMON_H
#define KQOS_TESTS_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Live tests that run kqosd itself: its binary, a config, its stderr, a test cgroup's files. */

/* $OUTPUT/kqosd (or .output/kqosd) into @buf. */
void daemon_path(char *buf, size_t len);
/*
 * Root with BTF, or the test is skipped later: then sweep what a crashed run left and put
 * kqosd's path into @kqosd. False when kqosd cannot run here.
 */
bool daemon_prepare(char *kqosd, size_t len);

/* mkstemp of "/tmp/<@prefix>-XXXXXX" into @buf, closed again; 0 or -errno. */
int daemon_tmp_file(char *buf, size_t len, const char *prefix);
/* mkdtemp of "/tmp/<@prefix>-XXXXXX" into @buf; @buf, or NULL. */
char *daemon_tmp_dir(char *buf, size_t len, const char *prefix);
/* unlink @dir/@name; a file that is not there is no error for a teardown. */
void daemon_rm_in(const char *dir, const char *name);

/*
 * The files of one kqosd run: a config @cfg, a stderr log @errlog and a state dir made in
 * @state (each DAEMON_TMP_LEN bytes). The state dir, or NULL.
 */
#define DAEMON_TMP_LEN 64
char *daemon_files_make(char *cfg, char *errlog, char *state);
/*
 * Remove them: the journal and @*state_dir (then NULL), @cfg, and @errlog unless
 * KQOS_TEST_KEEP_LOG is set, so a failed run can be read afterwards.
 */
void daemon_files_remove(const char *cfg, const char *errlog, char **state_dir);
/* SIGKILL a kqosd a test left running and reap it; @*pid is -1 afterwards. */
void daemon_kill(pid_t *pid);
/* Start @kqosd --config @cfg with stderr into @errlog; the pid, or -1. */
pid_t daemon_start(const char *kqosd, const char *cfg, const char *errlog);
/* SIGTERM and wait; its exit status, or -1. */
int daemon_stop(pid_t pid);
/* Count of lines of @errlog holding @needle (and @needle2 when not NULL). */
int daemon_log_count(const char *errlog, const char *needle, const char *needle2);
/* The same, waiting up to @ms for a first such line. */
int daemon_log_wait(const char *errlog, const char *needle, const char *needle2, unsigned int ms);

/* A file of the test cgroup kqos-test-<pid>-<tag> in controller @ctrl. */
int live_file_write(const char *ctrl, const char *tag, const char *file, const char *val);
void live_file_read(const char *ctrl, const char *tag, const char *file, char *buf, size_t n);
/*
 * The test cgroup @tag in each of @ctrls[0..@n), a cpuset one with cpus 0-1 and mems 0 (v1
 * takes no task into an empty cpuset). Asserts every step, as a setup does.
 */
void live_cg_create_all(const char *const *ctrls, size_t n, const char *tag);
void live_cg_destroy_all(const char *const *ctrls, size_t n, const char *tag);
/* A load of @duty_pct % (live_spawn) placed in @tag of each of @ctrls, then let go; its pid. */
pid_t live_spawn_in(const char *const *ctrls, size_t n, const char *tag, int duty_pct);

/* Poll @ok every @step_ms until it holds or @ms pass; its last answer. */
bool live_wait_for(bool (*ok)(void), unsigned int ms, unsigned int step_ms);

/* Poll the file until it reads @want (trailing newline ignored) or @ms pass. */
bool live_file_wait(const char *ctrl, const char *tag, const char *file, const char *want,
		    unsigned int ms, unsigned int *ret_ms);

#endif
