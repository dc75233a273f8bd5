// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "fileio.h"
#include "live.h"

void daemon_path(char *buf, size_t len)
{
	const char *out = getenv("OUTPUT");

	snprintf(buf, len, "%s/kqosd", out ? out : ".output");
}

bool daemon_prepare(char *kqosd, size_t len)
{
	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK))
		return false;
	live_sweep_stale();
	daemon_path(kqosd, len);
	return true;
}

int daemon_tmp_file(char *buf, size_t len, const char *prefix)
{
	int fd;

	snprintf(buf, len, "/tmp/%s-XXXXXX", prefix);
	fd = mkstemp(buf);
	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

char *daemon_tmp_dir(char *buf, size_t len, const char *prefix)
{
	snprintf(buf, len, "/tmp/%s-XXXXXX", prefix);
	return mkdtemp(buf);
}

void daemon_rm_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

char *daemon_files_make(char *cfg, char *errlog, char *state)
{
	daemon_tmp_file(cfg, DAEMON_TMP_LEN, "kqosd-cfg");
	daemon_tmp_file(errlog, DAEMON_TMP_LEN, "kqosd-err");
	return daemon_tmp_dir(state, DAEMON_TMP_LEN, "kqos-state");
}

void daemon_files_remove(const char *cfg, const char *errlog, char **state_dir)
{
	if (*state_dir) {
		daemon_rm_in(*state_dir, "journal");
		rmdir(*state_dir);
		*state_dir = NULL;
	}
	unlink(cfg);
	if (getenv("KQOS_TEST_KEEP_LOG"))
		fprintf(stderr, "kqosd log kept: %s\n", errlog);
	else
		unlink(errlog);
}

void daemon_kill(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = -1;
}

pid_t daemon_start(const char *kqosd, const char *cfg, const char *errlog)
{
	char *argv[] = { (char *)kqosd, "--config", (char *)cfg, NULL };
	pid_t pid = fork();

	if (pid == 0) {
		int e = open(errlog, O_WRONLY | O_TRUNC | O_CREAT, 0600);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(e, 2);
		execv(kqosd, argv);
		_exit(127);
	}
	return pid;
}

int daemon_stop(pid_t pid)
{
	int status;

	if (pid <= 0 || kill(pid, SIGTERM) || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int daemon_log_count(const char *errlog, const char *needle, const char *needle2)
{
	FILE *f = fopen(errlog, "r");
	char line[2048];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, needle) && (!needle2 || strstr(line, needle2));
	fclose(f);
	return n;
}

int live_file_write(const char *ctrl, const char *tag, const char *file, const char *val)
{
	char dir[512], path[PATH_MAX];

	live_cg_path(dir, sizeof(dir), ctrl, tag);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	return fileio_put(path, val);
}

void live_file_read(const char *ctrl, const char *tag, const char *file, char *buf, size_t n)
{
	char dir[512], path[PATH_MAX];

	live_cg_path(dir, sizeof(dir), ctrl, tag);
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	fileio_get_line(path, buf, n);
}

void live_cg_create_all(const char *const *ctrls, size_t n, const char *tag)
{
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(live_cg_create(ctrls[i], tag), 0, "%s %s", ctrls[i], tag);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(ctrls[i], "cpuset"))
			continue;
		cr_assert_eq(live_file_write("cpuset", tag, "cpuset.mems", "0"), 0);
		cr_assert_eq(live_file_write("cpuset", tag, "cpuset.cpus", "0-1"), 0);
	}
}

void live_cg_destroy_all(const char *const *ctrls, size_t n, const char *tag)
{
	for (size_t i = 0; i < n; i++)
		live_cg_destroy(ctrls[i], tag);
}

pid_t live_spawn_in(const char *const *ctrls, size_t n, const char *tag, int duty_pct)
{
	pid_t pid = live_spawn(duty_pct);

	cr_assert_gt(pid, 0);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(live_cg_attach(ctrls[i], tag, pid), 0, "%s %s", ctrls[i], tag);
	live_go(pid);
	return pid;
}

bool live_wait_for(bool (*ok)(void), unsigned int ms, unsigned int step_ms)
{
	for (unsigned int t = 0; t < ms && !ok(); t += step_ms)
		live_sleep_ms(step_ms);
	return ok();
}

static unsigned int ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned int)((t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000);
}

bool live_file_wait(const char *ctrl, const char *tag, const char *file, const char *want,
		    unsigned int ms, unsigned int *ret_ms)
{
	struct timespec t0;
	char buf[128];

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		live_file_read(ctrl, tag, file, buf, sizeof(buf));
		if (!strcmp(buf, want)) {
			if (ret_ms)
				*ret_ms = ms_since(&t0);
			return true;
		}
		if (ms_since(&t0) >= ms)
			return false;
		live_sleep_ms(1);
	}
}

int daemon_log_wait(const char *errlog, const char *needle, const char *needle2, unsigned int ms)
{
	int n = daemon_log_count(errlog, needle, needle2);

	/* kqosd logs an action after it is done: a test that saw the effect may be early */
	for (unsigned int t = 0; n < 1 && t < ms; t += 10) {
		live_sleep_ms(10);
		n = daemon_log_count(errlog, needle, needle2);
	}
	return n;
}
