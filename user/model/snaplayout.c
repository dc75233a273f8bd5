// SPDX-License-Identifier: GPL-2.0
/* snapbuild's map of cgroups to pods and containers, kept across ticks (snaplayout.h). */
#define _GNU_SOURCE /* asprintf */
#include <errno.h>
#include <stddef.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snaplayout.h"

void layout_clear(struct layout *l)
{
	snap_strings__put(l->paths);
	free(l->ent);
	free(l->ctr_base);
	free(l->owners);
	free(l->ids);
	free(l->miss);
	free(l->acc);
	free(l->touched);
	free(l->cum);
	free(l->moved);
	snap_hist_totals__put(l->totals);
	pod_list__put(l->pods);
	*l = (struct layout){ 0 };
}

static bool same_key(const struct layout *l, const struct snapbuild_input *in,
		     const struct pod_list *pods)
{
	return l->valid && l->pods == pods && l->walk == in->walk && l->walk_gen == in->walk_gen &&
	       l->files == in->files && l->nr_files == in->nr_files &&
	       l->files_gen == in->files_gen;
}

static int cmp_file(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cg_file_stat *)elem)->path);
}

static const struct cg_file_stat *file_of(const struct snapbuild_input *in, const char *path)
{
	if (!path || !in->nr_files)
		return NULL;
	return bsearch(path, in->files, in->nr_files, sizeof(*in->files), cmp_file);
}

/* The walk's paths are relative; an entity's is "/" + that, owned by the layout. */
static char *own_path(struct layout *l, const char *rel)
{
	char *p;

	if (l->paths->n == l->paths->cap || asprintf(&p, "/%s", rel) < 0)
		return NULL;
	l->paths->v[l->paths->n++] = p;
	return p;
}

static void set_ent(struct layout *l, const struct snapbuild_input *in, long e, char *cgroup)
{
	struct lay_ent *x = &l->ent[e];

	x->cgroup = cgroup;
	x->file = file_of(in, cgroup);
	x->cgid = x->file ? x->file->cgid : 0;
}

static void add_owner(struct layout *l, const char *path, long e, size_t pod)
{
	if (path)
		l->owners[l->nowners++] = (struct lay_owner){ .path = path, .ent = e, .pod = pod };
}

static void place_containers(struct layout *l, const struct snapbuild_input *in, size_t i,
			     const struct pod *pod, const struct cgwalk_pod *w)
{
	for (size_t j = 0; j < pod->nr_containers; j++) {
		const struct pod_container *c = &pod->containers[j];
		long e = (long)(l->npods + l->ctr_base[i] + j);
		char *path = NULL;

		for (size_t k = 0; w && c->id && k < w->nr_containers; k++)
			if (!strcmp(w->containers[k].id, c->id))
				path = own_path(l, w->containers[k].path);
		set_ent(l, in, e, path);
		add_owner(l, path, e, i);
	}
}

/* A static group owns all its cgroups; a pod its own, and its containers theirs. */
static void place_pod(struct layout *l, const struct snapbuild_input *in, size_t i,
		      const struct pod *pod)
{
	const struct cgwalk_pod *w = NULL;

	if (pod->is_static) {
		set_ent(l, in, (long)i, pod->nr_cgroups ? pod->cgroups[0] : NULL);
		for (size_t k = 0; k < pod->nr_cgroups; k++)
			add_owner(l, pod->cgroups[k], (long)i, i);
		return;
	}
	if (in->walk)
		w = cgwalk_result__find(in->walk, pod->uid);
	set_ent(l, in, (long)i, w ? own_path(l, w->path) : NULL);
	add_owner(l, l->ent[i].cgroup, (long)i, i);
	place_containers(l, in, i, pod, w);
}

static int cmp_owner(const void *a, const void *b)
{
	return strcmp(((const struct lay_owner *)a)->path, ((const struct lay_owner *)b)->path);
}

static int alloc_layout(struct layout *l, const struct pod_list *pods)
{
	size_t nown = 1;

	for (size_t i = 0; pods && i < pods->nr_pods; i++) {
		if (!pods->pods[i].is_static)
			l->nctrs += pods->pods[i].nr_containers;
		nown += 1 + pods->pods[i].nr_containers + pods->pods[i].nr_cgroups;
	}
	l->npods = pods ? pods->nr_pods : 0;
	l->ent = calloc(l->npods + l->nctrs + 1, sizeof(*l->ent));
	l->ctr_base = calloc(l->npods + 1, sizeof(*l->ctr_base));
	l->paths = snap_strings__new(l->npods + l->nctrs + 1);
	l->owners = calloc(nown, sizeof(*l->owners));
	l->acc = calloc(l->npods + l->nctrs + 1, sizeof(*l->acc));
	l->touched = calloc(l->npods + l->nctrs + 1, sizeof(*l->touched));
	l->cum = calloc(l->npods + l->nctrs + 1, sizeof(*l->cum));
	l->moved = calloc(l->npods + l->nctrs + 1, sizeof(*l->moved));
	if (!l->ent || !l->ctr_base || !l->paths || !l->owners || !l->acc || !l->touched ||
	    !l->cum || !l->moved)
		return -ENOMEM;
	return 0;
}

static int build(struct layout *l, const struct snapbuild_input *in, struct pod_list *pods)
{
	size_t base = 0;
	int err = alloc_layout(l, pods);

	if (err)
		return err;
	for (size_t i = 0; i < l->npods; i++) {
		l->ctr_base[i] = base;
		if (!pods->pods[i].is_static)
			base += pods->pods[i].nr_containers;
		place_pod(l, in, i, &pods->pods[i]);
	}
	if (l->nowners)
		qsort(l->owners, l->nowners, sizeof(*l->owners), cmp_owner);
	return 0;
}

static const struct lay_owner *find_owner(const struct layout *l, const char *path);

/*
 * A pod or container keeps its counters since start across a change of the pod list or the
 * walk (Prometheus reads a drop as a counter reset): found by its cgroup in the old layout.
 */
static void carry_cum(struct layout *n, const struct layout *old)
{
	for (size_t e = 0; old->valid && e < n->npods + n->nctrs; e++) {
		const struct lay_owner *o;

		if (!n->ent[e].cgroup || !(o = find_owner(old, n->ent[e].cgroup)) || o->ent < 0)
			continue;
		n->cum[e] = old->cum[o->ent];
	}
}

int layout_update(struct layout *l, const struct snapbuild_input *in, struct pod_list *pods)
{
	struct layout n = { 0 };
	int err;

	if (same_key(l, in, pods))
		return 0;
	err = build(&n, in, pods);
	if (err) {
		layout_clear(&n);
		return err;
	}
	carry_cum(&n, l);
	n.valid = true;
	n.pods = pods ? pod_list__ref(pods) : NULL;
	n.walk = in->walk;
	n.walk_gen = in->walk_gen;
	n.files = in->files;
	n.nr_files = in->nr_files;
	n.files_gen = in->files_gen;
	layout_clear(l);
	*l = n;
	return 0;
}

/*
 * Only the accumulators the last tick charged are zeroed (all 2000 of 1000 pods were 2.6 MB a
 * tick while each held a histogram). Pods' own accumulators also take their containers'
 * (fold), so they are zeroed as touched.
 */
void layout_begin(struct layout *l)
{
	for (size_t i = 0; i < l->ntouched; i++)
		cg_acc_clear(&l->acc[l->touched[i]]);
	l->ntouched = 0;
	l->cursor = 0;
	l->nmiss = 0;
}

struct cg_acc *layout_acc(struct layout *l, long e)
{
	struct cg_acc *a = &l->acc[e];

	if (!a->any)
		l->touched[l->ntouched++] = e;
	return a;
}

static const struct lay_owner *find_owner(const struct layout *l, const char *path)
{
	struct lay_owner key = { .path = path };

	if (!l->nowners)
		return NULL;
	return bsearch(&key, l->owners, l->nowners, sizeof(*l->owners), cmp_owner);
}

/* The owner of @path: the deepest registered path that is @path or one of its parents. */
static const struct lay_owner *owner_of(const struct layout *l, const char *path)
{
	char buf[PATH_MAX];
	const struct lay_owner *o;
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	for (;;) {
		o = find_owner(l, buf);
		if (o)
			return o;
		slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return NULL;
		*slash = '\0';
	}
}

static void add_miss(struct layout *l, const struct lay_id *id)
{
	if (l->nmiss == l->miss_cap) {
		size_t cap = l->miss_cap ? 2 * l->miss_cap : 64;
		struct lay_id *v = realloc(l->miss, cap * sizeof(*v));

		if (!v)
			return; /* found by path again next tick */
		l->miss = v;
		l->miss_cap = cap;
	}
	l->miss[l->nmiss++] = *id;
}

long layout_owner(struct layout *l, __u64 cgid, const char *path, size_t *pod)
{
	const struct lay_owner *o;
	struct lay_id id;

	while (l->cursor < l->nids && l->ids[l->cursor].cgid < cgid)
		l->cursor++;
	if (l->cursor < l->nids && l->ids[l->cursor].cgid == cgid) {
		*pod = l->ids[l->cursor].pod;
		return l->ids[l->cursor].ent;
	}
	o = owner_of(l, path);
	id = (struct lay_id){ .cgid = cgid, .ent = o ? o->ent : -1, .pod = o ? o->pod : 0 };
	add_miss(l, &id);
	*pod = id.pod;
	return id.ent;
}

/* Old ids still in the maps, and the new ones: both sorted, so one merge. */
static void merge_ids(struct layout *l, const struct cg_delta *cgs, size_t n, struct lay_id *out)
{
	size_t i = 0, m = 0, k = 0;

	for (size_t c = 0; c < n; c++) {
		__u64 id = cgs[c].d.cgid;

		while (i < l->nids && l->ids[i].cgid < id)
			i++;
		while (m < l->nmiss && l->miss[m].cgid < id)
			m++;
		if (i < l->nids && l->ids[i].cgid == id)
			out[k++] = l->ids[i];
		else if (m < l->nmiss && l->miss[m].cgid == id)
			out[k++] = l->miss[m];
	}
	l->nids = k;
}

int layout_end(struct layout *l, const struct cg_delta *cgs, size_t n)
{
	struct lay_id *out;

	if (!l->nmiss && l->nids <= n)
		return 0; /* nothing new; ids the maps dropped go with the next new one */
	out = malloc((n ? n : 1) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	merge_ids(l, cgs, n, out);
	free(l->ids);
	l->ids = out;
	return 0;
}
