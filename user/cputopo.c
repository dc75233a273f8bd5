// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
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

int topology__load(const char *sysfs_root, struct topology **ret)
{
	struct topology *topo;
	char path[PATH_MAX];
	int cpu, err;

	if (!sysfs_root)
		sysfs_root = "/sys";
	/* Leaves room for the longest file path built below it. */
	if (strlen(sysfs_root) > PATH_MAX / 4)
		return -ENAMETOOLONG;
	topo = calloc(1, sizeof(*topo));
	if (!topo)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/devices/system/cpu/online", sysfs_root);
	err = read_cpulist(path, &topo->online);
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

void topology__free(struct topology *topo)
{
	if (!topo)
		return;
	free(topo->cpus);
	free(topo);
}

const struct topo_cpu *topology__cpu(const struct topology *topo, unsigned int cpu)
{
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		if (topo->cpus[i].cpu == (int)cpu)
			return &topo->cpus[i];
	}
	return NULL;
}

static void cpus_where(const struct topology *topo, size_t off, int id, struct cpumask *ret)
{
	cpumask_zero(ret);
	if (id == TOPO_ID_NONE)
		return;
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		if (*(const int *)((const char *)&topo->cpus[i] + off) == id)
			cpumask_set(ret, (unsigned int)topo->cpus[i].cpu);
	}
}

void topology__node_cpus(const struct topology *topo, int node, struct cpumask *ret)
{
	cpus_where(topo, offsetof(struct topo_cpu, node_id), node, ret);
}

void topology__socket_cpus(const struct topology *topo, int socket, struct cpumask *ret)
{
	cpus_where(topo, offsetof(struct topo_cpu, socket_id), socket, ret);
}

void topology__l3_cpus(const struct topology *topo, int l3, struct cpumask *ret)
{
	cpus_where(topo, offsetof(struct topo_cpu, l3_id), l3, ret);
}

/* ---- kubelet cpu_manager_state ---- */

static int bad_field(const char *path, const char *field, const char *why)
{
	log_warn("malformed cpu_manager_state", "path=%s field=%s reason=\"%s\"", path, field, why);
	return -EINVAL;
}

static bool uid_ok(const char *uid)
{
	size_t len = strlen(uid);

	if (len == 0 || len >= sizeof(((struct cpumgr_entry *)0)->pod_uid))
		return false;
	return strspn(uid, "0123456789abcdef-") == len;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct cpumgr_entry *x = a, *y = b;
	int c = strcmp(x->pod_uid, y->pod_uid);

	return c ? c : strcmp(x->container, y->container);
}

static int parse_entries(const char *path, json_t *entries, struct cpumgr_state *st)
{
	const char *uid, *name;
	json_t *pod, *cpus;
	size_t n = 0;

	if (!json_is_object(entries))
		return bad_field(path, "entries", "not an object");
	json_object_foreach(entries, uid, pod) {
		if (!json_is_object(pod))
			return bad_field(path, "entries.<pod>", "not an object");
		n += json_object_size(pod);
	}
	st->entries = calloc(n + 1, sizeof(*st->entries));
	if (!st->entries)
		return -ENOMEM;
	json_object_foreach(entries, uid, pod) {
		if (!uid_ok(uid))
			return bad_field(path, "entries.<pod>", "pod uid not [0-9a-f-]");
		json_object_foreach(pod, name, cpus) {
			struct cpumgr_entry *e = &st->entries[st->nr_entries];

			if (!json_is_string(cpus) ||
			    cpulist_parse(json_string_value(cpus), &e->cpus))
				return bad_field(path, "entries.<pod>.<container>",
						 "not a cpu list string");
			if (name[0] == '\0' || strlen(name) >= sizeof(e->container))
				return bad_field(path, "entries.<pod>.<container>",
						 "bad container name");
			snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", uid);
			snprintf(e->container, sizeof(e->container), "%s", name);
			st->nr_entries++;
		}
	}
	if (st->nr_entries)
		qsort(st->entries, st->nr_entries, sizeof(*st->entries), cmp_entry);
	return 0;
}

static int parse_state(const char *path, json_t *root, struct cpumgr_state *st)
{
	json_t *v;

	if (!json_is_object(root))
		return bad_field(path, "(root)", "not an object");
	v = json_object_get(root, "policyName");
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) >= sizeof(st->policy))
		return bad_field(path, "policyName", "missing or not a short string");
	snprintf(st->policy, sizeof(st->policy), "%s", json_string_value(v));
	v = json_object_get(root, "defaultCpuSet");
	if (!json_is_string(v) || cpulist_parse(json_string_value(v), &st->default_cpus))
		return bad_field(path, "defaultCpuSet", "missing or not a cpu list string");
	v = json_object_get(root, "checksum");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad_field(path, "checksum", "not a non-negative integer");
		st->checksum = (uint64_t)json_integer_value(v);
		st->has_checksum = true;
	}
	v = json_object_get(root, "entries");
	if (v && !json_is_null(v))
		return parse_entries(path, v, st);
	return 0;
}

int cpumgr_state__load(const char *path, struct cpumgr_state **ret)
{
	struct cpumgr_state *st = NULL;
	json_error_t jerr;
	json_t *root = NULL;
	struct stat sb;
	FILE *f;
	int err;

	if (!path)
		path = CPUMGR_STATE_DEFAULT_PATH;
	*ret = NULL;
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	if (fstat(fileno(f), &sb) == 0 && sb.st_size == 0) {
		err = 0;
		goto out;
	}
	root = json_loadf(f, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		log_warn("malformed cpu_manager_state", "path=%s line=%d reason=\"%s\"", path,
			 jerr.line, jerr.text);
		err = -EINVAL;
		goto out;
	}
	st = calloc(1, sizeof(*st));
	if (!st) {
		err = -ENOMEM;
		goto out;
	}
	err = parse_state(path, root, st);
	if (err)
		goto out;
	*ret = st;
	st = NULL;
out:
	cpumgr_state__free(st);
	json_decref(root);
	fclose(f);
	return err;
}

void cpumgr_state__free(struct cpumgr_state *st)
{
	if (!st)
		return;
	free(st->entries);
	free(st);
}

void cpumgr_state__exclusive_cpus(const struct cpumgr_state *st, struct cpumask *ret)
{
	cpumask_zero(ret);
	for (size_t i = 0; st && i < st->nr_entries; i++)
		cpumask_or(ret, ret, &st->entries[i].cpus);
}
