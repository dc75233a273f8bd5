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
#include <sys/stat.h>
#include <sys/wait.h>

#include "fake_cgroup.h"
#include "fakefs.h"
#include "fileio.h"

void fakefs_path(char *buf, size_t len)
{
	const char *out = getenv("OUTPUT");

	snprintf(buf, len, "%s/tests/fuse/kqos-fake-resctrl-fs", out ? out : ".output");
}

static int mkdir_p(char *path)
{
	char *s;

	for (s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
		*s = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*s = '/';
			return -errno;
		}
		*s = '/';
	}
	return 0;
}

int fakefs_tree_write(const char *dir, const char *const *files)
{
	char path[PATH_MAX];
	size_t i;
	int err;

	for (i = 0; files[i] && files[i + 1]; i += 2) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		err = mkdir_p(path);
		if (err)
			return err;
		if (path[strlen(path) - 1] == '/')
			continue;
		f = fopen(path, "w");
		if (!f)
			return -errno;
		fputs(files[i + 1], f);
		if (fclose(f))
			return -EIO;
	}
	return 0;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/*
 * Where the fake keeps the tree it serves (its TMPDIR): beside the mount point, so that a
 * fake killed with SIGKILL, which cannot clean up, leaves nothing that fakefs_stop() misses.
 */
static void store_of(const char *mnt, char *buf, size_t len)
{
	snprintf(buf, len, "%s.store", mnt);
}

pid_t fakefs_start(const char *src, const char *mnt, const char *faults)
{
	char bin[PATH_MAX], probe[PATH_MAX], store[PATH_MAX];
	pid_t pid;
	int i;

	fakefs_path(bin, sizeof(bin));
	store_of(mnt, store, sizeof(store));
	if (mkdir(store, 0700) && errno != EEXIST)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		char *argv[] = { bin,  "--faults", (char *)faults, (char *)src, (char *)mnt,
				 "-f", NULL };
		int null = open("/dev/null", O_WRONLY);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		setenv("TMPDIR", store, 1);
		if (null >= 0)
			dup2(null, 1);
		if (faults)
			execv(bin, argv);
		argv[1] = (char *)src;
		argv[2] = (char *)mnt;
		argv[3] = "-f";
		argv[4] = NULL;
		execv(bin, argv);
		_exit(127);
	}
	/* generous: others build on this machine */
	snprintf(probe, sizeof(probe), "%s/info/last_cmd_status", mnt);
	for (i = 0; i < 200 && access(probe, R_OK); i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return -1;
		sleep_ms(50);
	}
	if (access(probe, R_OK)) {
		fakefs_stop(pid, mnt);
		return -1;
	}
	return pid;
}

static int run_fusermount(const char *flags, const char *mnt)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		if (null >= 0)
			dup2(null, 2);
		execlp("fusermount3", "fusermount3", flags, mnt, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The fake's process gone (it exits once unmounted), or killed after a grace. */
static void reap_fake(pid_t pid, const char *mnt)
{
	for (int i = 0; i < 100; i++) {
		if (waitpid(pid, NULL, WNOHANG) == pid)
			return;
		sleep_ms(20);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	if (mnt)
		run_fusermount("-uz", mnt);
}

void fakefs_stop(pid_t pid, const char *mnt)
{
	char store[PATH_MAX];

	if (mnt && run_fusermount("-u", mnt))
		run_fusermount("-uz", mnt);
	if (pid > 0)
		reap_fake(pid, mnt);
	/* with pid <= 0 the caller has already killed the fake */
	if (mnt) {
		store_of(mnt, store, sizeof(store));
		fake_rmtree(store);
	}
}

int fakefs_read(const char *mnt, const char *rel, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	err = n < 0 ? -errno : (int)n;
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return err;
}

int fakefs_write(const char *mnt, const char *rel, const char *text)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	return fileio_put(path, text);
}

bool fakefs_exists(const char *mnt, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	return !access(path, F_OK);
}

bool fakefs_has_pid(const char *mnt, const char *rel, pid_t pid)
{
	char buf[8192], *line, *save = NULL;

	fakefs_read(mnt, rel, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (atoi(line) == pid)
			return true;
	return false;
}
