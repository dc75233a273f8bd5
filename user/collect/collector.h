/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_COLLECTOR_H
#define KQOS_COLLECT_COLLECTOR_H

#include <stddef.h>
#include <linux/types.h>

#include "cgstat.h"
#include "counters.h"
#include "snapshot.h"
#include "pmu.h"

/*
 * The cgstat BPF collector: loads and attaches bpf/cgstat.bpf.c and reads its per-CPU maps.
 * This file is the only user of cgstat.skel.h.
 */
enum collector_wait_source {
	COLLECTOR_WAIT_AUTO = 0, /* sched_info when the kernel keeps it, else wakeup stamps */
	COLLECTOR_WAIT_SCHED_INFO,
	COLLECTOR_WAIT_STAMPS,
};

struct collector_opts {
	__u32 cgroup_mode; /* KQOS_CG_MODE_V2 or KQOS_CG_MODE_V1_CPU */
	__u32 max_cgroups; /* cgroups tracked; 0 = KQOS_MAX_CGROUPS_DEFAULT */
	/* cgroups read from mapped memory (ctrslots.h); 0: ctrslots_auto(), < 0: none */
	__s32 counter_slots;
	__u32 wait_source; /* enum collector_wait_source */
	const char *sys_root; /* sysfs root for the online CPUs; NULL = /sys */
	__s32 hierarchy_id; /* cgroup_root hierarchy_id of the tree cgroup events come from */
	const struct pmu_event_cfg *pmu_events; /* counted per cgroup at each switch */
	int pmu_n; /* 0..KQOS_PMU_MAX; events the host lacks are dropped */
};

struct collector;

/* open -> set rodata and map sizes -> load -> attach. -errno on failure (logged here). */
int collector__open(const struct collector_opts *opts, struct collector **ret);
void collector__free(struct collector *c);

/* The most entries collector__read() can return: the slots and the cg_stats map. */
size_t collector__capacity(const struct collector *c);

/*
 * Read every cg_stats entry into @buf (room for @cap entries), sorted by cgid. Returns the
 * number of entries or -errno. Histograms: every one with @all_hists, else only the watched
 * cgroups'; the others are marked no_hist (totals_carry_hists() fills them from the last
 * read). Does not allocate after the first call.
 */
int collector__read(struct collector *c, struct cg_totals *buf, size_t cap, bool all_hists);

/* Drop the entry (and slot) of a cgroup that no longer exists. -ENOENT if there was none. */
int collector__forget(struct collector *c, __u64 cgid);

/* Where the last collector__read() found its cgroups. */
void collector__counter_src(const struct collector *c, struct snap_counter_src *ret);

/* Where @cgid's counters are read from: its slot, or -ENOENT when it has none (cg_stats). */
int collector__slot_of(const struct collector *c, __u64 cgid);

/* Switches that could not be charged because the map was full (summed over CPUs). */
__u64 collector__dropped(struct collector *c);

/* "sched_info" or "wakeup": where run-queue waits start on this host. */
const char *collector__wait_source(const struct collector *c);

/* Failed PMU reads in BPF (an event without an fd on that CPU), summed over CPUs. */
__u64 collector__pmu_errors(struct collector *c);

/* PMU events actually counted (0 when the host has none of them), and event @i. */
int collector__pmu_count(const struct collector *c);
const struct pmu_event_cfg *collector__pmu_event(const struct collector *c, int i);

/* Follow CPU hotplug for the PMU events and the per-CPU tick; cheap when nothing changed. */
int collector__pmu_refresh(struct collector *c);

/* The kernel's event queue and the maps that choose what it reports (events.h). */
struct kevents;
struct kevents *collector__kevents(struct collector *c);
/* Ring buffer figures since start, summed over CPUs, for the snapshot and the export. */
void collector__event_stats(struct collector *c, struct snap_events *ret);

#endif
