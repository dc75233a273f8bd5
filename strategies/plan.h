/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_PLAN_H
#define KQOS_STRATEGIES_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpulist.h"
#include "rdt_plan.h"

/*
 * A plan: the desired value of some knobs of some cgroups, written by the strategies of one
 * tick and applied by the actuator. Each entry records which strategy asked and why.
 *
 * Precedence: one entry per (cgroup, knob). When two strategies want the same knob, the higher
 * `prio` wins (cpu_suppress 30 > cpuset_rules 20 > extended_resource 10, see registry.c); on a
 * tie the first writer keeps it. The latency guard, last, only tightens (`tighten` below). The loser is counted in nr_overridden and logged at debug by
 * the actuator, never silently merged: a knob has exactly one owner per tick.
 *
 * Cgroup paths are relative to the hierarchy root ("/kubepods/besteffort"), as in the snapshot.
 */

enum plan_knob {
	PLAN_KNOB_CPUSET = 0, /* cpuset.cpus */
	PLAN_KNOB_CFS_QUOTA, /* cfs quota (+ period); v2 cpu.max */
	PLAN_KNOB_SHARES, /* cpu.shares; v2 cpu.weight converted by the configured formula */
	PLAN_KNOB_IDLE, /* cpu.idle */
	PLAN_KNOB_MEMORY_MAX, /* memory.limit_in_bytes; v2 memory.max */
	PLAN_KNOB_CFS_BURST, /* cpu.cfs_burst_us; v2 cpu.max.burst */
	PLAN_KNOB_NR,
};

#define PLAN_CGROUP_MAX	 256
#define PLAN_WHY_MAX	 96
#define PLAN_PERIOD_KEEP 0 /* cfs period: leave the cgroup's period as it is */

struct plan_value {
	struct cpumask cpus;
	int64_t quota_us; /* CG_QUOTA_UNLIMITED (-1) or > 0 */
	uint64_t period_us; /* PLAN_PERIOD_KEEP or the period */
	uint64_t shares;
	bool idle;
	uint64_t mem_bytes; /* UINT64_MAX = unlimited */
	uint64_t burst_us; /* CFS burst, at most the quota (the kernel refuses more) */
};

struct plan_entry {
	char cgroup[PLAN_CGROUP_MAX];
	enum plan_knob knob;
	struct plan_value v; /* only the knob's field is meaningful */
	const char *strategy; /* static string: the strategy's name */
	int prio;
	char why[PLAN_WHY_MAX];
};

struct plan {
	struct plan_entry *entries;
	size_t nr, cap;
	size_t nr_overridden; /* requests that lost to a higher precedence */
	/* the strategy writing now and its precedence, set by the caller of decide() */
	const char *strategy;
	int prio;
	/*
	 * Set for a strategy that tightens (the latency guard): a request for a knob already
	 * planned keeps the tighter value of the two, whatever the precedence: quota smaller
	 * (unlimited the loosest), shares smaller, idle on, cpuset intersected (an empty
	 * intersection keeps the planned set), memory smaller. It never loosens a knob.
	 */
	bool tighten;
	struct plan_rdt rdt; /* resctrl groups and their members (rdt_plan.h) */
};

void plan_init(struct plan *p);
void plan_fini(struct plan *p);
/* Drop all entries, keep the memory. */
void plan_reset(struct plan *p);

/*
 * Ask for one knob value on behalf of p->strategy with p->prio. 0 (taken or lost to a higher
 * precedence), -EINVAL for an unsafe or too long cgroup path, -ENOMEM.
 */
int plan_set(struct plan *p, const char *cgroup, enum plan_knob knob, const struct plan_value *v,
	     const char *why_fmt, ...) __attribute__((format(printf, 5, 6)));
int plan_set_cpuset(struct plan *p, const char *cgroup, const struct cpumask *cpus,
		    const char *why);
int plan_set_quota(struct plan *p, const char *cgroup, int64_t quota_us, const char *why);
int plan_set_shares(struct plan *p, const char *cgroup, uint64_t shares, const char *why);
int plan_set_idle(struct plan *p, const char *cgroup, bool idle, const char *why);
int plan_set_memory(struct plan *p, const char *cgroup, uint64_t bytes, const char *why);
int plan_set_burst(struct plan *p, const char *cgroup, uint64_t burst_us, const char *why);

/* Make @dst hold @src's entries (the strategy names are static strings). 0 or -ENOMEM. */
int plan_copy(struct plan *dst, const struct plan *src);

/* Borrowed entry for (cgroup, knob), or NULL. */
const struct plan_entry *plan_find(const struct plan *p, const char *cgroup, enum plan_knob knob);

/* "cpuset", "cfs_quota", "shares", "idle", "memory_max", "cfs_burst" (snap_action knobs). */
const char *plan_knob_name(enum plan_knob knob);
int plan_knob_parse(const char *s, enum plan_knob *ret);
/* Number of path components: "/" 0, "/a" 1, "/a/b" 2. Orders parents before children. */
unsigned int plan_cgroup_depth(const char *cgroup);
/* Value as text for logs ("0-3", "20000", "max", "1"). */
int plan_value_format(enum plan_knob knob, const struct plan_value *v, char *buf, size_t size);
bool plan_value_equal(enum plan_knob knob, const struct plan_value *a, const struct plan_value *b);

#endif
