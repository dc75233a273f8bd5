/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_RDTMON_H
#define KQOS_COLLECT_RDTMON_H

#include <linux/types.h>

#include "resctrl.h"
#include "snapshot.h"

/*
 * resctrl monitoring for the snapshot: every kqos- control group (class groups kqos-LSR,
 * kqos-LS, kqos-BE; pod groups kqos-pod-<uid>) read on its own cadence (resctrl counters move
 * at about 1 s): LLC occupancy per cache id (a gauge) and MBM total/local bytes turned into
 * rates with reset-safe deltas. "Unavailable", "Error" and "Unassigned" are no value, never 0.
 */
struct rdtmon;

/*
 * -ENOENT when resctrl is not mounted at @root (the caller logs one line and runs without).
 * Takes ownership of nothing; @r may be given for tests (a fake), else NULL opens @root.
 */
int rdtmon__new(const char *root, __u64 interval_ns, struct resctrl *r, struct rdtmon **ret);
void rdtmon__free(struct rdtmon *m);

/* Read mon_data when the cadence is due. */
void rdtmon__poll(struct rdtmon *m, __u64 now_ns);

/* The last readings, one per group, as a new array the caller owns (snapbuild_input.rdt). */
int rdtmon__copy(const struct rdtmon *m, struct snap_rdt_group **ret, size_t *nr);

/* CLOSIDs and RMIDs of the whole node at the last poll; ids->has false without resctrl. */
void rdtmon__ids(const struct rdtmon *m, struct snap_rdt_ids *ids);

/* The handle, for the enforcement side. */
struct resctrl *rdtmon__resctrl(struct rdtmon *m);

#endif
