/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_RDT_PLAN_H
#define KQOS_STRATEGIES_RDT_PLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The resctrl section of a plan: which kqos control groups should exist, what each should
 * allocate, and which cgroups' tasks belong in each. A cgroup knob row does not fit it: a group
 * is not a cgroup, it is created and removed, and its members are tasks. The strategy plans in
 * koordinator's units (percent of the ways, percent of bandwidth); the actuator turns them into
 * schemata with the resctrl library's formulas and the node's capabilities, so a strategy
 * stays pure and the formulas live in one place.
 */

#define PLAN_RDT_NAME_MAX  80 /* group name without the "kqos-" prefix: "BE", "pod-<uid>" */
#define PLAN_RDT_PER_CACHE 16
#define PLAN_RDT_NO_GROUP  (-1) /* a pod group's fallback: the root (default) group */

struct plan_rdt_l3 {
	int32_t cache_id; /* -1: every cache id */
	unsigned int start_pct, end_pct; /* 0 <= start < end <= 100 */
};

struct plan_rdt_mb {
	int32_t cache_id; /* -1: every cache id */
	unsigned int pct; /* 1..100 */
};

struct plan_rdt_group {
	char name[PLAN_RDT_NAME_MAX];
	char pod_uid[64]; /* "" for a class group */
	/* pod groups: index of the group its tasks go to when it cannot be had (out of
	 * CLOSIDs), or PLAN_RDT_NO_GROUP */
	int fallback;
	bool has_l3; /* l3[0] is the all-caches value when it has cache_id -1 */
	unsigned int nr_l3;
	struct plan_rdt_l3 l3[PLAN_RDT_PER_CACHE + 1];
	bool has_mb;
	unsigned int nr_mb;
	struct plan_rdt_mb mb[PLAN_RDT_PER_CACHE + 1];
	const char *strategy;
	char why[96];
};

/*
 * A cgroup whose tasks belong in a group. An empty path: known only by id (event placement).
 * @mon names a monitoring group under it (mon_groups/kqos-<mon>) for per-pod LLC and MBM
 * figures, while RMIDs last; "" for none.
 */
struct plan_rdt_member {
	char cgroup[256];
	uint64_t cgid;
	unsigned int group;
	char mon[PLAN_RDT_NAME_MAX];
};

struct plan_rdt {
	bool is_on; /* some strategy planned resctrl this tick (else kqos groups are released) */
	struct plan_rdt_group *groups;
	size_t nr_groups, cap_groups;
	struct plan_rdt_member *members;
	size_t nr_members, cap_members;
};

void plan_rdt_fini(struct plan_rdt *r);
void plan_rdt_reset(struct plan_rdt *r);
int plan_rdt_copy(struct plan_rdt *dst, const struct plan_rdt *src);

/* Add a group (name without prefix, [A-Za-z0-9_-]); its index in *ret. -EEXIST, -EINVAL, -ENOMEM. */
int plan_rdt_add_group(struct plan_rdt *r, const struct plan_rdt_group *g, unsigned int *ret);
/* Borrowed, NULL when absent; _get for a strategy that edits a group planned before it. */
const struct plan_rdt_group *plan_rdt_find(const struct plan_rdt *r, const char *name);
struct plan_rdt_group *plan_rdt_get(struct plan_rdt *r, const char *name);
/* Add a member cgroup (path may be NULL/""); -EINVAL for an unsafe path or a bad group. */
int plan_rdt_add_member(struct plan_rdt *r, const char *cgroup, uint64_t cgid, unsigned int group);
/* Name the monitoring group of the members added since @from (see plan_rdt_member). */
void plan_rdt_set_mon(struct plan_rdt *r, size_t from, const char *mon);
/* The group of the member with id @cgid, or -1. */
int plan_rdt_group_of(const struct plan_rdt *r, uint64_t cgid);

#endif
