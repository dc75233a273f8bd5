// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "live.h"

static const char *const controllers[] = { "cpu", "cpuacct", "cpuset", "memory", "unified" };

bool live_require_root(void)
{
	if (geteuid() != 0 || access("/sys/kernel/btf/vmlinux", R_OK)) {
		cr_skip_test("live tests need root and BTF");
		return false;
	}
	return true;
}

void live_cg_path(char *buf, size_t len, const char *ctrl, const char *tag)
{
	snprintf(buf, len, "%s/%s/kqos-test-%d-%s", LIVE_CG_ROOT, ctrl, (int)getpid(), tag);
}

int live_cg_create(const char *ctrl, const char *tag)
{
	char p[512];

	live_cg_path(p, sizeof(p), ctrl, tag);
	if (mkdir(p, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int write_str(const char *path, const char *s)
{
	FILE *f = fopen(path, "w");
	int err = 0;

	if (!f)
		return -errno;
	if (fputs(s, f) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

int live_cg_attach(const char *ctrl, const char *tag, pid_t pid)
{
	char p[600], v[32];

	live_cg_path(p, sizeof(p) - 16, ctrl, tag);
	strcat(p, "/cgroup.procs");
	snprintf(v, sizeof(v), "%d\n", (int)pid);
	return write_str(p, v);
}

static void kill_members(const char *dir)
{
	char p[600];
	FILE *f;
	int pid;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	f = fopen(p, "r");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		kill(pid, SIGKILL);
	fclose(f);
}

static void destroy_dir(const char *dir);

/* A cgroup can only go once its children are gone: remove them depth first. */
static void destroy_children(const char *dir)
{
	struct dirent *de;
	char p[1024];
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		destroy_dir(p);
	}
	closedir(d);
}

static void destroy_dir(const char *dir)
{
	destroy_children(dir);
	kill_members(dir);
	for (int i = 0; i < 100; i++) {
		if (!rmdir(dir) || errno == ENOENT)
			return;
		live_sleep_ms(20);
	}
	fprintf(stderr, "live: could not remove %s: %s\n", dir, strerror(errno));
}

void live_cg_destroy(const char *ctrl, const char *tag)
{
	char p[512];

	live_cg_path(p, sizeof(p), ctrl, tag);
	destroy_dir(p);
}

void live_sweep_stale(void)
{
	for (size_t i = 0; i < sizeof(controllers) / sizeof(controllers[0]); i++) {
		char dir[256], p[600];
		struct dirent *de;
		DIR *d;
		int pid;

		snprintf(dir, sizeof(dir), "%s/%s", LIVE_CG_ROOT, controllers[i]);
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			if (sscanf(de->d_name, "kqos-test-%d-", &pid) != 1 || !kill(pid, 0))
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			destroy_dir(p);
		}
		closedir(d);
	}
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void spin_until(__u64 t)
{
	while (mono_ns() < t)
		;
}

static void load_loop(int duty_pct)
{
	const __u64 period = 10000000ULL;
	__u64 start = mono_ns();

	for (__u64 k = 1;; k++) {
		__u64 end = start + k * period;

		spin_until(end - period + period * duty_pct / 100);
		if (duty_pct < 100) {
			struct timespec ts = { 0, (long)(end - mono_ns()) };

			if (ts.tv_nsec > 0)
				nanosleep(&ts, NULL);
		}
	}
}

pid_t live_spawn(int duty_pct)
{
	sigset_t set, old;
	pid_t pid;
	int sig;

	/* Blocked before fork, so a live_go() that comes early is queued, not fatal. */
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	pid = fork();
	if (pid) {
		sigprocmask(SIG_SETMASK, &old, NULL);
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigwait(&set, &sig);
	if (duty_pct <= 0)
		for (;;)
			pause();
	load_loop(duty_pct);
	_exit(0);
}

void live_go(pid_t pid)
{
	kill(pid, SIGUSR1);
}

void live_kill(pid_t pid)
{
	if (pid <= 0)
		return;
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

int live_read_u64(const char *path, __u64 *ret)
{
	unsigned long long v;
	FILE *f = fopen(path, "r");
	int n;

	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*ret = v;
	return 0;
}

int live_read_key(const char *path, const char *key, __u64 *ret)
{
	char k[64];
	unsigned long long v;
	FILE *f = fopen(path, "r");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fscanf(f, "%63s %llu", k, &v) == 2) {
		if (!strcmp(k, key)) {
			*ret = v;
			err = 0;
			break;
		}
	}
	fclose(f);
	return err;
}

void live_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

struct cg_totals live_totals(struct collector *c, struct cg_totals *buf, size_t cap, __u64 id)
{
	struct cg_totals zero = { .cgid = id };
	int n = collector__read(c, buf, cap, true);

	cr_assert_geq(n, 0, "collector__read: %d", n);
	for (int i = 0; i < n; i++)
		if (buf[i].cgid == id)
			return buf[i];
	return zero;
}
