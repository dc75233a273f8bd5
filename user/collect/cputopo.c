// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "cputopo.h"

#define MAX_CACHE_INDEX 16

/* ---- small sysfs readers ---- */

/* -ENOENT passes through silently: optional files are the caller's call. */
static int read_small(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		err = -errno;
	else if ((size_t)n == size - 1)
		err = -EFBIG;
	else
		buf[n] = '\0';
	close(fd);
	return err;
}

/* A decimal int with an optional '-' and one trailing newline; nothing else. */
static int parse_int(const char *s, int *ret)
{
	const char *p = s + (s[0] == '-');
	long v = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return -EINVAL;
	}
	if (!(p[0] == '\0' || (p[0] == '\n' && p[1] == '\0')))
		return -EINVAL;
	*ret = s[0] == '-' ? -(int)v : (int)v;
	return 0;
}

static int read_int(const char *path, int *ret)
{
	char buf[32];
	int err;

	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	err = parse_int(buf, ret);
	if (err)
		log_warn("malformed sysfs file", "path=%s", path);
	return err;
}

static int read_cpulist(const char *path, struct cpumask *ret)
{
	char buf[CPULIST_BUF_SIZE];
	int err;

	err = read_small(path, buf, sizeof(buf));
	if (err)
		return err;
	err = cpulist_parse(buf, ret);
	if (err)
		log_warn("malformed cpu list", "path=%s", path);
	return err;
}

/* Optional file: missing -> TOPO_ID_NONE, garbage -> -EINVAL. */
static int read_opt_int(const char *path, int *ret)
{
	int err = read_int(path, ret);

	if (err == -ENOENT) {
		*ret = TOPO_ID_NONE;
		return 0;
	}
	return err;
}

/* ---- per CPU ---- */

static int read_l3_id(const char *cpu_dir, int *ret)
{
	char path[PATH_MAX];
	int level, err;

	*ret = TOPO_ID_NONE;
	for (int i = 0; i < MAX_CACHE_INDEX; i++) {
		snprintf(path, sizeof(path), "%s/cache/index%d/level", cpu_dir, i);
		err = read_int(path, &level);
		if (err == -ENOENT)
			return 0; /* indexes are dense: the first gap ends the list */
		if (err)
			return err;
		if (level != 3)
			continue;
		snprintf(path, sizeof(path), "%s/cache/index%d/id", cpu_dir, i);
		return read_opt_int(path, ret);
	}
	return 0;
}

static int load_cpu(const char *root, struct topo_cpu *c)
{
	char dir[PATH_MAX / 2], path[PATH_MAX];
	int err;

	snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu%d", root, c->cpu);
	snprintf(path, sizeof(path), "%s/topology/core_id", dir);
	err = read_opt_int(path, &c->core_id);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/topology/physical_package_id", dir);
	err = read_opt_int(path, &c->socket_id);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/topology/thread_siblings_list", dir);
	err = read_cpulist(path, &c->siblings);
	if (err == -ENOENT) {
		cpumask_zero(&c->siblings);
		cpumask_set(&c->siblings, (unsigned int)c->cpu);
	} else if (err) {
		return err;
	}
	return read_l3_id(dir, &c->l3_id);
}

/* node/nodeN/cpulist first; then the cpuN/nodeM links some kernels expose instead. */
static int load_nodes(const char *root, struct topology *topo)
{
	char dir[PATH_MAX / 2], path[PATH_MAX];
	struct cpumask cpus;
	struct dirent *de;
	bool any = false;
	DIR *d;
	int node, cpu, err = 0;

	snprintf(dir, sizeof(dir), "%s/devices/system/node", root);
	d = opendir(dir);
	while (d && !err && (de = readdir(d))) {
		if (strncmp(de->d_name, "node", 4) || parse_int(de->d_name + 4, &node) || node < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpulist", dir, de->d_name);
		err = read_cpulist(path, &cpus);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		for (size_t i = 0; !err && i < topo->nr_cpus; i++) {
			if (cpumask_test(&cpus, (unsigned int)topo->cpus[i].cpu)) {
				topo->cpus[i].node_id = node;
				any = true;
			}
		}
	}
	if (d)
		closedir(d);
	if (err)
		return err;
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		struct topo_cpu *c = &topo->cpus[i];

		if (c->node_id != TOPO_ID_NONE)
			continue;
		cpu = c->cpu;
		snprintf(dir, sizeof(dir), "%s/devices/system/cpu/cpu%d", root, cpu);
		d = opendir(dir);
		while (d && (de = readdir(d))) {
			if (strncmp(de->d_name, "node", 4) == 0 &&
			    parse_int(de->d_name + 4, &node) == 0 && node >= 0) {
				c->node_id = node;
				any = true;
			}
		}
		if (d)
			closedir(d);
	}
	/* No NUMA sysfs at all (CONFIG_NUMA=n): one node, as lscpu reports it. */
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		if (topo->cpus[i].node_id == TOPO_ID_NONE)
			topo->cpus[i].node_id = any ? TOPO_ID_NONE : 0;
	}
	return 0;
}

/* Distinct values of a per-CPU field (pairs when key2 is used), O(n^2) on <= 1024 CPUs. */
static unsigned int count_distinct(const struct topology *topo, size_t off, size_t off2)
{
	unsigned int n = 0;

	for (size_t i = 0; i < topo->nr_cpus; i++) {
		const char *a = (const char *)&topo->cpus[i];
		int v = *(const int *)(a + off), v2 = *(const int *)(a + off2);
		bool seen = v == TOPO_ID_NONE;

		for (size_t j = 0; !seen && j < i; j++) {
			const char *b = (const char *)&topo->cpus[j];

			seen = *(const int *)(b + off) == v && *(const int *)(b + off2) == v2;
		}
		n += !seen;
	}
	return n;
}

static void summarise(struct topology *topo)
{
	size_t sock = offsetof(struct topo_cpu, socket_id);

	topo->nr_sockets = count_distinct(topo, sock, sock);
	topo->nr_cores = count_distinct(topo, offsetof(struct topo_cpu, core_id), sock);
	topo->nr_nodes = count_distinct(topo, offsetof(struct topo_cpu, node_id),
					offsetof(struct topo_cpu, node_id));
	topo->nr_l3 = count_distinct(topo, offsetof(struct topo_cpu, l3_id),
				     offsetof(struct topo_cpu, l3_id));
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		struct cpumask on;

		cpumask_and(&on, &topo->cpus[i].siblings, &topo->online);
		if (cpumask_count(&on) > 1)
			topo->has_smt = true;
	}
}

int cputopo_read_online(const char *sysfs_root, struct cpumask *ret)
{
	char path[PATH_MAX];

	if (!sysfs_root)
		sysfs_root = "/sys";
	if (snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sysfs_root) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return read_cpulist(path, ret);
}

int topology__load(const char *sysfs_root, struct topology **ret)
{
	struct topology *topo;
	int cpu, err;

	if (!sysfs_root)
		sysfs_root = "/sys";
	/* Leaves room for the longest file path built below it. */
	if (strlen(sysfs_root) > PATH_MAX / 4)
		return -ENAMETOOLONG;
	topo = calloc(1, sizeof(*topo));
	if (!topo)
		return -ENOMEM;
	err = cputopo_read_online(sysfs_root, &topo->online);
	if (err)
		goto err_free;
	topo->cpus = calloc(cpumask_count(&topo->online) + 1, sizeof(*topo->cpus));
	if (!topo->cpus) {
		err = -ENOMEM;
		goto err_free;
	}
	cpumask_for_each(cpu, &topo->online) {
		struct topo_cpu *c = &topo->cpus[topo->nr_cpus++];

		c->cpu = cpu;
		c->node_id = TOPO_ID_NONE;
		err = load_cpu(sysfs_root, c);
		if (err)
			goto err_free;
	}
	err = load_nodes(sysfs_root, topo);
	if (err)
		goto err_free;
	summarise(topo);
	*ret = topo;
	return 0;
err_free:
	topology__free(topo);
	return err;
}

/* ---- kubelet cpu_manager_state ---- */

#define CPUMGR_MAX_BYTES (4 << 20) /* kubelet writes a few KB; bound a runaway file */

static int read_whole(const char *path, char **ret, size_t *ret_len)
{
	struct stat st;
	char *buf;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || st.st_size > CPUMGR_MAX_BYTES) {
		err = st.st_size > CPUMGR_MAX_BYTES ? -EFBIG : -errno;
		close(fd);
		return err;
	}
	buf = malloc((size_t)st.st_size + 1);
	n = buf ? read(fd, buf, (size_t)st.st_size + 1) : -1;
	if (n < 0 || n > st.st_size) {
		err = !buf ? -ENOMEM : n < 0 ? -errno : -EAGAIN; /* grew while read: try later */
		free(buf);
	} else {
		buf[n] = '\0';
		*ret = buf;
		*ret_len = (size_t)n;
	}
	close(fd);
	return err;
}

int cpumgr_state__load(const char *path, struct cpumgr_state **ret)
{
	char *buf = NULL, msg[256] = "";
	size_t len = 0;
	int err;

	if (!path)
		path = CPUMGR_STATE_DEFAULT_PATH;
	*ret = NULL;
	err = read_whole(path, &buf, &len);
	if (err)
		return err == -ENOENT ? 0 : err;
	err = cpumgr_state_parse(buf, len, ret, msg, sizeof(msg));
	if (err == -EINVAL)
		log_warn("malformed cpu_manager_state", "path=%s reason=\"%s\"", path, msg);
	free(buf);
	return err;
}

struct cpumgr_watch {
	char path[PATH_MAX];
	uint64_t check_ns, checked_ns;
	struct timespec mtime;
	bool checked;
	struct cpumgr_state *st;
};

int cpumgr_watch__new(const char *path, uint64_t check_ns, struct cpumgr_watch **ret)
{
	struct cpumgr_watch *w;

	if (!path)
		path = CPUMGR_STATE_DEFAULT_PATH;
	if (strlen(path) >= sizeof(w->path))
		return -ENAMETOOLONG;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	snprintf(w->path, sizeof(w->path), "%s", path);
	w->check_ns = check_ns;
	*ret = w;
	return 0;
}

void cpumgr_watch__free(struct cpumgr_watch *w)
{
	if (!w)
		return;
	cpumgr_state__put(w->st);
	free(w);
}

static bool same_time(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec == b->tv_sec && a->tv_nsec == b->tv_nsec;
}

struct cpumgr_state *cpumgr_watch__poll(struct cpumgr_watch *w, uint64_t now_ns)
{
	struct cpumgr_state *st = NULL;
	struct stat sta;

	if (w->checked && now_ns - w->checked_ns < w->check_ns)
		return w->st;
	w->checked = true;
	w->checked_ns = now_ns;
	if (stat(w->path, &sta)) {
		/* kubelet without the static policy keeps no checkpoint: no state, not an error */
		cpumgr_state__put(w->st);
		w->st = NULL;
		w->mtime = (struct timespec){ 0 };
		return NULL;
	}
	if (same_time(&sta.st_mtim, &w->mtime))
		return w->st;
	w->mtime = sta.st_mtim;
	if (cpumgr_state__load(w->path, &st))
		return w->st; /* logged; keep the last good state */
	cpumgr_state__put(w->st);
	w->st = st;
	return st;
}
