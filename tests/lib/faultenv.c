// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "daemon.h"
#include "faultenv.h"
#include "live.h"

static const char *const real_ctrls[] = { "cpu", "cpuacct", "cpuset" };

static const struct {
	const char *ctrl, *file;
} knob_files[FAULTENV_NR_KNOBS] = {
	{ "cpu", "cpu.shares" }, { "cpu", "cpu.cfs_quota_us" }, { "cpu", "cpu.cfs_period_us" },
	{ "cpu", "cpu.idle" },	 { "cpuset", "cpuset.cpus" },	{ "cpuset", "cpuset.mems" },
};

/* "top" or "top/be<i>": the tag live_cg_path() appends to kqos-test-<pid>- */
static void tag_of(unsigned int i, char *buf, size_t n)
{
	if (i)
		snprintf(buf, n, "top/be%u", i);
	else
		snprintf(buf, n, "top");
}

void faultenv_read(const struct faultenv *fe, const char *ctrl, unsigned int i, const char *file,
		   char *buf, size_t n)
{
	char tag[32];

	tag_of(i, tag, sizeof(tag));
	live_file_read(ctrl, tag, file, buf, n);
}

int faultenv_write(const struct faultenv *fe, const char *ctrl, unsigned int i, const char *file,
		   const char *val)
{
	char tag[32];

	tag_of(i, tag, sizeof(tag));
	return live_file_write(ctrl, tag, file, val);
}

bool faultenv_wait_file(const struct faultenv *fe, const char *ctrl, unsigned int i,
			const char *file, const char *want, unsigned int ms)
{
	char tag[32];

	tag_of(i, tag, sizeof(tag));
	return live_file_wait(ctrl, tag, file, want, ms, NULL);
}

int faultenv_remove_be(const struct faultenv *fe, unsigned int i)
{
	char tag[32], path[512];
	int err = 0;

	tag_of(i, tag, sizeof(tag));
	for (size_t c = 0; c < 3; c++) {
		live_cg_path(path, sizeof(path), real_ctrls[c], tag);
		if (rmdir(path) && errno != ENOENT)
			err = -errno;
	}
	return err;
}

void faultenv_knobs_read_one(const struct faultenv *fe, unsigned int i, struct faultenv_knobs *k)
{
	for (size_t f = 0; f < FAULTENV_NR_KNOBS; f++)
		faultenv_read(fe, knob_files[f].ctrl, i, knob_files[f].file, k->v[i][f],
			      sizeof(k->v[i][f]));
}

void faultenv_knobs_read(const struct faultenv *fe, struct faultenv_knobs *k)
{
	memset(k, 0, sizeof(*k));
	for (unsigned int i = 0; i <= fe->nr_be; i++)
		faultenv_knobs_read_one(fe, i, k);
}

bool faultenv_knobs_diff(const struct faultenv *fe, const struct faultenv_knobs *a,
			 const struct faultenv_knobs *b, char *buf, size_t n)
{
	for (unsigned int i = 0; i <= fe->nr_be; i++)
		for (size_t f = 0; f < FAULTENV_NR_KNOBS; f++) {
			if (!strcmp(a->v[i][f], b->v[i][f]))
				continue;
			snprintf(buf, n, "%s%.0u %s: '%s' != '%s'", i ? "be" : "top", i,
				 knob_files[f].file, a->v[i][f], b->v[i][f]);
			return true;
		}
	buf[0] = '\0';
	return false;
}

/* --- cgroups -------------------------------------------------------------------------------- */

static int set_originals(const struct faultenv *fe, unsigned int i)
{
	char v[32];
	int err;

	err = faultenv_write(fe, "cpuset", i, "cpuset.mems", "0");
	if (!err)
		err = faultenv_write(fe, "cpuset", i, "cpuset.cpus",
				     !i || i % 2 == 0 ? "0-1" : "1");
	if (!err && i) {
		snprintf(v, sizeof(v), "%u", 700 + i);
		err = faultenv_write(fe, "cpu", i, "cpu.shares", v);
	}
	if (!err && i) {
		snprintf(v, sizeof(v), "%u", 50000 + 100 * i);
		err = faultenv_write(fe, "cpu", i, "cpu.cfs_quota_us", v);
	}
	return err;
}

int faultenv_add_be(struct faultenv *fe, unsigned int i)
{
	char tag[32];
	int err;

	tag_of(i, tag, sizeof(tag));
	for (size_t c = 0; c < 3; c++) {
		err = live_cg_create(real_ctrls[c], tag);
		if (err)
			return err;
		fe->cgroups = true;
	}
	return set_originals(fe, i);
}

int faultenv_readd_be(struct faultenv *fe, unsigned int i, const char *shares)
{
	char tag[32], from[512], to[512];
	int err;

	snprintf(tag, sizeof(tag), "top/new%u", i);
	for (size_t c = 0; c < 3; c++) {
		err = live_cg_create(real_ctrls[c], tag);
		if (err)
			return err;
	}
	err = live_file_write("cpuset", tag, "cpuset.mems", "0");
	if (!err)
		err = live_file_write("cpuset", tag, "cpuset.cpus", "0-1");
	if (!err)
		err = live_file_write("cpu", tag, "cpu.shares", shares);
	/* cpu last: the group's glob is matched in the cpu hierarchy */
	for (size_t c = 3; !err && c-- > 0;) {
		live_cg_path(from, sizeof(from), real_ctrls[c], tag);
		snprintf(to, sizeof(to), "%.*s/be%u", (int)(strrchr(from, '/') - from), from, i);
		if (rename(from, to))
			err = -errno;
	}
	return err;
}

static int make_cgroups(struct faultenv *fe)
{
	int err = 0;

	for (unsigned int i = 0; i <= fe->nr_be && !err; i++)
		err = faultenv_add_be(fe, i);
	return err;
}

/* --- mounts --------------------------------------------------------------------------------- */

static int mount_at(struct faultenv *fe, const char *src, const char *dst, const char *type,
		    unsigned long flags, const char *opts)
{
	if (fe->nr_mounts == sizeof(fe->mounts) / sizeof(fe->mounts[0]))
		return -ENOSPC;
	if (mount(src, dst, type, flags, opts))
		return -errno;
	snprintf(fe->mounts[fe->nr_mounts++], sizeof(fe->mounts[0]), "%s", dst);
	return 0;
}

static int subdir(const char *parent, const char *name, char *buf, size_t n)
{
	if (snprintf(buf, n, "%s/%s", parent, name) >= (int)n)
		return -ENAMETOOLONG;
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static int make_root(struct faultenv *fe)
{
	static const char *const binds[] = { "cpu", "cpuacct", "cpuset", "unified" };
	char dst[PATH_MAX], src[512];
	int err;

	err = mount_at(fe, "none", fe->root, "tmpfs", 0, "size=64k,mode=0755");
	for (size_t i = 0; !err && i < 4; i++) {
		if (!strcmp(binds[i], "cpuset") && (fe->flags & FAULTENV_NO_CPUSET))
			continue;
		err = subdir(fe->root, binds[i], dst, sizeof(dst));
		if (err)
			break;
		if (!strcmp(binds[i], "unified"))
			snprintf(src, sizeof(src), "%s/unified", LIVE_CG_ROOT);
		else
			live_cg_path(src, sizeof(src), binds[i], "top");
		err = mount_at(fe, src, dst, NULL, MS_BIND, NULL);
	}
	return err;
}

int faultenv_mount_state(struct faultenv *fe, const char *opts)
{
	unsigned long flags = 0;

	if (!strcmp(opts, "ro")) {
		flags = MS_RDONLY;
		opts = NULL;
	}
	return mount_at(fe, "none", fe->state, "tmpfs", flags, opts);
}

int faultenv_remount_state(struct faultenv *fe, unsigned long flags, const char *opts)
{
	return mount("none", fe->state, "tmpfs", MS_REMOUNT | flags, opts) ? -errno : 0;
}

static int rm_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (type == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

/* --- lifetime ------------------------------------------------------------------------------- */

static int make_files(struct faultenv *fe)
{
	int err;

	snprintf(fe->dir, sizeof(fe->dir), "/tmp/kqos-faults-XXXXXX");
	if (!mkdtemp(fe->dir))
		return -errno;
	err = subdir(fe->dir, "root", fe->root, sizeof(fe->root));
	if (!err)
		err = subdir(fe->dir, "state", fe->state, sizeof(fe->state));
	snprintf(fe->cfg, sizeof(fe->cfg), "%s/kqosd.json", fe->dir);
	snprintf(fe->errlog, sizeof(fe->errlog), "%s/kqosd.log", fe->dir);
	snprintf(fe->sock, sizeof(fe->sock), "%s/kqos.sock", fe->dir);
	return err;
}

int faultenv__new(unsigned int nr_be, unsigned int flags, struct faultenv **ret)
{
	struct faultenv *fe;
	int err;

	if (nr_be > FAULTENV_MAX_BE)
		return -EINVAL;
	fe = calloc(1, sizeof(*fe));
	if (!fe)
		return -ENOMEM;
	fe->nr_be = nr_be;
	fe->flags = flags;
	fe->pid = -1;
	daemon_path(fe->kqosd, sizeof(fe->kqosd));
	/* everything mounted from here on is this process's alone, and dies with it */
	err = unshare(CLONE_NEWNS) ? -errno : 0;
	if (!err && mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		err = -errno;
	if (!err)
		err = make_files(fe);
	if (!err)
		err = make_cgroups(fe);
	if (!err)
		err = make_root(fe);
	if (err)
		goto err;
	*ret = fe;
	return 0;
err:
	faultenv__free(fe);
	return err;
}

void faultenv__free(struct faultenv *fe)
{
	if (!fe)
		return;
	faultenv_kill(fe);
	/* KQOS_TEST_KEEP_LOG=1: the last kqosd log stays as /tmp/kqos-faults-<pid>.log */
	if (getenv("KQOS_TEST_KEEP_LOG") && fe->dir[0]) {
		char keep[64];

		snprintf(keep, sizeof(keep), "/tmp/kqos-faults-%d.log", (int)getpid());
		rename(fe->errlog, keep);
	}
	while (fe->nr_mounts)
		umount2(fe->mounts[--fe->nr_mounts], MNT_DETACH);
	if (fe->cgroups)
		for (size_t c = 0; c < 3; c++)
			live_cg_destroy(real_ctrls[c], "top");
	/* FTW_MOUNT: never into a mount that failed to go */
	if (fe->dir[0])
		nftw(fe->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	free(fe);
}

/* --- config --------------------------------------------------------------------------------- */

int faultenv_write_cfg(struct faultenv *fe, const char *interval, const char *slo,
		       const char *strategies, const char *extra)
{
	char tmp[PATH_MAX + 8];
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.tmp", fe->cfg);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fprintf(f,
		"{\"interval\": \"%s\", \"stateDir\": \"%s\", \"cgroupRoot\": \"%s\",\n"
		" \"export\": {\"socket\": \"%s\"},\n"
		" \"pods\": {\"source\": \"static\", \"groups\": [\n"
		"   {\"name\": \"be\", \"cgroup\": \"be*\", \"qosClass\": \"BE\"}]}",
		interval, fe->state, fe->root, fe->sock);
	if (*slo)
		fprintf(f, ",\n \"nodeSLO\": %s", slo);
	if (*strategies)
		fprintf(f, ",\n \"strategies\": %s", strategies);
	if (*extra)
		fprintf(f, ",\n %s", extra);
	fprintf(f, "}\n");
	if (fclose(f))
		err = -errno;
	if (!err && rename(tmp, fe->cfg))
		err = -errno;
	return err;
}

int faultenv_write_suppress(struct faultenv *fe, const char *interval, const char *policy,
			    int be_shares, const char *recovery)
{
	char strat[256];

	snprintf(strat, sizeof(strat),
		 "{\"cpuSuppress\": {\"policy\": \"%s\", \"beShares\": %d}, \"recovery\": \"%s\"}",
		 policy, be_shares, recovery);
	/* KQOS_TEST_DEBUG=1: kqosd logs at debug (with KQOS_TEST_KEEP_LOG, to read afterwards) */
	return faultenv_write_cfg(fe, interval,
				  "{\"resourceUsedThresholdWithBE\": {\"enable\": true}}", strat,
				  getenv("KQOS_TEST_DEBUG") ? "\"logLevel\": \"debug\"" : "");
}

/* --- the daemon ----------------------------------------------------------------------------- */

pid_t faultenv_start(struct faultenv *fe, unsigned int wait_ms)
{
	fe->pid = daemon_start(fe->kqosd, fe->cfg, fe->errlog);
	if (fe->pid > 0 && wait_ms &&
	    daemon_log_wait(fe->errlog, "kqosd started", NULL, wait_ms) < 1)
		return -1;
	return fe->pid;
}

int faultenv_stop(struct faultenv *fe)
{
	int status;

	if (fe->pid <= 0)
		return -1;
	kill(fe->pid, SIGTERM);
	if (waitpid(fe->pid, &status, 0) != fe->pid)
		return -1;
	fe->pid = -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

void faultenv_kill(struct faultenv *fe)
{
	if (fe->pid <= 0)
		return;
	kill(fe->pid, SIGKILL);
	waitpid(fe->pid, NULL, 0);
	fe->pid = -1;
}

bool faultenv_alive(struct faultenv *fe)
{
	return fe->pid > 0 && waitpid(fe->pid, NULL, WNOHANG) == 0;
}

int faultenv_nr_fds(const struct faultenv *fe)
{
	char path[64];
	struct dirent *de;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)fe->pid);
	d = opendir(path);
	if (!d)
		return -1;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

void faultenv_journal(const struct faultenv *fe, char *buf, size_t n)
{
	char path[PATH_MAX + 16];
	ssize_t len = -1;
	int fd;

	snprintf(path, sizeof(path), "%s/journal", fe->state);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		len = read(fd, buf, n - 1);
		close(fd);
	}
	buf[len > 0 ? len : 0] = '\0';
}

/* --- the socket ----------------------------------------------------------------------------- */

static long ms_left(const struct timespec *end)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (end->tv_sec - t.tv_sec) * 1000 + (end->tv_nsec - t.tv_nsec) / 1000000;
}

static int read_line(int fd, unsigned int ms, char **ret)
{
	struct timespec end;
	size_t len = 0, cap = 65536;
	char *buf = malloc(cap), *nl = NULL;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += ms / 1000;
	end.tv_nsec += (long)(ms % 1000) * 1000000;
	while (!nl) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		long left = ms_left(&end);
		ssize_t n;

		if (left <= 0 || poll(&p, 1, (int)left) != 1) {
			err = -ETIMEDOUT;
			break;
		}
		if (len + 1 == cap) {
			char *b = realloc(buf, cap * 2);

			if (!b) {
				err = -ENOMEM;
				break;
			}
			buf = b;
			cap *= 2;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n <= 0) {
			err = n ? -errno : -EPIPE;
			break;
		}
		buf[len + (size_t)n] = '\0';
		nl = strchr(buf + len, '\n');
		len += (size_t)n;
	}
	if (err) {
		free(buf);
		return err;
	}
	*nl = '\0';
	*ret = buf;
	return 0;
}

int faultenv_request(const struct faultenv *fe, const char *req, unsigned int ms, char **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, err = 0;

	if (strlen(fe->sock) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, fe->sock, strlen(fe->sock) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    send(fd, req, strlen(req), MSG_NOSIGNAL) < 0)
		err = -errno;
	if (!err)
		err = read_line(fd, ms, ret);
	close(fd);
	return err;
}
