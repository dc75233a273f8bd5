/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_BPF_CGSTAT_H
#define KQOS_BPF_CGSTAT_H

#include "kqos_common.h"
#include "hist.h"
#include "kqos_pmu.h"

/*
 * ABI of cgstat.bpf.o: per-cgroup CPU time and run-queue latency. Map keys are the cgroup's
 * kernfs id (__u64) in the hierarchy chosen by cfg_cgroup_mode.
 */

/* Value of the PERCPU_HASH `cg_stats`; user space sums the per-CPU copies. */
struct kqos_cg_stats {
	__u64 oncpu_ns; /* time on CPU, charged at switch-out */
	__u64 nr_switch_in; /* times a task of the cgroup was switched in */
	__u64 rq_wait_ns; /* sum of run-queue waits (wakeup or preemption -> switch-in) */
	__u64 rq_wait_cnt; /* number of waits summed in rq_wait_ns */
	__u64 rq_wait_max_ns; /* largest wait seen since the entry was created */
	/* PMU event i, charged to the task that was on the CPU (see pmu.h); unused when absent */
	__u64 pmu_count[KQOS_PMU_MAX];
	__u64 pmu_enabled[KQOS_PMU_MAX];
	__u64 pmu_running[KQOS_PMU_MAX];
	__u32 rq_hist[KQOS_HIST_SLOTS]; /* wait histogram, see hist.h; u32 wraps, deltas are safe */
};
_Static_assert(sizeof(struct kqos_cg_stats) == (5 + 3 * KQOS_PMU_MAX) * 8 + KQOS_HIST_SLOTS * 4,
	       "cg_stats layout");

/* Value of the PERCPU_ARRAY `cpu_state` (one entry). */
struct kqos_cpu_state {
	__u64 last_switch_ns; /* when the task now on this CPU was switched in */
	__u64 cg_full; /* switches not charged because cg_stats was full */
	__u64 pmu_valid; /* bit i: pmu_last[i] holds a reading of event i */
	__u64 pmu_errors; /* failed reads of an event (no fd on this CPU) */
	__u64 pmu_read_ns; /* when the PMU events were last read on this CPU */
	struct kqos_pmu_reading pmu_last[KQOS_PMU_MAX];
};
_Static_assert(sizeof(struct kqos_cpu_state) == 40 + KQOS_PMU_MAX * 24, "cpu_state layout");

/* Ring buffer record types (`events` map); only urgent things travel this way. */
#define KQOS_EV_NONE 0

struct kqos_event {
	__u32 type;
	__u32 cpu;
	__u64 cgid;
	__u64 ts_ns;
	__u64 value;
};
_Static_assert(sizeof(struct kqos_event) == 32, "event layout");

#endif
