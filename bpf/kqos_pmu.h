/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_BPF_KQOS_PMU_H
#define KQOS_BPF_KQOS_PMU_H

/*
 * PMU counter arithmetic shared by BPF (charging at sched_switch) and user space (rates,
 * scaling), free of vmlinux.h so the unit tests compile it for the host.
 */
#define KQOS_PMU_MAX 4 /* perf events per CPU; one PERF_EVENT_ARRAY map each */

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* One bpf_perf_event_read_value() result, as kept per CPU between switches. */
struct kqos_pmu_reading {
	__u64 counter;
	__u64 enabled; /* ns the event was enabled */
	__u64 running; /* ns it was actually on the PMU; < enabled when multiplexed */
};

/*
 * Whether @cur continues @prev on the same perf event. A re-opened event (CPU hotplug) starts
 * again near zero: its enabled time goes backwards, and the reading must only re-baseline.
 * Events read without times (software events, enabled = running = 0) can only tell by the
 * count itself.
 */
static __always_inline int kqos_pmu_continues(const struct kqos_pmu_reading *prev,
					      const struct kqos_pmu_reading *cur)
{
	if (!cur->enabled && !prev->enabled)
		return cur->counter >= prev->counter;
	return cur->enabled >= prev->enabled && cur->running >= prev->running;
}

/* Counter delta, modulo 2^64: a counter that wrapped still yields the distance travelled. */
static __always_inline __u64 kqos_pmu_delta(__u64 prev, __u64 cur)
{
	return cur - prev;
}

#ifndef __bpf__
/*
 * Estimated true count of a multiplexed event: count * enabled / running. Returns @count when
 * the event ran the whole time or its times are not tracked (both 0: a software event), 0 when
 * it was enabled but never ran (nothing can be estimated).
 */
static __always_inline __u64 kqos_pmu_scale(__u64 count, __u64 enabled, __u64 running)
{
	if (!enabled && !running)
		return count;
	if (!running)
		return 0;
	if (running >= enabled)
		return count;
	return (__u64)((double)count * (double)enabled / (double)running);
}
#endif

#endif
