/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_SAMPLE_H
#define KQOS_MODEL_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "counters.h"
#include "snapshot.h"

/*
 * Interval arithmetic on the collector's counters, pure. The tick computes one delta per
 * cgroup (sample_deltas), entities sum them (cg_acc_add), and sample_stats turns a sum into the
 * snapshot's rates: the one place rates are made.
 */

/* What one cgroup did over one interval. */
struct cg_delta {
	struct cg_totals d; /* cur - prev; d.rq_wait_max_ns = the interval's largest wait */
	double pmu_per_s[KQOS_PMU_MAX]; /* scaled for multiplexing */
	const char *path; /* relative to the mount, set by the caller; NULL when unknown */
};

/*
 * Deltas between @prev and @cur (both sorted by cgid, as collector__read returns them) over
 * @dt_ns, one per entry of @cur into @out (room for @ncur). A cgroup absent from @prev started
 * at zero within the interval. Returns @ncur, or 0 when @dt_ns is 0.
 */
size_t sample_deltas(const struct cg_totals *prev, size_t nprev, const struct cg_totals *cur,
		     size_t ncur, __u64 dt_ns, struct cg_delta *out);
/* The cgroup ran, was switched in or waited in the interval. */
bool cg_delta_active(const struct cg_delta *d);

/* 64-bit cumulative counters of one cgroup: the BPF histogram slots are u32 and wrap. */
/* The quantiles of the last histogram read, shown until the next one (collector.histInterval). */
struct rq_quantiles {
	bool has;
	__u64 p50_ns, p99_ns, max_ns;
};

/* Keep @q from @st when its histogram is fresh, or give @st @q's when it is stale. */
void rq_quantiles_carry(struct rq_quantiles *q, struct snap_stats *st);

/*
 * Counters since the model first saw a cgroup ("others") or an entity (pod, container,
 * group): what Prometheus reads as counters. An entity keeps its own across ticks, so that a
 * tick adds its interval once instead of summing its cgroups' again.
 */
struct cg_cum {
	/* what every tick touches first, in one cache line */
	__u64 cgid; /* of the cgroup; 0 in an entity's */
	__u64 oncpu, waits, wait_ns;
	struct rq_quantiles q; /* the last fresh quantiles, shown while histograms are stale */
	__u64 pmu[KQOS_PMU_MAX]; /* only with PMU events */
	__u64 hist[SNAP_RQ_BUCKETS]; /* per bucket, not cumulative; only on histogram reads */
};

/* Fold one interval into the cumulative counters (histogram slots into export buckets). */
void cg_cum_add_delta(struct cg_cum *c, const struct cg_totals *d);
/* BPF histogram @hist (an interval's increase, zero outside @span) into export @buckets. */
void hist_fold(const __u32 *hist, struct hist_span span, __u64 *buckets);
/* The slots to read of a histogram with @span: [*lo, *hi). */
void hist_span_bounds(struct hist_span span, unsigned int *lo, unsigned int *hi);
/* The smallest span that holds both. */
struct hist_span hist_span_union(struct hist_span a, struct hist_span b);
/* @c's buckets as Prometheus has them: cumulative in le order, into @out[SNAP_RQ_BUCKETS]. */
void cg_cum_le(const struct cg_cum *c, __u64 *out);

/*
 * What an entity (pod, container, group, other cgroup) gathers from its cgroups in a tick:
 * counters only. Its wait histogram is the sum of its cgroups' (cg_delta), made by the caller
 * where the quantiles are taken (sample_stats): a 1 KiB histogram in each of two entities per
 * pod was 2 MB at 1000 pods and 10 MB at 5000, and zeroing them a cost every tick.
 */
struct cg_acc_pmu {
	__u64 count[KQOS_PMU_MAX], enabled[KQOS_PMU_MAX], running[KQOS_PMU_MAX];
	double per_s[KQOS_PMU_MAX];
};

struct cg_acc {
	bool any;
	bool no_hist; /* one of the cgroups had no histogram this tick */
	bool has_pmu; /* pmu was charged (a host that counts events): zeroed only then */
	__u32 hist_head; /* the caller's: snapbuild chains an entity's cgroups from here */
	/* the cgroups' intervals summed; rq_wait_max_ns the largest */
	__u64 oncpu_ns, nr_switch_in, rq_wait_cnt, rq_wait_ns, rq_wait_max_ns;
	/* last: without PMU events a tick never touches it (a cache line less per entity) */
	struct cg_acc_pmu pmu;
};

/* Zero @a for a new tick: its PMU part only when it was charged. */
void cg_acc_clear(struct cg_acc *a);

/*
 * @t += @o, counter by counter: the largest rq_wait_max_ns, no_hist if either has it. The
 * collector's, for a cgroup read from two places (a slot and the hash); entities add theirs
 * with cg_acc_add().
 */
void totals_add(struct cg_totals *t, const struct cg_totals *o);

/* An entity takes a cgroup's interval (its PMU part only when there is one). */
void cg_acc_add(struct cg_acc *a, const struct cg_delta *d);
/* Entity @a takes all that @src took (a pod its containers'), histograms aside. */
void cg_acc_merge(struct cg_acc *a, const struct cg_acc *src);
/* An entity's counters since start @c take its interval @a (the histogram aside: hist_fold). */
void cg_cum_add_acc(struct cg_cum *c, const struct cg_acc *a);
/* Whole histogram @dst += @src (with @span) over the span: an entity's from its cgroups'. */
void hist_add(__u32 *dst, const __u32 *src, struct hist_span span);

/*
 * Rates of @a over @dt_ns into @st (left as is when @a saw no cgroup): CPU, runs, wait mean,
 * p50/p99 from @hist, the sum of the histograms of @a's cgroups (never above the exact max;
 * NULL or @a->no_hist: none this tick, rq_hist_stale), totals since start from @c (the
 * buckets aside: st->rq_hist_total is the caller's), PMU rates of the @n events @ev with CPI
 * and MPKI into st->pmu (the caller's room; none without it).
 */
void sample_stats(const struct cg_acc *a, const struct cg_cum *c, const __u32 *hist,
		  struct hist_span span, __u64 dt_ns, const struct pmu_event_cfg *ev, int n,
		  struct snap_stats *st);

/*
 * Cycles per instruction and LLC misses per 1000 instructions from per-second rates
 * (@pmu_per_s, index = @ev index) of events with those roles. -ENODATA when an input is missing
 * or there were no instructions.
 */
int rate_cpi(const double *pmu_per_s, const struct pmu_event_cfg *ev, int n, double *ret);
int rate_mpki(const double *pmu_per_s, const struct pmu_event_cfg *ev, int n, double *ret);

/*
 * q-quantile (0 < q <= 1) of a histogram of @total values: the midpoint of the slot that holds
 * the value of rank ceil(q * total), or that slot's lower bound for the open-ended last slot.
 * 0 when total is 0.
 */
__u64 hist_quantile(const __u32 *hist, __u64 total, double q);
/* The same over the slots of @span only, which hold all of @hist's values. */
__u64 hist_quantile_span(const __u32 *hist, struct hist_span span, __u64 total, double q);

/*
 * Number of values in a histogram. Rank quantiles against this, not against a separately
 * read count: the maps are read while other CPUs update them, so the two may differ a little.
 */
__u64 hist_total(const __u32 *hist);
__u64 hist_total_span(const __u32 *hist, struct hist_span span);

/*
 * Delta of one cgroup's counters (cur - prev). @cur's histogram is an increase already (since
 * its previous read): @d shares it. Without a histogram read this tick (@cur->no_hist)
 * no_hist is set and @d->rq_hist is NULL: every reader of a delta's histogram checks first.
 */
void totals_delta(const struct cg_totals *prev, const struct cg_totals *cur, struct cg_totals *d);
/* A histogram read's span comes in blocks of this many slots (histstore.h). */
#define HIST_SPAN_BLOCK 16

/*
 * The largest wait in the interval of delta @d: exact when @cur set a new record since @prev
 * (NULL: the cgroup is new), else the top non-empty slot's bound, never above the record.
 */
__u64 totals_interval_max(const struct cg_totals *prev, const struct cg_totals *cur,
			  const struct cg_totals *d);

/* Per second rates of the PMU events of delta @d, scaled for multiplexing, into @ret[KQOS_PMU_MAX]. */
void totals_pmu_per_s(const struct cg_totals *d, __u64 dt_ns, double *ret);

#endif
