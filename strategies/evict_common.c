// SPDX-License-Identifier: GPL-2.0
/* What the eviction strategies share: koordlet's victim orders and its release loop. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "strategy.h"

uint64_t evict_interval_ns(const struct strategy_input *in)
{
	double s = in->snap->interval_s > 0 ? in->snap->interval_s : 1.0;

	return (uint64_t)(s * 1e9);
}

int evict_last(const struct strategy_input *in, const char *uid, enum win_metric m, double *ret)
{
	if (!in->win)
		return -ENODATA;
	return window__query(in->win, uid, m, WIN_LAST, 2 * evict_interval_ns(in), in->now_ns, ret);
}

int evict_avg(const struct strategy_input *in, const char *uid, enum win_metric m,
	      uint64_t window_ns, double *ret)
{
	if (!in->win)
		return -ENODATA;
	return window__query(in->win, uid, m, WIN_AVG, window_ns, in->now_ns, ret);
}

static int cmp_uid(const void *key, const void *elem)
{
	return strcmp(key, *(const char *const *)elem);
}

bool evict_pending_has(const struct evict_pending *p, const char *uid)
{
	if (!p || !p->nr)
		return false;
	return bsearch(uid, p->uids, p->nr, sizeof(*p->uids), cmp_uid) != NULL;
}

static int cmp3(double a, double b)
{
	return a < b ? -1 : a > b;
}

static const struct pod *vpod(const struct evict_victim *v)
{
	return v->sp->pod;
}

/* Both have spec.priority and they differ: the lower first (koordinator reads the spec only). */
static int spec_priority(const struct evict_victim *a, const struct evict_victim *b)
{
	if (!vpod(a)->has_priority || !vpod(b)->has_priority)
		return 0;
	return cmp3(vpod(a)->priority, vpod(b)->priority);
}

/* memoryevict getSortedBEPodInfos: usage descending, pods without usage last by name desc. */
static int cmp_be_memory(const void *pa, const void *pb)
{
	const struct evict_victim *a = pa, *b = pb;
	int r = spec_priority(a, b);

	if (r)
		return r;
	if (a->usage && b->usage)
		return cmp3(b->usage, a->usage);
	if (!a->usage && !b->usage)
		return -strcmp(vpod(a)->name, vpod(b)->name);
	return a->usage ? -1 : 1;
}

/* cpuevict getBEPodEvictInfoAndSort: usage/request ratio descending. */
static int cmp_be_cpu(const void *pa, const void *pb)
{
	const struct evict_victim *a = pa, *b = pb;
	int r = spec_priority(a, b);

	return r ? r : cmp3(b->usage_ratio, a->usage_ratio);
}

/* getPodEvictInfoAndSortByPriority: eviction-priority, priority, koordinator.sh/priority asc. */
static int cmp_priority(const void *pa, const void *pb)
{
	const struct evict_victim *a = pa, *b = pb;
	int r = cmp3(vpod(a)->evict.priority, vpod(b)->evict.priority);

	if (!r)
		r = cmp3(a->priority, b->priority);
	if (!r)
		r = cmp3((double)a->label_priority, (double)b->label_priority);
	return r ? r : cmp3(b->usage, a->usage);
}

void evict_sort_be_memory(struct evict_victim *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_be_memory);
}

void evict_sort_be_cpu(struct evict_victim *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_be_cpu);
}

void evict_sort_by_priority(struct evict_victim *v, size_t n)
{
	if (n)
		qsort(v, n, sizeof(*v), cmp_priority);
}

static bool counted(const char *const *done, size_t n, const char *uid)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(done[i], uid))
			return true;
	return false;
}

static void add_request(struct evict_list *out, const struct evict_task *t,
			const struct evict_victim *v)
{
	const struct pod *p = vpod(v);
	struct evict_request *r;

	if (out->nr == EVICT_MAX) {
		out->nr_dropped++;
		return;
	}
	r = &out->req[out->nr++];
	memset(r, 0, sizeof(*r));
	snprintf(r->uid, sizeof(r->uid), "%s", p->uid);
	snprintf(r->namespace, sizeof(r->namespace), "%s", p->namespace ? p->namespace : "");
	snprintf(r->name, sizeof(r->name), "%s", p->name ? p->name : "");
	r->strategy = t->strategy;
	r->is_bare_metal = p->is_static;
	snprintf(r->reason, sizeof(r->reason), "trigger by koordlet feature %s: %s",
		 pod_evictor_name(t->strategy), t->why);
}

/* Every victim's release counts for each target some task asks for (koordlet aggregates). */
static void release(double *released, const bool *asked, const struct evict_victim *v)
{
	for (unsigned int k = 0; k < 2; k++)
		if (asked[k])
			released[k] += v->release[k];
}

size_t evict_run_tasks(const struct evict_task *tasks, size_t nr, const struct evict_pending *pend,
		       struct evict_list *out)
{
	const char *done[EVICT_MAX * 4];
	double released[2] = { 0, 0 };
	bool asked[2] = { false, false };
	size_t nr_done = 0, before = out->nr;

	for (size_t i = 0; i < nr; i++)
		if (tasks[i].amount > 0 && tasks[i].target < 2)
			asked[tasks[i].target] = true;
	for (size_t i = 0; i < nr; i++) {
		const struct evict_task *t = &tasks[i];

		if (t->amount <= 0 || t->target >= 2 || released[t->target] >= t->amount)
			continue;
		for (size_t j = 0; j < t->nr_victims && released[t->target] < t->amount; j++) {
			const struct evict_victim *v = &t->victims[j];

			if (counted(done, nr_done, vpod(v)->uid))
				continue;
			if (nr_done < sizeof(done) / sizeof(done[0]))
				done[nr_done++] = vpod(v)->uid;
			if (!evict_pending_has(pend, vpod(v)->uid))
				add_request(out, t, v);
			release(released, asked, v);
		}
	}
	return out->nr - before;
}
