// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgfiles.h"
#include "cgid.h"

static void clear(struct cgfiles *f)
{
	for (size_t i = 0; i < f->n; i++)
		free((char *)f->v[i].path);
	f->n = 0;
}

void cgfiles_fini(struct cgfiles *f)
{
	clear(f);
	free(f->v);
	*f = (struct cgfiles){ 0 };
}

/* Walk paths are relative without a leading '/'; the snapshot's start with one. */
static int add(struct cgfiles *f, const char *path, bool walked)
{
	char *p;

	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct cg_file_stat *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	if (asprintf(&p, "%s%s", walked ? "/" : "", path) < 0)
		return -ENOMEM;
	f->v[f->n++] = (struct cg_file_stat){ .path = p };
	return 0;
}

static int add_all(struct cgfiles *f, const struct cgwalk_result *walk, const struct pod_list *pods)
{
	int err = 0;

	for (size_t i = 0; walk && !err && i < walk->nr_pods; i++) {
		const struct cgwalk_pod *w = &walk->pods[i];

		err = add(f, w->path, true);
		for (size_t j = 0; !err && j < w->nr_containers; j++)
			err = add(f, w->containers[j].path, true);
	}
	for (size_t i = 0; pods && !err && i < pods->nr_pods; i++)
		if (pods->pods[i].is_static && pods->pods[i].nr_cgroups)
			err = add(f, pods->pods[i].cgroups[0], false);
	return err;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct cg_file_stat *)a)->path,
		      ((const struct cg_file_stat *)b)->path);
}

static void dedup(struct cgfiles *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->n; i++) {
		if (n && !strcmp(f->v[n - 1].path, f->v[i].path)) {
			free((char *)f->v[i].path);
			continue;
		}
		f->v[n++] = f->v[i];
	}
	f->n = n;
}

static int stat_value(const char *buf, const char *key, __u64 *ret)
{
	size_t len = strlen(key);

	for (const char *l = buf; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, key, len) && l[len] == ' ') {
			char *end;

			*ret = strtoull(l + len + 1, &end, 10);
			return end == l + len + 1 ? -EINVAL : 0;
		}
	}
	return -ENODATA;
}

int cgfiles_parse_memory_stat(const char *buf, bool is_v2, __u64 *ret)
{
	static const char *const v1[] = { "total_active_anon", "total_inactive_anon",
					  "total_unevictable", NULL };
	static const char *const v2[] = { "anon", "unevictable", NULL };
	const char *const *keys = is_v2 ? v2 : v1;
	__u64 sum = 0, v;
	int err;

	for (size_t i = 0; keys[i]; i++) {
		err = stat_value(buf, keys[i], &v);
		if (err)
			return err;
		sum += v;
	}
	*ret = sum;
	return 0;
}

/* The memory controller's memory.stat of the same path (v1: its own hierarchy). */
static void read_memory(struct cgroupfs *cg, struct cg_file_stat *s)
{
	char dir[PATH_MAX], path[PATH_MAX + 16], buf[8192];
	size_t n;
	FILE *f;

	if (cgroupfs__dir(cg, CG_CTRL_MEMORY, s->path, dir, sizeof(dir)))
		return;
	snprintf(path, sizeof(path), "%s/memory.stat", dir);
	f = fopen(path, "re");
	if (!f)
		return;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	s->has_memory = !cgfiles_parse_memory_stat(buf, cgroupfs__is_v2(cg), &s->mem_used_bytes);
}

static void read_one(struct cgroupfs *cg, const char *mount, struct cg_file_stat *s)
{
	char path[PATH_MAX];
	struct cg_cpu_stat cs;
	struct cpumask m;

	if (snprintf(path, sizeof(path), "%s%s", mount, s->path) < (int)sizeof(path) &&
	    cgid_of_path(path, &s->cgid))
		s->cgid = 0;
	if (!cg)
		return;
	if (!cgroupfs__read_cpu_stat(cg, s->path, &cs)) {
		s->has_cpu_stat = true;
		s->nr_periods = cs.nr_periods;
		s->nr_throttled = cs.nr_throttled;
		s->throttled_ns = cs.throttled_ns;
	}
	if (!cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_EFFECTIVE, s->path, &m) &&
	    cpulist_format(&m, s->cpuset, sizeof(s->cpuset)) < 0)
		s->cpuset[0] = '\0';
	read_memory(cg, s);
}

int cgfiles_read(struct cgfiles *f, struct cgroupfs *cg, const char *mount,
		 const struct cgwalk_result *walk, const struct pod_list *pods)
{
	int err;

	clear(f);
	err = add_all(f, walk, pods);
	if (err) {
		clear(f);
		return err;
	}
	if (!f->n)
		return 0;
	qsort(f->v, f->n, sizeof(*f->v), cmp_path);
	dedup(f);
	for (size_t i = 0; i < f->n; i++)
		read_one(cg, mount, &f->v[i]);
	return 0;
}
