/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_SAMPLE_H
#define KQOS_USER_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "collector.h"
#include "pmu.h"

/* What one cgroup did over one interval. Pure arithmetic on two collector reads. */
struct cg_rate {
	__u64 cgid;
	double cpu_cores; /* on-CPU ns / wall ns */
	double runs_per_s; /* switch-ins per second */
	__u64 waits; /* run-queue waits that ended in the interval */
	double wait_mean_ns;
	__u64 wait_p50_ns; /* from the histogram: within 6.25 % (see hist.h) */
	__u64 wait_p99_ns;
	__u64 wait_max_ns; /* exact when a new maximum was set, else the top slot's bound */
	/* PMU event i per second, scaled for multiplexing; pmu_running_ratio = running/enabled */
	double pmu_per_s[KQOS_PMU_MAX];
	double pmu_running_ratio[KQOS_PMU_MAX];
	__u64 pmu_count[KQOS_PMU_MAX]; /* raw counts in the interval, unscaled */
};

/*
 * Cycles per instruction and LLC misses per 1000 instructions from the rates of events with
 * those roles (@ev: the collector's events, @n of them). -ENODATA when an input is missing or
 * there were no instructions.
 */
int rate_cpi(const struct cg_rate *r, const struct pmu_event_cfg *ev, int n, double *ret);
int rate_mpki(const struct cg_rate *r, const struct pmu_event_cfg *ev, int n, double *ret);

/*
 * q-quantile (0 < q <= 1) of a histogram of @total values: the midpoint of the slot that holds
 * the value of rank ceil(q * total), or that slot's lower bound for the open-ended last slot.
 * 0 when total is 0.
 */
__u64 hist_quantile(const __u32 *hist, __u64 total, double q);

/*
 * Number of values in a histogram. Rank quantiles against this, not against a separately
 * read count: the maps are read while other CPUs update them, so the two may differ a little.
 */
__u64 hist_total(const __u32 *hist);

/*
 * Rates between @prev and @cur (both sorted by cgid, as collector__read returns them) over
 * @dt_ns. A cgroup absent from @prev started at zero within the interval. Writes at most @cap
 * rates, one per entry of @cur that ran or waited; returns how many.
 */
size_t sample_rates(const struct cg_totals *prev, size_t nprev, const struct cg_totals *cur,
		    size_t ncur, __u64 dt_ns, struct cg_rate *out, size_t cap);

/* Delta of one cgroup's counters (cur - prev, wrap-safe for the u32 histogram). */
void totals_delta(const struct cg_totals *prev, const struct cg_totals *cur, struct cg_totals *d);

/*
 * The largest wait in the interval of delta @d: exact when @cur set a new record since @prev
 * (NULL: the cgroup is new), else the top non-empty slot's bound, never above the record.
 */
__u64 totals_interval_max(const struct cg_totals *prev, const struct cg_totals *cur,
			  const struct cg_totals *d);

/* Per second rates of the PMU events of delta @d, scaled for multiplexing, into @ret[KQOS_PMU_MAX]. */
void totals_pmu_per_s(const struct cg_totals *d, __u64 dt_ns, double *ret);

#endif
