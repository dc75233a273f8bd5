/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_SNAPBUILD_H
#define KQOS_USER_SNAPBUILD_H

#include <linux/types.h>

#include "cgid.h"
#include "cgmode.h"
#include "collector.h"
#include "config.h"
#include "snapshot.h"

/*
 * Builds the per-tick snapshot: polls the pod source, maps pods and containers to cgroups
 * (cgroup walk, or the bare-metal groups' directories), folds the collector's per-cgroup
 * counters into per-entity stats, and adds node usage and cgroup throttling. Keeps what must
 * survive ticks (64-bit cumulative counters per cgroup, previous throttling and /proc/stat
 * readings, the topology).
 */
struct snapbuild;

int snapbuild__new(const struct kqos_config *cfg, const struct cg_hier *hier,
		   struct snapbuild **ret);
void snapbuild__free(struct snapbuild *sb);

/* Poll the pod source when due (it keeps its last good list on failure). */
void snapbuild__poll_pods(struct snapbuild *sb, __u64 now_ns);

/* What one tick of the collector produced; arrays sorted by cgid. */
struct snapbuild_input {
	const struct cg_totals *prev, *cur;
	size_t nprev, ncur;
	__u64 dt_ns;
	__u64 mono_ns, wall_ns;
	struct cgid_index *ids;
	const struct collector *col;
	unsigned long long dropped;
};

/* A new snapshot (one reference) or NULL on -ENOMEM. */
struct snapshot *snapbuild__build(struct snapbuild *sb, const struct snapbuild_input *in);

#endif
