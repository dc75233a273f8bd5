// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "snapshot.h"

struct snap_strings *snap_strings__new(size_t cap)
{
	struct snap_strings *ss = calloc(1, sizeof(*ss) + cap * sizeof(ss->v[0]));

	if (!ss)
		return NULL;
	ss->refs = 1;
	ss->cap = cap;
	return ss;
}

struct snap_strings *snap_strings__ref(struct snap_strings *ss)
{
	if (ss)
		ss->refs++;
	return ss;
}

void snap_strings__put(struct snap_strings *ss)
{
	if (!ss || --ss->refs)
		return;
	for (size_t i = 0; i < ss->n; i++)
		free(ss->v[i]);
	free(ss);
}

struct snap_hist_totals *snap_hist_totals__new(size_t n)
{
	struct snap_hist_totals *t = malloc(sizeof(*t) + n * SNAP_RQ_BUCKETS * sizeof(t->v[0]));

	if (!t)
		return NULL;
	t->refs = 1;
	t->n = n;
	return t;
}

struct snap_hist_totals *snap_hist_totals__ref(struct snap_hist_totals *t)
{
	if (t)
		t->refs++;
	return t;
}

void snap_hist_totals__put(struct snap_hist_totals *t)
{
	if (t && !--t->refs)
		free(t);
}

struct snapshot *snapshot__new(void)
{
	struct snapshot *s = calloc(1, sizeof(*s));

	if (s)
		s->refs = 1;
	return s;
}

struct snapshot *snapshot__ref(struct snapshot *s)
{
	if (s)
		s->refs++;
	return s;
}

static void free_cgids(struct snap_pod *p)
{
	if (p->cgids != p->cgids_inline)
		free(p->cgids);
}

static void free_pod(struct snap_pod *p)
{
	for (size_t i = 0; i < p->nr_ctrs; i++)
		free(p->ctrs[i].cgroup);
	free(p->ctrs);
	free(p->cgroup);
	free_cgids(p);
}

void snapshot__put(struct snapshot *s)
{
	if (!s || --s->refs)
		return;
	for (size_t i = 0; i < s->nr_pods; i++) {
		if (s->arena)
			free_cgids(&s->pods[i]);
		else
			free_pod(&s->pods[i]);
	}
	if (s->arena)
		free(s->arena);
	else
		free(s->pods);
	for (size_t i = 0; i < s->nr_others; i++)
		free(s->others[i].cgroup);
	free(s->others);
	free(s->rdt);
	pod_list__put(s->pods_list);
	snap_strings__put(s->paths);
	snap_strings__put(s->cpusets);
	snap_hist_totals__put(s->hist_totals);
	free(s->hist_own);
	cpumgr_state__put(s->node.cpumgr);
	free(s);
}

const struct snap_pod *snapshot__pod(const struct snapshot *s, const char *uid)
{
	for (size_t i = 0; i < s->nr_pods; i++)
		if (s->pods[i].pod && !strcmp(s->pods[i].pod->uid, uid))
			return &s->pods[i];
	return NULL;
}
