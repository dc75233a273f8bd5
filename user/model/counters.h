/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_COUNTERS_H
#define KQOS_MODEL_COUNTERS_H

#include <linux/types.h>
#include <stdbool.h>

#include "hist.h"
#include "kqos_pmu.h"

/*
 * What the collector reads for one cgroup, as plain values: the model's input from the BPF
 * maps (collect/collector.c fills it; the layout of the maps themselves is bpf/cgstat.h).
 */

enum pmu_role {
	PMU_ROLE_OTHER = 0,
	PMU_ROLE_CYCLES,
	PMU_ROLE_INSTRUCTIONS,
	PMU_ROLE_LLC_MISSES,
};

#define PMU_NAME_LEN 64

/* One configured PMU event: encoded with libpfm4 by collect/pmu.c. */
struct pmu_event_cfg {
	char name[PMU_NAME_LEN];
	__u32 role; /* enum pmu_role: which derived metric (CPI, MPKI) it feeds */
};

/*
 * The slots [lo, hi) outside which a histogram is zero, so that summing, folding and ranking
 * it reads a few dozen slots of 256. hi 0: unknown, all of them; lo == hi: empty. A histogram
 * with a span is handed out as a pointer to its slot lo: h[k] is slot lo + k (with hi 0, slot
 * k), so that an increase holds only its span's slots.
 */
struct hist_span {
	__u16 lo, hi;
};

/* Counters of one cgroup since its map entry was created, summed over CPUs. */
struct cg_totals {
	__u64 cgid;
	__u64 oncpu_ns;
	__u64 nr_switch_in;
	__u64 rq_wait_ns;
	__u64 rq_wait_cnt;
	__u64 rq_wait_max_ns;
	__u64 pmu_count[KQOS_PMU_MAX]; /* index = collector__pmu_event() index */
	__u64 pmu_enabled[KQOS_PMU_MAX];
	__u64 pmu_running[KQOS_PMU_MAX];
	/*
	 * The wait histogram's increase since its previous read, the slots of rq_span from its
	 * first (hist_span), owned by whoever read it (the collector: valid until its next
	 * read). NULL, with no_hist,
	 * when the histogram was not read this tick: the collector reads it for watched cgroups
	 * every tick, for all on a slower cadence.
	 */
	const __u32 *rq_hist;
	bool no_hist;
	struct hist_span rq_span; /* of rq_hist */
};

/* An LS cgroup the kernel watches, and the run-queue wait past which it reports. */
struct wait_watch {
	__u64 cgid;
	__u64 target_ns;
};

/* One report of such a wait (bpf/cgstat.h KQOS_EV_LS_WAIT), as the model sees it. */
struct wait_event {
	__u64 cgid; /* the cgroup that waited */
	__u64 wait_ns;
	__u64 ts_ns; /* CLOCK_MONOTONIC */
	__u64 prev_cgid; /* what ran before on that CPU; 0 = idle */
	__u32 cpu;
};

#endif
