/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_DAEMON_H
#define KQOS_TESTS_DAEMON_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Live tests that run kqosd itself: its binary, a config, its stderr, a test cgroup's files. */

/* $OUTPUT/kqosd (or .output/kqosd) into @buf. */
void daemon_path(char *buf, size_t len);
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
/* Poll the file until it reads @want (trailing newline ignored) or @ms pass. */
bool live_file_wait(const char *ctrl, const char *tag, const char *file, const char *want,
		    unsigned int ms, unsigned int *ret_ms);

#endif
