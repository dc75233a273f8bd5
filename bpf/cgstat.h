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

/*
 * Value of the PERCPU_HASH `cg_stats`; user space sums the per-CPU copies. Only counters: user
 * space reads every entry every tick, so the entry stays small (the histogram is `cg_hist`).
 */
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
};
_Static_assert(sizeof(struct kqos_cg_stats) == (5 + 3 * KQOS_PMU_MAX) * 8, "cg_stats layout");

/*
 * Value of the mmap'ed ARRAY `cg_ctr`: one CPU's counters of one slotted cgroup, at row
 * slot * ncpus + cpu. Padded to whole cache lines so that no two CPUs write one line.
 */
struct kqos_cg_row {
	struct kqos_cg_stats s;
	__u8 pad[192 - sizeof(struct kqos_cg_stats)];
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct kqos_cg_row) == 192, "cg_ctr layout");

/*
 * Value of the PERCPU_HASH `cg_hist`, same keys: the cgroup's wait histogram (hist.h), read
 * where a quantile is needed (watched LS cgroups every tick, the rest on a slower cadence).
 * u32 slots wrap; deltas are safe.
 */
struct kqos_cg_hist {
	__u32 rq_hist[KQOS_HIST_SLOTS];
};
_Static_assert(sizeof(struct kqos_cg_hist) == KQOS_HIST_SLOTS * 4, "cg_hist layout");

/* Value of the PERCPU_ARRAY `cpu_state` (one entry). */
struct kqos_cpu_state {
	__u64 last_switch_ns; /* rq->clock_task when this CPU's time was last charged */
	__u64 cg_full; /* switches not charged because cg_stats was full */
	__u64 pmu_valid; /* bit i: pmu_last[i] holds a reading of event i */
	__u64 pmu_errors; /* failed reads of an event (no fd on this CPU) */
	__u64 pmu_read_ns; /* rq->clock_task when the PMU events were last read on this CPU */
	__u64 ev_emitted; /* ring buffer records submitted */
	__u64 ev_dropped; /* records lost to a full ring buffer */
	__u64 ev_suppressed; /* LS waits past target not sent: rate limit (KQOS_EV_GAP_NS) */
	struct kqos_pmu_reading pmu_last[KQOS_PMU_MAX];
};
_Static_assert(sizeof(struct kqos_cpu_state) == 64 + KQOS_PMU_MAX * 24, "cpu_state layout");

/* Ring buffer record types (`events` map); only urgent things travel this way. */
#define KQOS_EV_NONE	 0
#define KQOS_EV_LS_WAIT	 1 /* a watched cgroup's task waited past its target */
#define KQOS_EV_CG_MKDIR 2 /* a cgroup was created below a watched root */
#define KQOS_EV_CG_RMDIR 3 /* a cgroup below a watched root was removed */
#define KQOS_EV_CG_ATTACH \
	4 /* a task moved into (or, with fork_events, forked in) a managed cgroup */

/* At most one LS_WAIT record per watched cgroup per CPU in this time; the rest are counted. */
#define KQOS_EV_GAP_NS 1000000ULL

struct kqos_event {
	__u32 type; /* KQOS_EV_* */
	__u32 cpu;
	__u64 cgid; /* LS_WAIT: the waiting cgroup; CG_*: the cgroup created, removed, joined */
	__u64 ts_ns; /* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 value; /* LS_WAIT: wait ns; CG_ATTACH: the task's pid (tid) */
	__u64 aux; /* LS_WAIT: the cgroup that ran before on this CPU (0: idle); CG_MKDIR/RMDIR:
		    * the parent's id; CG_ATTACH: the task's tgid */
};
_Static_assert(sizeof(struct kqos_event) == 40, "event layout");

/*
 * Value of the PERCPU_HASH `watch`, keyed by cgroup id: an LS cgroup and its run-queue wait
 * target. Per CPU, so the rate limit touches no shared line; user space writes target_ns on
 * every CPU and leaves the rest to the kernel.
 */
struct kqos_watch {
	__u64 target_ns;
	__u64 last_emit_ns; /* this CPU's last LS_WAIT record for the cgroup */
	__u64 suppressed; /* records this CPU left out for the rate limit */
};
_Static_assert(sizeof(struct kqos_watch) == 24, "watch layout");

#define KQOS_MAX_WATCHES 4096
#define KQOS_MAX_ROOTS	 256
#define KQOS_MAX_MANAGED 16384
#define KQOS_MAX_DEPTH	 16 /* ancestors searched for a watched root */

#endif
