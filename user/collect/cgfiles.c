// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgfiles.h"
#include "cgid.h"

static void clear(struct cg_file_stat *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free((char *)v[i].path);
}

void cgfiles_fini(struct cgfiles *f)
{
	clear(f->v, f->n);
	free(f->v);
	*f = (struct cgfiles){ 0 };
}

struct list {
	struct cg_file_stat *v;
	size_t n, cap;
};

/* Walk paths are relative without a leading '/'; the snapshot's start with one. */
static int add(struct list *l, const char *path, bool walked, bool is_pod)
{
	char *p;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		struct cg_file_stat *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->v = v;
		l->cap = cap;
	}
	if (asprintf(&p, "%s%s", walked ? "/" : "", path) < 0)
		return -ENOMEM;
	l->v[l->n++] = (struct cg_file_stat){ .path = p, .is_pod = is_pod };
	return 0;
}

static int add_all(struct list *l, const struct cgwalk_result *walk, const struct pod_list *pods)
{
	int err = 0;

	for (size_t i = 0; walk && !err && i < walk->nr_pods; i++) {
		const struct cgwalk_pod *w = &walk->pods[i];

		err = add(l, w->path, true, true);
		for (size_t j = 0; !err && j < w->nr_containers; j++)
			err = add(l, w->containers[j].path, true, false);
	}
	for (size_t i = 0; pods && !err && i < pods->nr_pods; i++)
		if (pods->pods[i].is_static && pods->pods[i].nr_cgroups)
			err = add(l, pods->pods[i].cgroups[0], false, true);
	return err;
}

static int cmp_path(const void *a, const void *b)
{
	return strcmp(((const struct cg_file_stat *)a)->path,
		      ((const struct cg_file_stat *)b)->path);
}

static void dedup(struct list *l)
{
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++) {
		if (n && !strcmp(l->v[n - 1].path, l->v[i].path)) {
			l->v[n - 1].is_pod |= l->v[i].is_pod;
			free((char *)l->v[i].path);
			continue;
		}
		l->v[n++] = l->v[i];
	}
	l->n = n;
}

static void resolve_id(const char *mount, struct cg_file_stat *s)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s%s", mount, s->path) >= (int)sizeof(path) ||
	    cgid_of_path(path, &s->cgid))
		s->cgid = 0;
}

/*
 * The cgroups changed: resolve each path's id again (a path can be a new cgroup by the same
 * name) and keep the last readings where it is the same cgroup (or both ids are unknown), so
 * the next read has a previous one. Both lists are sorted by path.
 */
static void carry_over(struct list *l, const char *mount, const struct cg_file_stat *old,
		       size_t nold)
{
	size_t j = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct cg_file_stat *s = &l->v[i];
		int c = 1;

		resolve_id(mount, s);
		while (j < nold && (c = strcmp(old[j].path, s->path)) < 0)
			j++;
		if (j < nold && !c && old[j].cgid == s->cgid) {
			struct cg_file_stat fresh = *s;

			*s = old[j];
			s->path = fresh.path;
			s->is_pod = fresh.is_pod;
		}
	}
}

/* A new list of the cgroups a pod can own; -ENOMEM keeps the old one. */
static int rebuild(struct cgfiles *f, const char *mount, const struct cgwalk_result *walk,
		   const struct pod_list *pods)
{
	struct list l = { 0 };
	int err = add_all(&l, walk, pods);

	if (err) {
		clear(l.v, l.n);
		free(l.v);
		return err;
	}
	if (l.n) {
		qsort(l.v, l.n, sizeof(*l.v), cmp_path);
		dedup(&l);
	}
	carry_over(&l, mount, f->v, f->n);
	clear(f->v, f->n);
	free(f->v);
	f->v = l.v;
	f->n = l.n;
	f->cap = l.cap;
	return 0;
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

static void read_throttle(struct cgroupfs *cg, struct cg_file_stat *s)
{
	struct cg_cpu_stat cs;

	/* this reading becomes the previous one of the next: a throttled ratio needs two */
	s->has_prev = s->has_cpu_stat;
	s->prev_periods = s->nr_periods;
	s->prev_throttled = s->nr_throttled;
	s->has_cpu_stat = !cgroupfs__read_throttle(cg, s->path, &cs);
	if (s->has_cpu_stat) {
		s->nr_periods = cs.nr_periods;
		s->nr_throttled = cs.nr_throttled;
		s->throttled_ns = cs.throttled_ns;
	}
}

static void read_cpuset(struct cgroupfs *cg, struct cg_file_stat *s)
{
	struct cpumask m;

	s->cpuset[0] = '\0';
	if (!cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_EFFECTIVE, s->path, &m) &&
	    cpulist_format(&m, s->cpuset, sizeof(s->cpuset)) < 0)
		s->cpuset[0] = '\0';
}

/*
 * What the strategies need on the stat cadence: the throttling of a cgroup that has had a
 * quota (no CFS period ever ran without one) and, while memory eviction is on, a pod's memory.
 * The rest (cpusets, memory otherwise, cgroups that never had a quota) is for display and the
 * slow pass: at 1000 pods, memory.stat alone was 30 % of the agent's time on a 100 ms tick.
 */
static void read_one(struct cgroupfs *cg, struct cg_file_stat *s, unsigned int what,
		     uint64_t now_ns)
{
	bool all = (what & CGFILES_ALL) || !s->read_ns;

	if (all || (s->has_cpu_stat && s->nr_periods))
		read_throttle(cg, s);
	if (all)
		read_cpuset(cg, s);
	if (all || (s->is_pod && (what & CGFILES_MEMORY))) {
		s->has_memory = false;
		read_memory(cg, s);
	}
	s->read_ns = now_ns;
}

int cgfiles_read(struct cgfiles *f, struct cgroupfs *cg, const char *mount,
		 const struct cgwalk_result *walk, const struct pod_list *pods, unsigned int what,
		 uint64_t now_ns)
{
	int err = 0;

	if (what & CGFILES_PATHS)
		err = rebuild(f, mount, walk, pods);
	for (size_t i = 0; cg && i < f->n; i++) {
		struct cg_file_stat *s = &f->v[i];

		if ((what & (CGFILES_VALUES | CGFILES_ALL)) || !s->read_ns)
			read_one(cg, s, what, now_ns);
	}
	return err;
}
