// SPDX-License-Identifier: GPL-2.0
/* The plan: one desired value per (cgroup, knob), with provenance and precedence. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgvalue.h"
#include "plan.h"

static const char *const knob_names[PLAN_KNOB_NR] = {
	[PLAN_KNOB_CPUSET] = "cpuset",	       [PLAN_KNOB_CFS_QUOTA] = "cfs_quota",
	[PLAN_KNOB_SHARES] = "shares",	       [PLAN_KNOB_IDLE] = "idle",
	[PLAN_KNOB_MEMORY_MAX] = "memory_max", [PLAN_KNOB_CFS_BURST] = "cfs_burst",
};

void plan_init(struct plan *p)
{
	memset(p, 0, sizeof(*p));
}

void plan_fini(struct plan *p)
{
	free(p->entries);
	plan_rdt_fini(&p->rdt);
	plan_init(p);
}

void plan_reset(struct plan *p)
{
	p->nr = 0;
	p->nr_overridden = 0;
	plan_rdt_reset(&p->rdt);
}

const char *plan_knob_name(enum plan_knob knob)
{
	return (unsigned int)knob < PLAN_KNOB_NR ? knob_names[knob] : "?";
}

int plan_knob_parse(const char *s, enum plan_knob *ret)
{
	for (int i = 0; i < PLAN_KNOB_NR; i++) {
		if (!strcmp(s, knob_names[i])) {
			*ret = (enum plan_knob)i;
			return 0;
		}
	}
	return -EINVAL;
}

unsigned int plan_cgroup_depth(const char *cgroup)
{
	unsigned int n = 0;

	for (const char *c = cgroup; *c; c++)
		if (*c == '/' && c[1] && c[1] != '/')
			n++;
	/* "a/b" without a leading slash has as many levels as "/a/b" */
	if (cgroup[0] && cgroup[0] != '/')
		n++;
	return n;
}

/* The strategies build paths from snapshot data: refuse anything that could leave the tree. */
static bool path_ok(const char *cg)
{
	return cg && cg[0] == '/' && strlen(cg) < PLAN_CGROUP_MAX && cgpath_is_safe(cg);
}

static struct plan_entry *find(const struct plan *p, const char *cgroup, enum plan_knob knob)
{
	for (size_t i = 0; i < p->nr; i++)
		if (p->entries[i].knob == knob && !strcmp(p->entries[i].cgroup, cgroup))
			return &p->entries[i];
	return NULL;
}

const struct plan_entry *plan_find(const struct plan *p, const char *cgroup, enum plan_knob knob)
{
	return find(p, cgroup, knob);
}

/* The entry to fill for (cgroup, knob): *ret NULL when an earlier request wins. */
static int slot(struct plan *p, const char *cgroup, enum plan_knob knob, struct plan_entry **ret)
{
	struct plan_entry *e = find(p, cgroup, knob);

	*ret = NULL;
	if (e) {
		p->nr_overridden++;
		if (p->prio > e->prio)
			*ret = e;
		return 0;
	}
	if (p->nr == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 32;
		void *n = realloc(p->entries, cap * sizeof(*p->entries));

		if (!n)
			return -ENOMEM;
		p->entries = n;
		p->cap = cap;
	}
	*ret = &p->entries[p->nr++];
	return 0;
}

static int set_va(struct plan *p, const char *cgroup, enum plan_knob knob,
		  const struct plan_value *v, const char *why_fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

/* Infinity for quotas (-1 is unlimited, the loosest). */
static int64_t quota_order(int64_t q)
{
	return q < 0 ? INT64_MAX : q;
}

/* @v merged into the planned @e, the tighter of the two per knob; false when @e stays. */
static bool tighter(const struct plan_entry *e, const struct plan_value *v, struct plan_value *ret)
{
	*ret = e->v;
	switch (e->knob) {
	case PLAN_KNOB_CPUSET:
		cpumask_and(&ret->cpus, &e->v.cpus, &v->cpus);
		/* an empty cpuset is no value: the planned set stays */
		if (cpumask_empty(&ret->cpus) || cpumask_equal(&ret->cpus, &e->v.cpus))
			return false;
		return true;
	case PLAN_KNOB_CFS_QUOTA:
		if (quota_order(v->quota_us) >= quota_order(e->v.quota_us))
			return false;
		ret->quota_us = v->quota_us;
		return true;
	case PLAN_KNOB_SHARES:
		ret->shares = v->shares < e->v.shares ? v->shares : e->v.shares;
		return v->shares < e->v.shares;
	case PLAN_KNOB_IDLE:
		ret->idle = true;
		return v->idle && !e->v.idle;
	case PLAN_KNOB_MEMORY_MAX:
		ret->mem_bytes = v->mem_bytes < e->v.mem_bytes ? v->mem_bytes : e->v.mem_bytes;
		return v->mem_bytes < e->v.mem_bytes;
	case PLAN_KNOB_CFS_BURST:
		ret->burst_us = v->burst_us < e->v.burst_us ? v->burst_us : e->v.burst_us;
		return v->burst_us < e->v.burst_us;
	default:
		return false;
	}
}

static void fill(struct plan_entry *e, const struct plan *p, const char *cgroup,
		 enum plan_knob knob, const struct plan_value *v, const char *why_fmt, va_list ap)
	__attribute__((format(printf, 6, 0)));

static void fill(struct plan_entry *e, const struct plan *p, const char *cgroup,
		 enum plan_knob knob, const struct plan_value *v, const char *why_fmt, va_list ap)
{
	memset(e, 0, sizeof(*e));
	snprintf(e->cgroup, sizeof(e->cgroup), "%s", cgroup);
	e->knob = knob;
	e->v = *v;
	e->strategy = p->strategy ? p->strategy : "?";
	e->prio = p->prio;
	vsnprintf(e->why, sizeof(e->why), why_fmt, ap);
}

static int tighten_va(struct plan *p, const char *cgroup, enum plan_knob knob,
		      const struct plan_value *v, const char *why_fmt, va_list ap)
	__attribute__((format(printf, 5, 0)));

static int tighten_va(struct plan *p, const char *cgroup, enum plan_knob knob,
		      const struct plan_value *v, const char *why_fmt, va_list ap)
{
	struct plan_entry *e = find(p, cgroup, knob);
	struct plan_value m;
	int prio = p->prio, err;

	if (!e) {
		err = slot(p, cgroup, knob, &e);
		if (err || !e)
			return err;
		fill(e, p, cgroup, knob, v, why_fmt, ap);
		return 0;
	}
	if (!tighter(e, v, &m)) {
		p->nr_overridden++;
		return 0;
	}
	prio = e->prio > prio ? e->prio : prio; /* a later plain request still may not loosen it */
	fill(e, p, cgroup, knob, &m, why_fmt, ap);
	e->prio = prio;
	return 0;
}

static int set_va(struct plan *p, const char *cgroup, enum plan_knob knob,
		  const struct plan_value *v, const char *why_fmt, va_list ap)
{
	struct plan_entry *e;
	int err;

	if (!path_ok(cgroup) || (unsigned int)knob >= PLAN_KNOB_NR)
		return -EINVAL;
	if (p->tighten)
		return tighten_va(p, cgroup, knob, v, why_fmt, ap);
	err = slot(p, cgroup, knob, &e);
	if (err || !e)
		return err;
	fill(e, p, cgroup, knob, v, why_fmt, ap);
	return 0;
}

int plan_copy(struct plan *dst, const struct plan *src)
{
	if (dst->cap < src->nr) {
		void *n = realloc(dst->entries, src->nr * sizeof(*dst->entries));

		if (!n)
			return -ENOMEM;
		dst->entries = n;
		dst->cap = src->nr;
	}
	if (src->nr)
		memcpy(dst->entries, src->entries, src->nr * sizeof(*dst->entries));
	dst->nr = src->nr;
	dst->nr_overridden = src->nr_overridden;
	return plan_rdt_copy(&dst->rdt, &src->rdt);
}

int plan_set(struct plan *p, const char *cgroup, enum plan_knob knob, const struct plan_value *v,
	     const char *why_fmt, ...)
{
	va_list ap;
	int err;

	va_start(ap, why_fmt);
	err = set_va(p, cgroup, knob, v, why_fmt, ap);
	va_end(ap);
	return err;
}

int plan_set_cpuset(struct plan *p, const char *cgroup, const struct cpumask *cpus, const char *why)
{
	struct plan_value v = { .cpus = *cpus };

	return plan_set(p, cgroup, PLAN_KNOB_CPUSET, &v, "%s", why);
}

int plan_set_quota(struct plan *p, const char *cgroup, int64_t quota_us, const char *why)
{
	struct plan_value v = { .quota_us = quota_us, .period_us = PLAN_PERIOD_KEEP };

	return plan_set(p, cgroup, PLAN_KNOB_CFS_QUOTA, &v, "%s", why);
}

int plan_set_shares(struct plan *p, const char *cgroup, uint64_t shares, const char *why)
{
	struct plan_value v = { .shares = shares };

	return plan_set(p, cgroup, PLAN_KNOB_SHARES, &v, "%s", why);
}

int plan_set_idle(struct plan *p, const char *cgroup, bool idle, const char *why)
{
	struct plan_value v = { .idle = idle };

	return plan_set(p, cgroup, PLAN_KNOB_IDLE, &v, "%s", why);
}

int plan_set_memory(struct plan *p, const char *cgroup, uint64_t bytes, const char *why)
{
	struct plan_value v = { .mem_bytes = bytes };

	return plan_set(p, cgroup, PLAN_KNOB_MEMORY_MAX, &v, "%s", why);
}

int plan_set_burst(struct plan *p, const char *cgroup, uint64_t burst_us, const char *why)
{
	struct plan_value v = { .burst_us = burst_us };

	return plan_set(p, cgroup, PLAN_KNOB_CFS_BURST, &v, "%s", why);
}

int plan_value_format(enum plan_knob knob, const struct plan_value *v, char *buf, size_t size)
{
	switch (knob) {
	case PLAN_KNOB_CPUSET:
		return cpulist_format(&v->cpus, buf, size);
	case PLAN_KNOB_CFS_QUOTA:
		if (v->quota_us < 0)
			return snprintf(buf, size, "max");
		return snprintf(buf, size, "%lld", (long long)v->quota_us);
	case PLAN_KNOB_SHARES:
		return snprintf(buf, size, "%llu", (unsigned long long)v->shares);
	case PLAN_KNOB_IDLE:
		return snprintf(buf, size, "%d", v->idle);
	case PLAN_KNOB_MEMORY_MAX:
		if (v->mem_bytes == UINT64_MAX)
			return snprintf(buf, size, "max");
		return snprintf(buf, size, "%llu", (unsigned long long)v->mem_bytes);
	case PLAN_KNOB_CFS_BURST:
		return snprintf(buf, size, "%llu", (unsigned long long)v->burst_us);
	default:
		return -EINVAL;
	}
}

bool plan_value_equal(enum plan_knob knob, const struct plan_value *a, const struct plan_value *b)
{
	switch (knob) {
	case PLAN_KNOB_CPUSET:
		return cpumask_equal(&a->cpus, &b->cpus);
	case PLAN_KNOB_CFS_QUOTA:
		return (a->quota_us < 0 ? -1 : a->quota_us) ==
			       (b->quota_us < 0 ? -1 : b->quota_us) &&
		       (a->period_us == PLAN_PERIOD_KEEP || b->period_us == PLAN_PERIOD_KEEP ||
			a->period_us == b->period_us);
	case PLAN_KNOB_SHARES:
		return a->shares == b->shares;
	case PLAN_KNOB_IDLE:
		return a->idle == b->idle;
	case PLAN_KNOB_MEMORY_MAX:
		return a->mem_bytes == b->mem_bytes;
	case PLAN_KNOB_CFS_BURST:
		return a->burst_us == b->burst_us;
	default:
		return false;
	}
}
