// SPDX-License-Identifier: GPL-2.0
/* nftw() */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fake_cgroup.h"

struct fake_file {
	const char *name;
	const char *content;
};

static const struct fake_file v2_files[] = {
	{ "cgroup.controllers", "cpuset cpu io memory pids\n" },
	{ "cgroup.subtree_control", "cpuset cpu io memory pids\n" },
	{ "cgroup.procs", "" },
	{ "cgroup.threads", "" },
	{ "cpu.max", "max 100000\n" },
	{ "cpu.max.burst", "0\n" },
	{ "cpu.weight", "100\n" },
	{ "cpu.weight.nice", "0\n" },
	{ "cpu.idle", "0\n" },
	{ "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\nnr_periods 0\nnr_throttled 0\n"
		      "throttled_usec 0\nnr_bursts 0\nburst_usec 0\n" },
	{ "cpuset.cpus", "\n" },
	{ "cpuset.cpus.effective", "0-3\n" },
	{ "cpuset.mems", "\n" },
	{ "cpuset.mems.effective", "0\n" },
	{ "memory.max", "max\n" },
	{ "memory.current", "0\n" },
	{ NULL, NULL },
};

/* What a controller-less cgroup2 (hybrid "unified") shows. */
static const struct fake_file unified_files[] = {
	{ "cgroup.controllers", "" },
	{ "cgroup.procs", "" },
	{ "cgroup.threads", "" },
	{ "cpu.stat", "usage_usec 0\nuser_usec 0\nsystem_usec 0\n" },
	{ NULL, NULL },
};

static const struct fake_file v1_cpu_files[] = {
	{ "cgroup.procs", "" },
	{ "tasks", "" },
	{ "cpu.cfs_quota_us", "-1\n" },
	{ "cpu.cfs_period_us", "100000\n" },
	{ "cpu.cfs_burst_us", "0\n" },
	{ "cpu.shares", "1024\n" },
	{ "cpu.idle", "0\n" },
	{ "cpu.stat", "nr_periods 0\nnr_throttled 0\nthrottled_time 0\nnr_bursts 0\n"
		      "burst_time 0\n" },
	{ NULL, NULL },
};

static const struct fake_file v1_cpuacct_files[] = {
	{ "cgroup.procs", "" },
	{ "tasks", "" },
	{ "cpuacct.usage", "0\n" },
	{ "cpuacct.stat", "user 0\nsystem 0\n" },
	{ NULL, NULL },
};

static const struct fake_file v1_cpuset_files[] = {
	{ "cgroup.procs", "" },	    { "tasks", "" },
	{ "cpuset.cpus", "0-3\n" }, { "cpuset.effective_cpus", "0-3\n" },
	{ "cpuset.mems", "0\n" },   { NULL, NULL },
};

static const struct fake_file v1_memory_files[] = {
	{ "cgroup.procs", "" },
	{ "tasks", "" },
	{ "memory.limit_in_bytes", "9223372036854771712\n" },
	{ "memory.usage_in_bytes", "0\n" },
	{ NULL, NULL },
};

#define MAX_HIERS 6

/* One mount: a directory and up to two file sets (the combined cpu,cpuacct has two). */
struct fake_hier {
	const char *dir; /* "" for v2 */
	const char *ctrls; /* comma list it serves, matched against fake_cg__path's ctrl */
	const struct fake_file *files[2];
};

struct fake_cg {
	enum fake_cg_layout layout;
	int nr_hiers;
	struct fake_hier hiers[MAX_HIERS];
	char root[PATH_MAX / 2];
};

int fake_write_file(const char *path, const char *content)
{
	char dir[PATH_MAX], *slash;
	FILE *f;
	int err = 0;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash && slash != dir) {
		*slash = '\0';
		for (char *p = dir + 1; *p; p++) {
			if (*p != '/')
				continue;
			*p = '\0';
			if (mkdir(dir, 0755) && errno != EEXIST)
				return -errno;
			*p = '/';
		}
		if (mkdir(dir, 0755) && errno != EEXIST)
			return -errno;
	}
	f = fopen(path, "w");
	if (!f)
		return -errno;
	if (fputs(content, f) == EOF)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		return rmdir(path) ? -1 : 0;
	return unlink(path) ? -1 : 0;
}

int fake_rmtree(const char *path)
{
	if (!path || !path[0] || strcmp(path, "/") == 0)
		return -EINVAL;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS) ? -errno : 0;
}

static void add_hier(struct fake_cg *fc, const char *dir, const char *ctrls,
		     const struct fake_file *a, const struct fake_file *b)
{
	struct fake_hier *h = &fc->hiers[fc->nr_hiers++];

	h->dir = dir;
	h->ctrls = ctrls;
	h->files[0] = a;
	h->files[1] = b;
}

static void setup_hiers(struct fake_cg *fc)
{
	switch (fc->layout) {
	case FAKE_CG_V2:
		add_hier(fc, "", "cpu,cpuacct,cpuset,memory", v2_files, NULL);
		return;
	case FAKE_CG_V1:
		add_hier(fc, "cpu,cpuacct", "cpu,cpuacct", v1_cpu_files, v1_cpuacct_files);
		break;
	case FAKE_CG_V1_SPLIT:
	case FAKE_CG_HYBRID:
		add_hier(fc, "cpu", "cpu", v1_cpu_files, NULL);
		add_hier(fc, "cpuacct", "cpuacct", v1_cpuacct_files, NULL);
		break;
	}
	add_hier(fc, "cpuset", "cpuset", v1_cpuset_files, NULL);
	add_hier(fc, "memory", "memory", v1_memory_files, NULL);
	if (fc->layout == FAKE_CG_HYBRID)
		add_hier(fc, "unified", "", unified_files, NULL);
}

static bool serves(const struct fake_hier *h, const char *ctrl)
{
	size_t n = strlen(ctrl);
	const char *p = h->ctrls;

	while ((p = strstr(p, ctrl))) {
		if ((p == h->ctrls || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
			return true;
		p += n;
	}
	return false;
}

static int hier_path(const struct fake_cg *fc, const struct fake_hier *h, const char *rel,
		     const char *file, char *buf, size_t size)
{
	int n;

	n = snprintf(buf, size, "%s%s%s%s%s%s%s", fc->root, h->dir[0] ? "/" : "", h->dir,
		     rel && rel[0] ? "/" : "", rel ? rel : "", file ? "/" : "", file ? file : "");
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

int fake_cg__path(const struct fake_cg *fc, const char *ctrl, const char *rel, const char *file,
		  char *buf, size_t size)
{
	for (int i = 0; i < fc->nr_hiers; i++) {
		if (fc->layout == FAKE_CG_V2 || serves(&fc->hiers[i], ctrl ? ctrl : "cpu"))
			return hier_path(fc, &fc->hiers[i], rel, file, buf, size);
	}
	return -ENOENT;
}

static int populate(const struct fake_cg *fc, const struct fake_hier *h, const char *rel)
{
	char path[PATH_MAX];
	int err;

	for (int s = 0; s < 2 && h->files[s]; s++) {
		for (const struct fake_file *f = h->files[s]; f->name; f++) {
			err = hier_path(fc, h, rel, f->name, path, sizeof(path));
			if (!err)
				err = fake_write_file(path, f->content);
			if (err)
				return err;
		}
	}
	return 0;
}

int fake_cg__new(enum fake_cg_layout layout, struct fake_cg **ret)
{
	struct fake_cg *fc;
	char link[PATH_MAX];
	int err;

	fc = calloc(1, sizeof(*fc));
	if (!fc)
		return -ENOMEM;
	fc->layout = layout;
	snprintf(fc->root, sizeof(fc->root), "/tmp/kqos-fakecg-XXXXXX");
	if (!mkdtemp(fc->root)) {
		err = -errno;
		free(fc);
		return err;
	}
	setup_hiers(fc);
	for (int i = 0; i < fc->nr_hiers; i++) {
		err = populate(fc, &fc->hiers[i], "");
		if (err)
			goto err_free;
	}
	if (layout == FAKE_CG_V1) {
		/* As on real hosts: the single-controller names point at the combined mount. */
		snprintf(link, sizeof(link), "%s/cpu", fc->root);
		if (symlink("cpu,cpuacct", link)) {
			err = -errno;
			goto err_free;
		}
		snprintf(link, sizeof(link), "%s/cpuacct", fc->root);
		if (symlink("cpu,cpuacct", link)) {
			err = -errno;
			goto err_free;
		}
	}
	*ret = fc;
	return 0;
err_free:
	fake_cg__free(fc);
	return err;
}

void fake_cg__free(struct fake_cg *fc)
{
	if (!fc)
		return;
	fake_rmtree(fc->root);
	free(fc);
}

const char *fake_cg__root(const struct fake_cg *fc)
{
	return fc->root;
}

int fake_cg__mkcg(struct fake_cg *fc, const char *rel)
{
	char part[PATH_MAX];
	size_t len = strlen(rel);
	int err;

	/* Each ancestor gets its own default files, as the kernel creates them. */
	for (size_t i = 1; i <= len; i++) {
		if (rel[i] != '/' && rel[i] != '\0')
			continue;
		snprintf(part, sizeof(part), "%.*s", (int)i, rel);
		for (int h = 0; h < fc->nr_hiers; h++) {
			err = populate(fc, &fc->hiers[h], part);
			if (err)
				return err;
		}
	}
	return 0;
}

int fake_cg__write(const struct fake_cg *fc, const char *ctrl, const char *rel, const char *file,
		   const char *content)
{
	char path[PATH_MAX];
	int err;

	err = fake_cg__path(fc, ctrl, rel, file, path, sizeof(path));
	if (err)
		return err;
	return fake_write_file(path, content);
}

int fake_cg__read(const struct fake_cg *fc, const char *ctrl, const char *rel, const char *file,
		  char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd, err;

	err = fake_cg__path(fc, ctrl, rel, file, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (!err)
		buf[n] = '\0';
	return err;
}
