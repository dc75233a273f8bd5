/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_ACTUATE_RDTACT_H
#define KQOS_ACTUATE_RDTACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroupfs.h"
#include "plan.h"
#include "resctrl.h"
#include "snapshot.h"

/*
 * The resctrl half of the actuator: the only writer of resctrl state. From a plan's resctrl
 * section (rdt_plan.h) it creates the kqos groups that are missing, writes the schemata lines
 * that differ (percent -> CBM and MB with the library's formulas and the node's capabilities),
 * places the member cgroups' tasks, and removes the kqos groups no longer planned (a pod's after
 * a grace, against pod-list races). It never creates, writes or removes a group without the
 * kqos- prefix, so every other group's schemata stays byte-identical. A failure is logged once
 * per (group, what, errno) with info/last_cmd_status, counted, and the pass goes on.
 */

struct rdtact_opts {
	bool dry_run;
	uint64_t pod_grace_ns; /* an unplanned kqos-pod-* group lives this long; 0 = 10 s */
	bool no_reconcile; /* place on events only (tests of the event path) */
};

struct rdtact;

/* @r and @cg are borrowed and must outlive the actuator. */
int rdtact__new(struct resctrl *r, struct cgroupfs *cg, const struct rdtact_opts *o,
		struct rdtact **ret);
void rdtact__free(struct rdtact *a); /* NULL-safe; removes nothing */

void rdtact__set_dry_run(struct rdtact *a, bool dry_run);

/*
 * Bring resctrl to @p at @mono_ns: groups, schemata, a placement reconcile. Under the
 * exclusive resctrl lock. 0, or -errno only when the lock or the group listing failed.
 */
int rdtact__apply(struct rdtact *a, const struct plan_rdt *p, uint64_t mono_ns);

/*
 * Between ticks, on the resctrl cadence: the last applied plan again (groups, schemata,
 * placement), so a lost event costs at most one interval. 0 when nothing is planned.
 */
int rdtact__reconcile(struct rdtact *a, uint64_t mono_ns);

/*
 * The event path: thread @tid joined cgroup @cgid (kernel time @event_ns, CLOCK_MONOTONIC).
 * Write it to its group's tasks at once when the last applied plan has the cgroup; @now_ns
 * after the write measures the latency. 1 placed, 0 not ours or gone, -errno.
 */
int rdtact__place(struct rdtact *a, uint64_t cgid, pid_t tid, uint64_t event_ns);

/* Remove every kqos group (the kernel moves their tasks to the root). 0 or the first -errno. */
int rdtact__restore(struct rdtact *a);

/* kqos groups present after the last pass. */
unsigned int rdtact__nr_groups(const struct rdtact *a);

/* The last pass failed because the root itself is gone (unmounted, its filesystem dead). */
bool rdtact__is_unreachable(const struct rdtact *a);
/*
 * Go on with @r, a handle on resctrl mounted again, instead of the dead one (which the caller
 * closes): the next pass finds the groups anew and recreates what the plan has.
 */
void rdtact__set_resctrl(struct rdtact *a, struct resctrl *r);
void rdtact__fill(const struct rdtact *a, struct snap_rdt_enforce *ret);

/* Turn a planned group into schemata for @caps (pure: the unit tests call it per profile). */
int rdtact_schemata(const struct resctrl_caps *caps, const struct plan_rdt_group *g,
		    struct resctrl_schemata *ret, char *msg, size_t len);

#endif
