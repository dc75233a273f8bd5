// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "cgroupfs.h"

#define DEFAULT_ROOT "/sys/fs/cgroup"
/* Scalar knobs and cpu.stat are far below this; cpuset lists of 1024 CPUs fit too. */
#define SMALL_BUF 4096

struct cgroupfs {
	enum cgfs_mode mode;
	uint64_t nr_writes;
	/* Half of PATH_MAX so every path built below root fits in a PATH_MAX buffer. */
	char root[PATH_MAX / 2];
	char unified[PATH_MAX];
	char ctrl_dir[CG_CTRL_NR][PATH_MAX];
	char last_path[PATH_MAX];
};

struct cg_stat_reader {
	bool is_v2;
	int usage_fd; /* v1 cpuacct.usage; -1 on v2 */
	int stat_fd; /* cpu.stat */
};

static const char *const ctrl_names[CG_CTRL_NR] = {
	[CG_CTRL_CPU] = "cpu",
	[CG_CTRL_CPUACCT] = "cpuacct",
	[CG_CTRL_CPUSET] = "cpuset",
	[CG_CTRL_MEMORY] = "memory",
};

/* The one place that knows file names: logical knob -> v1 controller and file, v2 file. */
static const struct {
	enum cg_ctrl ctrl;
	const char *v1;
	const char *v2;
} knob_files[CG_KNOB_NR] = {
	[CG_KNOB_CPU_QUOTA] = { CG_CTRL_CPU, "cpu.cfs_quota_us", "cpu.max" },
	[CG_KNOB_CPU_PERIOD] = { CG_CTRL_CPU, "cpu.cfs_period_us", "cpu.max" },
	[CG_KNOB_CPU_SHARES] = { CG_CTRL_CPU, "cpu.shares", "cpu.weight" },
	[CG_KNOB_CPU_IDLE] = { CG_CTRL_CPU, "cpu.idle", "cpu.idle" },
	[CG_KNOB_CPU_BURST] = { CG_CTRL_CPU, "cpu.cfs_burst_us", "cpu.max.burst" },
	[CG_KNOB_CPUSET_CPUS] = { CG_CTRL_CPUSET, "cpuset.cpus", "cpuset.cpus" },
	[CG_KNOB_CPUSET_EFFECTIVE] = { CG_CTRL_CPUSET, "cpuset.effective_cpus",
				       "cpuset.cpus.effective" },
	[CG_KNOB_MEMORY_MAX] = { CG_CTRL_MEMORY, "memory.limit_in_bytes", "memory.max" },
	[CG_KNOB_CPU_USAGE] = { CG_CTRL_CPUACCT, "cpuacct.usage", "cpu.stat" },
	[CG_KNOB_CPU_STAT] = { CG_CTRL_CPU, "cpu.stat", "cpu.stat" },
	[CG_KNOB_PROCS] = { CG_CTRL_CPU, "cgroup.procs", "cgroup.procs" },
	[CG_KNOB_THREADS] = { CG_CTRL_CPU, "tasks", "cgroup.threads" },
};

const char *cgfs_mode_name(enum cgfs_mode mode)
{
	switch (mode) {
	case CGFS_MODE_AUTO:
		return "auto";
	case CGFS_MODE_V1:
		return "v1";
	case CGFS_MODE_V2:
		return "v2";
	case CGFS_MODE_HYBRID:
		return "hybrid";
	}
	return "unknown";
}

/* ---- paths ---- */

static void set_last_path(struct cgroupfs *cg, const char *path)
{
	snprintf(cg->last_path, sizeof(cg->last_path), "%s", path);
}

static const char *hier_dir(const struct cgroupfs *cg, enum cg_ctrl ctrl)
{
	if (cg->mode == CGFS_MODE_V2)
		return cg->root;
	return cg->ctrl_dir[ctrl][0] ? cg->ctrl_dir[ctrl] : NULL;
}

/* dir/rel[/file] with rel's leading and trailing '/' dropped. */
static int build_path(struct cgroupfs *cg, enum cg_ctrl ctrl, const char *rel, const char *file,
		      char *buf, size_t size)
{
	const char *dir = hier_dir(cg, ctrl);
	size_t len;
	int n;

	if (!rel)
		rel = "";
	if (!cgpath_is_safe(rel)) {
		set_last_path(cg, rel);
		return -EINVAL;
	}
	if (!dir) {
		snprintf(cg->last_path, sizeof(cg->last_path), "%s/%s", cg->root, ctrl_names[ctrl]);
		return -EOPNOTSUPP;
	}
	if (rel[0] == '/')
		rel++;
	len = strlen(rel);
	if (len && rel[len - 1] == '/')
		len--;
	n = snprintf(buf, size, "%s%s%.*s%s%s", dir, len ? "/" : "", (int)len, rel, file ? "/" : "",
		     file ? file : "");
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int cgroupfs__dir(struct cgroupfs *cg, enum cg_ctrl ctrl, const char *rel, char *buf, size_t size)
{
	if ((unsigned int)ctrl >= CG_CTRL_NR)
		return -EINVAL;
	return build_path(cg, ctrl, rel, NULL, buf, size);
}

const char *cgroupfs__knob_file(const struct cgroupfs *cg, enum cg_knob knob)
{
	if ((unsigned int)knob >= CG_KNOB_NR)
		return NULL;
	return cg->mode == CGFS_MODE_V2 ? knob_files[knob].v2 : knob_files[knob].v1;
}

int cgroupfs__knob_path(struct cgroupfs *cg, enum cg_knob knob, const char *rel, char *buf,
			size_t size)
{
	if ((unsigned int)knob >= CG_KNOB_NR)
		return -EINVAL;
	return build_path(cg, knob_files[knob].ctrl, rel, cgroupfs__knob_file(cg, knob), buf, size);
}

/* ---- raw I/O ---- */

/* Whole small file into buf, NUL-terminated; -EFBIG when it does not fit. */
static int read_fd(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	for (;;) {
		n = pread(fd, buf + len, size - len - 1, (off_t)len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		len += (size_t)n;
		if (len == size - 1)
			return -EFBIG;
	}
	buf[len] = '\0';
	return 0;
}

static int read_path(struct cgroupfs *cg, const char *path, char *buf, size_t size)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		set_last_path(cg, path);
		return err;
	}
	err = read_fd(fd, buf, size);
	close(fd);
	if (err)
		set_last_path(cg, path);
	return err;
}

static int read_knob(struct cgroupfs *cg, enum cg_knob knob, const char *rel, char *buf,
		     size_t size)
{
	char path[PATH_MAX];
	int err;

	err = cgroupfs__knob_path(cg, knob, rel, path, sizeof(path));
	if (err)
		return err;
	return read_path(cg, path, buf, size);
}

/* cgroup files take one write(2) per value; O_TRUNC matters only for fake trees. */
static int write_path(struct cgroupfs *cg, const char *path, const char *val)
{
	size_t len = strlen(val);
	ssize_t n;
	int fd, err = 0;

	/* A zero-length write never reaches the kernel's handler: clear with a newline. */
	if (len == 0) {
		val = "\n";
		len = 1;
	}

	fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	n = write(fd, val, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	if (close(fd) && !err)
		err = -errno;
out:
	if (err) {
		set_last_path(cg, path);
		return err;
	}
	cg->nr_writes++;
	return 1;
}

static int write_knob(struct cgroupfs *cg, enum cg_knob knob, const char *rel, const char *val)
{
	char path[PATH_MAX];
	int err;

	err = cgroupfs__knob_path(cg, knob, rel, path, sizeof(path));
	if (err)
		return err;
	return write_path(cg, path, val);
}

/* ---- strict parsers ---- */

/* Digits up to the first char not a digit; *end points there. */
static int parse_digits(const char *s, const char **end, uint64_t *ret)
{
	uint64_t v = 0;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - (uint64_t)(*p - '0')) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*end = p;
	*ret = v;
	return 0;
}

static bool at_end(const char *p)
{
	return p[0] == '\0' || (p[0] == '\n' && p[1] == '\0');
}

static int parse_u64(const char *s, uint64_t *ret)
{
	const char *end;
	uint64_t v;
	int err;

	err = parse_digits(s, &end, &v);
	if (err || !at_end(end))
		return -EINVAL;
	*ret = v;
	return 0;
}

static int parse_s64(const char *s, int64_t *ret)
{
	bool neg = s[0] == '-';
	uint64_t v;
	int err;

	err = parse_u64(s + neg, &v);
	if (err || v > (uint64_t)INT64_MAX)
		return -EINVAL;
	*ret = neg ? -(int64_t)v : (int64_t)v;
	return 0;
}

/* v2 cpu.max: "max 100000" or "50000 100000". */
static int parse_cpu_max_v2(const char *s, struct cg_cpu_max *ret)
{
	const char *p = s;
	uint64_t quota, period;
	int err;

	if (strncmp(p, "max ", 4) == 0) {
		ret->quota_us = CG_QUOTA_UNLIMITED;
		p += 3;
	} else {
		err = parse_digits(p, &p, &quota);
		if (err || quota == 0 || quota > INT64_MAX)
			return -EINVAL;
		ret->quota_us = (int64_t)quota;
	}
	if (*p++ != ' ')
		return -EINVAL;
	err = parse_digits(p, &p, &period);
	if (err || period == 0 || !at_end(p))
		return -EINVAL;
	ret->period_us = period;
	return 0;
}

/*
 * Flat keyed file ("key value\n" lines, cpu.stat). Stores the values of the wanted keys and
 * sets bit i of *ret_found for keys[i]. Every line must be well formed, even unknown ones.
 */
static int parse_keyed(const char *s, const char *const *keys, unsigned int nr_keys, uint64_t *vals,
		       unsigned int *ret_found)
{
	unsigned int found = 0;
	const char *p = s, *key, *sp;
	size_t klen;
	uint64_t v;
	int err;

	while (*p) {
		key = p;
		sp = strchr(p, ' ');
		if (!sp || sp == p || memchr(p, '\n', (size_t)(sp - p)))
			return -EINVAL;
		klen = (size_t)(sp - key);
		err = parse_digits(sp + 1, &p, &v);
		if (err || (*p != '\n' && *p != '\0'))
			return -EINVAL;
		for (unsigned int i = 0; i < nr_keys; i++) {
			if (strlen(keys[i]) == klen && strncmp(key, keys[i], klen) == 0) {
				vals[i] = v;
				found |= 1U << i;
			}
		}
		if (*p == '\n')
			p++;
	}
	*ret_found = found;
	return 0;
}

enum { ST_USAGE, ST_PERIODS, ST_THROTTLED, ST_THROTTLED_TIME, ST_NR };

static int parse_cpu_stat_v2(const char *s, struct cg_cpu_stat *ret)
{
	static const char *const keys[ST_NR] = { "usage_usec", "nr_periods", "nr_throttled",
						 "throttled_usec" };
	uint64_t v[ST_NR] = { 0 };
	unsigned int found;
	int err;

	err = parse_keyed(s, keys, ST_NR, v, &found);
	if (err)
		return err;
	/* usage lines exist even without the cpu controller; throttling lines need it. */
	if (!(found & (1U << ST_USAGE)))
		return -EINVAL;
	ret->usage_ns = v[ST_USAGE] * 1000;
	ret->nr_periods = v[ST_PERIODS];
	ret->nr_throttled = v[ST_THROTTLED];
	ret->throttled_ns = v[ST_THROTTLED_TIME] * 1000;
	return 0;
}

/* v1 cpu.stat: all three throttling keys are always there. */
static int parse_throttle_v1(const char *stat, struct cg_cpu_stat *ret)
{
	static const char *const keys[] = { "nr_periods", "nr_throttled", "throttled_time" };
	uint64_t v[3] = { 0 };
	unsigned int found;
	int err;

	err = parse_keyed(stat, keys, 3, v, &found);
	if (err)
		return err;
	if (found != 7)
		return -EINVAL;
	ret->nr_periods = v[0];
	ret->nr_throttled = v[1];
	ret->throttled_ns = v[2];
	return 0;
}

/* ---- detection ---- */

static bool is_cgroup2(const char *path)
{
	struct statfs sfs;

	return statfs(path, &sfs) == 0 && sfs.f_type == CGROUP2_SUPER_MAGIC;
}

static bool path_exists(const char *dir, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
		return false;
	return stat(path, &st) == 0;
}

static bool is_dir_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* Assign each controller the first mount dir whose comma list names it ("cpu,cpuacct"). */
static void claim_ctrls(struct cgroupfs *cg, const char *name)
{
	char tmp[NAME_MAX + 1], *tok, *save = NULL;

	snprintf(tmp, sizeof(tmp), "%s", name);
	for (tok = strtok_r(tmp, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (int c = 0; c < CG_CTRL_NR; c++) {
			if (strcmp(tok, ctrl_names[c]) || cg->ctrl_dir[c][0])
				continue;
			snprintf(cg->ctrl_dir[c], sizeof(cg->ctrl_dir[c]), "%s/%s", cg->root, name);
		}
	}
}

/* Exact names first so "cpu" wins over "cpu,cpuacct" when both exist (same mount anyway). */
static int find_v1_ctrls(struct cgroupfs *cg)
{
	struct dirent *de;
	DIR *d;
	int found = 0;

	for (int c = 0; c < CG_CTRL_NR; c++) {
		if (path_exists(cg->root, ctrl_names[c]))
			claim_ctrls(cg, ctrl_names[c]);
	}
	d = opendir(cg->root);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !strchr(de->d_name, ','))
			continue;
		if (is_dir_at(dirfd(d), de->d_name))
			claim_ctrls(cg, de->d_name);
	}
	closedir(d);
	for (int c = 0; c < CG_CTRL_NR; c++)
		found += cg->ctrl_dir[c][0] != '\0';
	return found ? 0 : -EOPNOTSUPP;
}

static int detect_mode(struct cgroupfs *cg)
{
	char unified[PATH_MAX];

	if (is_cgroup2(cg->root))
		return CGFS_MODE_V2;
	snprintf(unified, sizeof(unified), "%s/unified", cg->root);
	if (is_cgroup2(unified))
		return CGFS_MODE_HYBRID;
	/* A plain directory: a fake tree built by the tests or a bind mount copy. */
	if (path_exists(cg->root, "cgroup.controllers"))
		return CGFS_MODE_V2;
	if (find_v1_ctrls(cg))
		return -EOPNOTSUPP;
	return path_exists(unified, "cgroup.controllers") ? CGFS_MODE_HYBRID : CGFS_MODE_V1;
}

int cgroupfs__open(const char *root, enum cgfs_mode mode, struct cgroupfs **ret)
{
	struct cgroupfs *cg;
	struct stat st;
	size_t len;
	int err;

	if (!root)
		root = DEFAULT_ROOT;
	cg = calloc(1, sizeof(*cg));
	if (!cg)
		return -ENOMEM;
	len = strlen(root);
	while (len > 1 && root[len - 1] == '/')
		len--;
	if (len == 0 || len >= sizeof(cg->root)) {
		err = -EINVAL;
		goto err_free;
	}
	memcpy(cg->root, root, len);
	if (stat(cg->root, &st)) {
		err = -errno;
		goto err_free;
	}
	if (!S_ISDIR(st.st_mode)) {
		err = -ENOTDIR;
		goto err_free;
	}
	if (mode == CGFS_MODE_AUTO) {
		err = detect_mode(cg);
		if (err < 0)
			goto err_free;
		mode = (enum cgfs_mode)err;
	}
	cg->mode = mode;
	if (mode == CGFS_MODE_V1 || mode == CGFS_MODE_HYBRID) {
		err = cg->ctrl_dir[CG_CTRL_CPU][0] ? 0 : find_v1_ctrls(cg);
		if (err)
			goto err_free;
	}
	if (mode == CGFS_MODE_V2)
		snprintf(cg->unified, sizeof(cg->unified), "%s", cg->root);
	else if (mode == CGFS_MODE_HYBRID)
		snprintf(cg->unified, sizeof(cg->unified), "%s/unified", cg->root);
	*ret = cg;
	return 0;
err_free:
	free(cg);
	return err;
}

static bool has_magic(const char *path, long magic)
{
	struct statfs sfs;

	return path && statfs(path, &sfs) == 0 && (long)sfs.f_type == magic;
}

int cgroupfs__ids_tree(const struct cgroupfs *cg, enum cg_ids want, enum cg_ids *ret_kind,
		       const char **ret_mount)
{
	const char *v1 = cg->ctrl_dir[CG_CTRL_CPU][0] ? cg->ctrl_dir[CG_CTRL_CPU] : NULL;
	const char *v2 = cg->unified[0] ? cg->unified : NULL;

	if (want == CG_IDS_AUTO)
		want = cg->mode == CGFS_MODE_V2 ? CG_IDS_V2 : CG_IDS_V1_CPU;
	/* BPF reads kernfs ids: only a real cgroup filesystem has them, never a fake tree. */
	if (want == CG_IDS_V2 && has_magic(v2, CGROUP2_SUPER_MAGIC)) {
		*ret_mount = v2;
	} else if (want == CG_IDS_V1_CPU && has_magic(v1, CGROUP_SUPER_MAGIC)) {
		*ret_mount = v1;
	} else {
		return -ENOENT;
	}
	*ret_kind = want;
	return 0;
}

int cg_v1_hierarchy_id(const char *proc_root, const char *ctrl, int *ret)
{
	char path[PATH_MAX], line[256], name[64];
	int hier, n, on, err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cgroups", proc_root ? proc_root : "/proc");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	/* "#subsys_name hierarchy num_cgroups enabled", then one line per controller */
	while (err && fgets(line, sizeof(line), f))
		if (sscanf(line, "%63s %d %d %d", name, &hier, &n, &on) == 4 &&
		    !strcmp(name, ctrl)) {
			*ret = hier;
			err = 0;
		}
	fclose(f);
	return err;
}

const char *cg_ids_name(enum cg_ids kind)
{
	return kind == CG_IDS_V2 ? "v2" : "v1-cpu";
}

void cgroupfs__free(struct cgroupfs *cg)
{
	free(cg);
}

enum cgfs_mode cgroupfs__mode(const struct cgroupfs *cg)
{
	return cg->mode;
}

bool cgroupfs__is_v2(const struct cgroupfs *cg)
{
	return cg->mode == CGFS_MODE_V2;
}

const char *cgroupfs__root(const struct cgroupfs *cg)
{
	return cg->root;
}

const char *cgroupfs__walk_root(const struct cgroupfs *cg)
{
	return hier_dir(cg, CG_CTRL_CPU);
}

const char *cgroupfs__unified_root(const struct cgroupfs *cg)
{
	return cg->unified[0] ? cg->unified : NULL;
}

const char *cgroupfs__ctrl_root(const struct cgroupfs *cg, enum cg_ctrl ctrl)
{
	if ((unsigned int)ctrl >= CG_CTRL_NR)
		return NULL;
	return hier_dir(cg, ctrl);
}

const char *cgroupfs__last_path(const struct cgroupfs *cg)
{
	return cg->last_path;
}

uint64_t cgroupfs__nr_writes(const struct cgroupfs *cg)
{
	return cg->nr_writes;
}

/* ---- typed knobs ---- */

/* Record which file held garbage: the read itself succeeded, so last_path is stale. */
static int parse_failed(struct cgroupfs *cg, enum cg_knob knob, const char *rel)
{
	cgroupfs__knob_path(cg, knob, rel, cg->last_path, sizeof(cg->last_path));
	return -EINVAL;
}

static int read_knob_u64(struct cgroupfs *cg, enum cg_knob knob, const char *rel, uint64_t *ret)
{
	char buf[64];
	int err;

	err = read_knob(cg, knob, rel, buf, sizeof(buf));
	if (err)
		return err;
	if (parse_u64(buf, ret))
		return parse_failed(cg, knob, rel);
	return 0;
}

/*
 * Garbage in the file (-EINVAL) does not block a write that would replace it; a missing file,
 * a missing controller or an I/O error does.
 */
static bool read_blocks_write(int err)
{
	return err && err != -EINVAL;
}

static int read_cpu_max_v2(struct cgroupfs *cg, const char *rel, struct cg_cpu_max *ret)
{
	char buf[64];
	int err;

	err = read_knob(cg, CG_KNOB_CPU_QUOTA, rel, buf, sizeof(buf));
	if (err)
		return err;
	if (parse_cpu_max_v2(buf, ret))
		return parse_failed(cg, CG_KNOB_CPU_QUOTA, rel);
	return 0;
}

static int read_cpu_max_v1(struct cgroupfs *cg, const char *rel, struct cg_cpu_max *ret)
{
	uint64_t period;
	int64_t quota;
	char buf[64];
	int err;

	err = read_knob(cg, CG_KNOB_CPU_QUOTA, rel, buf, sizeof(buf));
	if (err)
		return err;
	if (parse_s64(buf, &quota) || quota == 0 || (quota < 0 && quota != CG_QUOTA_UNLIMITED))
		return parse_failed(cg, CG_KNOB_CPU_QUOTA, rel);
	err = read_knob_u64(cg, CG_KNOB_CPU_PERIOD, rel, &period);
	if (err)
		return err;
	if (period == 0)
		return parse_failed(cg, CG_KNOB_CPU_PERIOD, rel);
	ret->quota_us = quota;
	ret->period_us = period;
	return 0;
}

int cgroupfs__read_cpu_max(struct cgroupfs *cg, const char *rel, struct cg_cpu_max *ret)
{
	if (cg->mode == CGFS_MODE_V2)
		return read_cpu_max_v2(cg, rel, ret);
	return read_cpu_max_v1(cg, rel, ret);
}

static bool cpu_max_valid(const struct cg_cpu_max *v)
{
	/* The kernel's CFS bandwidth limits: period 1 ms..1 s, quota at least 1 ms. */
	return v->period_us >= 1000 && v->period_us <= 1000000 &&
	       (v->quota_us == CG_QUOTA_UNLIMITED || v->quota_us >= 1000);
}

static int write_cpu_max_v2(struct cgroupfs *cg, const char *rel, const struct cg_cpu_max *v)
{
	struct cg_cpu_max cur;
	char buf[64];
	int err;

	err = read_cpu_max_v2(cg, rel, &cur);
	if (read_blocks_write(err))
		return err;
	if (!err && cur.quota_us == v->quota_us && cur.period_us == v->period_us)
		return 0;
	if (v->quota_us == CG_QUOTA_UNLIMITED)
		snprintf(buf, sizeof(buf), "max %" PRIu64, v->period_us);
	else
		snprintf(buf, sizeof(buf), "%" PRId64 " %" PRIu64, v->quota_us, v->period_us);
	return write_knob(cg, CG_KNOB_CPU_QUOTA, rel, buf);
}

static int write_cpu_max_v1(struct cgroupfs *cg, const char *rel, const struct cg_cpu_max *v)
{
	struct cg_cpu_max cur;
	bool known;
	char buf[32];
	int err, wrote = 0;

	err = read_cpu_max_v1(cg, rel, &cur);
	if (read_blocks_write(err))
		return err;
	known = err == 0;
	if (!known || cur.period_us != v->period_us) {
		snprintf(buf, sizeof(buf), "%" PRIu64, v->period_us);
		err = write_knob(cg, CG_KNOB_CPU_PERIOD, rel, buf);
		if (err < 0)
			return err;
		wrote = 1;
	}
	if (!known || cur.quota_us != v->quota_us) {
		snprintf(buf, sizeof(buf), "%" PRId64, v->quota_us);
		err = write_knob(cg, CG_KNOB_CPU_QUOTA, rel, buf);
		if (err < 0)
			return err;
		wrote = 1;
	}
	return wrote;
}

int cgroupfs__write_cpu_max(struct cgroupfs *cg, const char *rel, const struct cg_cpu_max *v)
{
	if (!cpu_max_valid(v))
		return -EINVAL;
	if (cg->mode == CGFS_MODE_V2)
		return write_cpu_max_v2(cg, rel, v);
	return write_cpu_max_v1(cg, rel, v);
}

/* Write value unless the knob already holds it. */
static int write_knob_u64(struct cgroupfs *cg, enum cg_knob knob, const char *rel, uint64_t value)
{
	uint64_t cur;
	char buf[32];
	int err;

	err = read_knob_u64(cg, knob, rel, &cur);
	if (read_blocks_write(err))
		return err;
	if (!err && cur == value)
		return 0;
	snprintf(buf, sizeof(buf), "%" PRIu64, value);
	return write_knob(cg, knob, rel, buf);
}

int cgroupfs__read_cpu_weight(struct cgroupfs *cg, const char *rel, struct cg_cpu_weight *ret)
{
	uint64_t v;
	int err;

	err = read_knob_u64(cg, CG_KNOB_CPU_SHARES, rel, &v);
	if (err)
		return err;
	ret->value = v;
	ret->is_weight = cg->mode == CGFS_MODE_V2;
	return 0;
}

int cgroupfs__write_cpu_shares(struct cgroupfs *cg, const char *rel, uint64_t shares,
			       enum cg_weight_formula formula)
{
	uint64_t value;

	if (shares == 0)
		return -EINVAL;
	if (shares < 2)
		shares = 2;
	if (shares > 262144)
		shares = 262144;
	value = cg->mode == CGFS_MODE_V2 ? cg_shares_to_weight(shares, formula) : shares;
	return write_knob_u64(cg, CG_KNOB_CPU_SHARES, rel, value);
}

int cgroupfs__write_cpu_weight_raw(struct cgroupfs *cg, const char *rel,
				   const struct cg_cpu_weight *w)
{
	if (w->is_weight != (cg->mode == CGFS_MODE_V2))
		return -EINVAL;
	return write_knob_u64(cg, CG_KNOB_CPU_SHARES, rel, w->value);
}

int cgroupfs__read_cpu_idle(struct cgroupfs *cg, const char *rel, bool *ret)
{
	uint64_t v;
	int err;

	err = read_knob_u64(cg, CG_KNOB_CPU_IDLE, rel, &v);
	if (err)
		return err;
	if (v > 1)
		return parse_failed(cg, CG_KNOB_CPU_IDLE, rel);
	*ret = v;
	return 0;
}

int cgroupfs__write_cpu_idle(struct cgroupfs *cg, const char *rel, bool idle)
{
	return write_knob_u64(cg, CG_KNOB_CPU_IDLE, rel, idle);
}

int cgroupfs__read_cpu_burst(struct cgroupfs *cg, const char *rel, uint64_t *ret_us)
{
	return read_knob_u64(cg, CG_KNOB_CPU_BURST, rel, ret_us);
}

int cgroupfs__write_cpu_burst(struct cgroupfs *cg, const char *rel, uint64_t burst_us)
{
	return write_knob_u64(cg, CG_KNOB_CPU_BURST, rel, burst_us);
}

int cgroupfs__read_cpuset(struct cgroupfs *cg, enum cg_knob knob, const char *rel,
			  struct cpumask *ret)
{
	char buf[SMALL_BUF];
	int err;

	if (knob != CG_KNOB_CPUSET_CPUS && knob != CG_KNOB_CPUSET_EFFECTIVE)
		return -EINVAL;
	err = read_knob(cg, knob, rel, buf, sizeof(buf));
	if (err)
		return err;
	if (cpulist_parse(buf, ret))
		return parse_failed(cg, knob, rel);
	return 0;
}

int cgroupfs__write_cpuset(struct cgroupfs *cg, const char *rel, const struct cpumask *cpus)
{
	char buf[CPULIST_BUF_SIZE];
	struct cpumask cur;
	int err;

	err = cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_CPUS, rel, &cur);
	if (read_blocks_write(err))
		return err;
	if (!err && cpumask_equal(&cur, cpus))
		return 0;
	err = cpulist_format(cpus, buf, sizeof(buf));
	if (err < 0)
		return err;
	return write_knob(cg, CG_KNOB_CPUSET_CPUS, rel, buf);
}

int cgroupfs__read_memory_max(struct cgroupfs *cg, const char *rel, uint64_t *ret)
{
	char buf[64];
	uint64_t v;
	int err;

	err = read_knob(cg, CG_KNOB_MEMORY_MAX, rel, buf, sizeof(buf));
	if (err)
		return err;
	if (cg->mode == CGFS_MODE_V2 && at_end(buf + 3) && strncmp(buf, "max", 3) == 0) {
		*ret = CG_MEMORY_UNLIMITED;
		return 0;
	}
	if (parse_u64(buf, &v))
		return parse_failed(cg, CG_KNOB_MEMORY_MAX, rel);
	if (cg->mode != CGFS_MODE_V2 && v >= CG_V1_MEMORY_UNLIMITED_MIN)
		v = CG_MEMORY_UNLIMITED;
	*ret = v;
	return 0;
}

int cgroupfs__write_memory_max(struct cgroupfs *cg, const char *rel, uint64_t bytes)
{
	uint64_t cur;
	char buf[32];
	int err;

	err = cgroupfs__read_memory_max(cg, rel, &cur);
	if (read_blocks_write(err))
		return err;
	if (!err && cur == bytes)
		return 0;
	if (bytes == CG_MEMORY_UNLIMITED)
		snprintf(buf, sizeof(buf), "%s", cg->mode == CGFS_MODE_V2 ? "max" : "-1");
	else
		snprintf(buf, sizeof(buf), "%" PRIu64, bytes);
	return write_knob(cg, CG_KNOB_MEMORY_MAX, rel, buf);
}

/* v1 cpu.stat's throttling counters into @v (usage_ns untouched). */
static int read_throttle_v1(struct cgroupfs *cg, const char *rel, struct cg_cpu_stat *v)
{
	char buf[SMALL_BUF];
	int err = read_knob(cg, CG_KNOB_CPU_STAT, rel, buf, sizeof(buf));

	if (err)
		return err;
	if (parse_throttle_v1(buf, v))
		return parse_failed(cg, CG_KNOB_CPU_STAT, rel);
	return 0;
}

int cgroupfs__read_cpu_stat(struct cgroupfs *cg, const char *rel, struct cg_cpu_stat *ret)
{
	struct cg_cpu_stat v = { 0 };
	char buf[SMALL_BUF];
	int err;

	if (cg->mode != CGFS_MODE_V2) {
		err = read_knob_u64(cg, CG_KNOB_CPU_USAGE, rel, &v.usage_ns);
		if (!err)
			err = read_throttle_v1(cg, rel, &v);
		if (!err)
			*ret = v;
		return err;
	}
	err = read_knob(cg, CG_KNOB_CPU_STAT, rel, buf, sizeof(buf));
	if (err)
		return err;
	if (parse_cpu_stat_v2(buf, ret))
		return parse_failed(cg, CG_KNOB_CPU_STAT, rel);
	return 0;
}

int cgroupfs__read_throttle(struct cgroupfs *cg, const char *rel, struct cg_cpu_stat *ret)
{
	struct cg_cpu_stat v = { 0 };
	int err;

	if (cg->mode == CGFS_MODE_V2)
		return cgroupfs__read_cpu_stat(cg, rel, ret);
	err = read_throttle_v1(cg, rel, &v);
	if (!err)
		*ret = v;
	return err;
}

/* Whole file of unknown size (cgroupfs reports st_size 0) into a malloc'd string. */
static int read_path_alloc(struct cgroupfs *cg, const char *path, char **ret)
{
	size_t size = SMALL_BUF;
	char *buf = NULL, *tmp;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		goto out;
	}
	for (;;) {
		tmp = realloc(buf, size);
		if (!tmp) {
			err = -ENOMEM;
			goto out;
		}
		buf = tmp;
		err = read_fd(fd, buf, size);
		if (err != -EFBIG)
			break;
		size *= 2;
	}
out:
	if (fd >= 0)
		close(fd);
	if (err) {
		set_last_path(cg, path);
		free(buf);
		return err;
	}
	*ret = buf;
	return 0;
}

/* One positive pid per line. Returns the number of lines. */
static int parse_pids(const char *s, pid_t *pids, size_t cap)
{
	const char *p = s;
	uint64_t v;
	int n = 0;

	while (*p) {
		if (parse_digits(p, &p, &v) || v == 0 || v > INT_MAX)
			return -EINVAL;
		if (*p != '\n' && *p != '\0')
			return -EINVAL;
		if ((size_t)n < cap)
			pids[n] = (pid_t)v;
		if (n == INT_MAX)
			return -EOVERFLOW;
		n++;
		if (*p == '\n')
			p++;
	}
	return n;
}

int cgroupfs__read_pids(struct cgroupfs *cg, enum cg_knob knob, const char *rel, pid_t *pids,
			size_t cap)
{
	char path[PATH_MAX], *buf;
	int err;

	if (knob != CG_KNOB_PROCS && knob != CG_KNOB_THREADS)
		return -EINVAL;
	err = cgroupfs__knob_path(cg, knob, rel, path, sizeof(path));
	if (err)
		return err;
	err = read_path_alloc(cg, path, &buf);
	if (err)
		return err;
	err = parse_pids(buf, pids, cap);
	free(buf);
	if (err == -EINVAL)
		set_last_path(cg, path);
	return err;
}

int cgroupfs__attach_pid(struct cgroupfs *cg, const char *rel, pid_t pid)
{
	char path[PATH_MAX], buf[16];
	int err, nr = 0;

	if (pid <= 0)
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%d", (int)pid);
	if (cg->mode == CGFS_MODE_V2)
		return write_knob(cg, CG_KNOB_PROCS, rel, buf);
	for (int c = 0; c < CG_CTRL_NR; c++) {
		if (!cg->ctrl_dir[c][0])
			continue;
		err = build_path(cg, (enum cg_ctrl)c, rel, "cgroup.procs", path, sizeof(path));
		if (err)
			return err;
		err = write_path(cg, path, buf);
		if (err < 0)
			return err;
		nr++;
	}
	return nr ? 1 : -EOPNOTSUPP;
}

/* ---- hot-path stat reader ---- */

static int open_knob(struct cgroupfs *cg, enum cg_knob knob, const char *rel, int *ret_fd)
{
	char path[PATH_MAX];
	int fd, err;

	err = cgroupfs__knob_path(cg, knob, rel, path, sizeof(path));
	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		set_last_path(cg, path);
		return err;
	}
	*ret_fd = fd;
	return 0;
}

int cg_stat_reader__open(struct cgroupfs *cg, const char *rel, struct cg_stat_reader **ret)
{
	struct cg_stat_reader *r;
	int err;

	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->usage_fd = -1;
	r->stat_fd = -1;
	r->is_v2 = cg->mode == CGFS_MODE_V2;
	if (!r->is_v2) {
		err = open_knob(cg, CG_KNOB_CPU_USAGE, rel, &r->usage_fd);
		if (err)
			goto err_free;
	}
	err = open_knob(cg, CG_KNOB_CPU_STAT, rel, &r->stat_fd);
	if (err)
		goto err_free;
	*ret = r;
	return 0;
err_free:
	cg_stat_reader__free(r);
	return err;
}

int cg_stat_reader__read(struct cg_stat_reader *r, struct cg_cpu_stat *ret)
{
	char buf[SMALL_BUF];
	struct cg_cpu_stat v;
	int err;

	err = read_fd(r->stat_fd, buf, sizeof(buf));
	if (err)
		return err;
	if (r->is_v2)
		err = parse_cpu_stat_v2(buf, &v);
	else
		err = parse_throttle_v1(buf, &v);
	if (err)
		return err;
	if (!r->is_v2) {
		err = read_fd(r->usage_fd, buf, sizeof(buf));
		if (err)
			return err;
		if (parse_u64(buf, &v.usage_ns))
			return -EINVAL;
	}
	*ret = v;
	return 0;
}

void cg_stat_reader__free(struct cg_stat_reader *r)
{
	if (!r)
		return;
	if (r->usage_fd >= 0)
		close(r->usage_fd);
	if (r->stat_fd >= 0)
		close(r->stat_fd);
	free(r);
}

/* ---- /proc/<pid>/cgroup ---- */

int cg_proc_line_parse(const char *line, unsigned int *ret_id, char *ctrls, size_t ctrls_size,
		       char *path, size_t path_size)
{
	const char *p, *c, *end;
	size_t clen, plen;
	uint64_t id;

	if (!line || parse_digits(line, &p, &id) || id > UINT_MAX || *p != ':')
		return -EINVAL;
	c = p + 1;
	p = strchr(c, ':');
	if (!p || memchr(c, '\n', (size_t)(p - c)))
		return -EINVAL;
	clen = (size_t)(p - c);
	p++;
	end = strchr(p, '\n');
	plen = end ? (size_t)(end - p) : strlen(p);
	if ((end && end[1] != '\0') || plen == 0 || p[0] != '/')
		return -EINVAL;
	if (clen >= ctrls_size || plen >= path_size)
		return -ENAMETOOLONG;
	memcpy(ctrls, c, clen);
	ctrls[clen] = '\0';
	memcpy(path, p, plen);
	path[plen] = '\0';
	*ret_id = (unsigned int)id;
	return 0;
}
