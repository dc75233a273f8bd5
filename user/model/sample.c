// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "sample.h"

static __u64 slot_value(__u32 slot)
{
	if (slot == KQOS_HIST_SLOTS - 1)
		return kqos_hist_slot_lower(slot);
	return kqos_hist_slot_lower(slot) + kqos_hist_slot_width(slot) / 2;
}

void hist_span_bounds(struct hist_span span, unsigned int *lo, unsigned int *hi)
{
	*lo = 0;
	*hi = KQOS_HIST_SLOTS;
	if (!span.hi)
		return;
	if (span.hi < KQOS_HIST_SLOTS)
		*hi = span.hi;
	*lo = span.lo < *hi ? span.lo : *hi;
}

struct hist_span hist_span_union(struct hist_span a, struct hist_span b)
{
	if (!a.hi || !b.hi)
		return (struct hist_span){ 0 };
	if (a.lo >= a.hi)
		return b;
	if (b.lo >= b.hi)
		return a;
	return (struct hist_span){ .lo = a.lo < b.lo ? a.lo : b.lo,
				   .hi = a.hi > b.hi ? a.hi : b.hi };
}

__u64 hist_total_span(const __u32 *hist, struct hist_span span)
{
	unsigned int lo, hi;
	__u64 n = 0;

	hist_span_bounds(span, &lo, &hi);
	for (unsigned int i = 0; i < hi - lo; i++)
		n += hist[i];
	return n;
}

__u64 hist_total(const __u32 *hist)
{
	return hist_total_span(hist, (struct hist_span){ 0 });
}

__u64 hist_quantile_span(const __u32 *hist, struct hist_span span, __u64 total, double q)
{
	unsigned int lo, hi;
	__u64 rank, seen = 0;

	if (!total)
		return 0;
	rank = (__u64)ceil(q * (double)total);
	if (rank < 1)
		rank = 1;
	hist_span_bounds(span, &lo, &hi);
	for (unsigned int i = lo; i < hi; i++) {
		seen += hist[i - lo];
		if (seen >= rank)
			return slot_value(i);
	}
	return slot_value(KQOS_HIST_SLOTS - 1);
}

__u64 hist_quantile(const __u32 *hist, __u64 total, double q)
{
	return hist_quantile_span(hist, (struct hist_span){ 0 }, total, q);
}

void totals_delta(const struct cg_totals *prev, const struct cg_totals *cur, struct cg_totals *d)
{
	d->cgid = cur->cgid;
	d->oncpu_ns = cur->oncpu_ns - prev->oncpu_ns;
	d->nr_switch_in = cur->nr_switch_in - prev->nr_switch_in;
	d->rq_wait_ns = cur->rq_wait_ns - prev->rq_wait_ns;
	d->rq_wait_cnt = cur->rq_wait_cnt - prev->rq_wait_cnt;
	d->rq_wait_max_ns = cur->rq_wait_max_ns;
	for (int i = 0; i < KQOS_PMU_MAX; i++) {
		d->pmu_count[i] = kqos_pmu_delta(prev->pmu_count[i], cur->pmu_count[i]);
		d->pmu_enabled[i] = cur->pmu_enabled[i] - prev->pmu_enabled[i];
		d->pmu_running[i] = cur->pmu_running[i] - prev->pmu_running[i];
	}
	d->no_hist = cur->no_hist || !cur->rq_hist;
	d->rq_hist = d->no_hist ? NULL : cur->rq_hist;
	d->rq_span = cur->rq_span;
}

__u64 totals_interval_max(const struct cg_totals *prev, const struct cg_totals *cur,
			  const struct cg_totals *d)
{
	unsigned int lo, hi;
	int top;
	__u64 bound;

	if (!prev || cur->rq_wait_max_ns > prev->rq_wait_max_ns)
		return cur->rq_wait_max_ns;
	if (d->no_hist)
		return 0; /* unknown until the next histogram */
	hist_span_bounds(d->rq_span, &lo, &hi);
	if (lo >= hi)
		return 0;
	top = (int)hi - 1;
	while (top > (int)lo && !d->rq_hist[top - (int)lo])
		top--;
	bound = kqos_hist_slot_lower(top) + kqos_hist_slot_width(top) - 1;
	return bound < cur->rq_wait_max_ns ? bound : cur->rq_wait_max_ns;
}

void totals_pmu_per_s(const struct cg_totals *d, __u64 dt_ns, double *ret)
{
	for (int i = 0; i < KQOS_PMU_MAX; i++)
		ret[i] = (double)kqos_pmu_scale(d->pmu_count[i], d->pmu_enabled[i],
						d->pmu_running[i]) *
			 1e9 / (double)dt_ns;
}

/* Bucket of the coarse export histogram that holds BPF slot @slot (bounds are powers of 2). */
static int coarse_bucket(__u32 slot)
{
	__u64 upper = kqos_hist_slot_lower(slot) + kqos_hist_slot_width(slot);
	/* the first i with upper <= 2^(FIRST_LOG + i): from upper's ceil(log2) */
	int log = upper > 1 ? 64 - __builtin_clzll(upper - 1) : 0;
	int i = log > SNAP_RQ_FIRST_LOG ? log - SNAP_RQ_FIRST_LOG : 0;

	return i < SNAP_RQ_BUCKETS ? i : -1; /* -1: only in +Inf */
}

static void delta_one(const struct cg_totals *prev, const struct cg_totals *cur, __u64 dt_ns,
		      struct cg_delta *out)
{
	static const struct cg_totals zero;

	totals_delta(prev ? prev : &zero, cur, &out->d);
	out->d.rq_wait_max_ns = out->d.rq_wait_cnt ? totals_interval_max(prev, cur, &out->d) : 0;
	totals_pmu_per_s(&out->d, dt_ns, out->pmu_per_s);
	out->path = NULL;
}

size_t sample_deltas(const struct cg_totals *prev, size_t nprev, const struct cg_totals *cur,
		     size_t ncur, __u64 dt_ns, struct cg_delta *out)
{
	size_t i = 0;

	if (!dt_ns)
		return 0;
	for (size_t j = 0; j < ncur; j++) {
		const struct cg_totals *p = NULL;

		while (i < nprev && prev[i].cgid < cur[j].cgid)
			i++;
		if (i < nprev && prev[i].cgid == cur[j].cgid)
			p = &prev[i];
		delta_one(p, &cur[j], dt_ns, &out[j]);
	}
	return ncur;
}

bool cg_delta_active(const struct cg_delta *d)
{
	return d->d.oncpu_ns || d->d.nr_switch_in || d->d.rq_wait_cnt;
}

/*
 * The export buckets' bounds are powers of two and a BPF slot's upper bound is in its own
 * octave: all KQOS_HIST_SUB slots of an aligned block fall in one bucket (the first two
 * blocks, below 2 * KQOS_HIST_SUB ns, in the first), so a block is summed and added once.
 */
void hist_fold(const __u32 *hist, struct hist_span span, __u64 *buckets)
{
	unsigned int lo, hi;

	hist_span_bounds(span, &lo, &hi);
	for (unsigned int s = lo; s < hi;) {
		unsigned int end = (s | (KQOS_HIST_SUB - 1u)) + 1; /* the block's end */
		int b = coarse_bucket(s);
		__u64 sum = 0;

		if (b < 0)
			return; /* past the last bucket: only in +Inf, as every later block */
		for (; s < end && s < hi; s++)
			sum += hist[s - lo];
		buckets[b] += sum;
	}
}

void cg_cum_add_delta(struct cg_cum *c, const struct cg_totals *d)
{
	c->oncpu += d->oncpu_ns;
	c->waits += d->rq_wait_cnt;
	c->wait_ns += d->rq_wait_ns;
	if (!d->no_hist && d->rq_hist)
		hist_fold(d->rq_hist, d->rq_span, c->hist);
	for (int i = 0; i < KQOS_PMU_MAX; i++)
		c->pmu[i] += d->pmu_count[i];
}

void cg_cum_add_acc(struct cg_cum *c, const struct cg_acc *a)
{
	c->oncpu += a->oncpu_ns;
	c->waits += a->rq_wait_cnt;
	c->wait_ns += a->rq_wait_ns;
	for (int i = 0; a->has_pmu && i < KQOS_PMU_MAX; i++)
		c->pmu[i] += a->pmu.count[i];
}

void cg_cum_le(const struct cg_cum *c, __u64 *out)
{
	__u64 run = 0;

	for (int b = 0; b < SNAP_RQ_BUCKETS; b++) {
		run += c->hist[b];
		out[b] = run;
	}
}

void hist_add(__u32 *dst, const __u32 *src, struct hist_span span)
{
	unsigned int lo, hi;

	hist_span_bounds(span, &lo, &hi);
	for (unsigned int s = lo; s < hi; s++)
		dst[s] += src[s - lo];
}

void totals_add(struct cg_totals *t, const struct cg_totals *o)
{
	t->no_hist |= o->no_hist;
	t->oncpu_ns += o->oncpu_ns;
	t->nr_switch_in += o->nr_switch_in;
	t->rq_wait_cnt += o->rq_wait_cnt;
	t->rq_wait_ns += o->rq_wait_ns;
	if (o->rq_wait_max_ns > t->rq_wait_max_ns)
		t->rq_wait_max_ns = o->rq_wait_max_ns;
	for (int i = 0; i < KQOS_PMU_MAX; i++) {
		t->pmu_count[i] += o->pmu_count[i];
		t->pmu_enabled[i] += o->pmu_enabled[i];
		t->pmu_running[i] += o->pmu_running[i];
	}
}

void cg_acc_clear(struct cg_acc *a)
{
	memset(a, 0, a->has_pmu ? sizeof(*a) : offsetof(struct cg_acc, pmu));
}

static bool delta_has_pmu(const struct cg_totals *d)
{
	__u64 any = 0;

	for (int i = 0; i < KQOS_PMU_MAX; i++)
		any |= d->pmu_count[i] | d->pmu_enabled[i] | d->pmu_running[i];
	return any;
}

static void acc_counters(struct cg_acc *a, bool no_hist, __u64 oncpu, __u64 switches, __u64 waits,
			 __u64 wait_ns, __u64 wait_max)
{
	a->any = true;
	a->no_hist |= no_hist;
	a->oncpu_ns += oncpu;
	a->nr_switch_in += switches;
	a->rq_wait_cnt += waits;
	a->rq_wait_ns += wait_ns;
	if (wait_max > a->rq_wait_max_ns)
		a->rq_wait_max_ns = wait_max;
}

static void acc_pmu(struct cg_acc *a, const __u64 *count, const __u64 *enabled,
		    const __u64 *running, const double *per_s)
{
	a->has_pmu = true;
	for (int i = 0; i < KQOS_PMU_MAX; i++) {
		a->pmu.count[i] += count[i];
		a->pmu.enabled[i] += enabled[i];
		a->pmu.running[i] += running[i];
		a->pmu.per_s[i] += per_s[i];
	}
}

void cg_acc_add(struct cg_acc *a, const struct cg_delta *d)
{
	const struct cg_totals *t = &d->d;

	acc_counters(a, t->no_hist, t->oncpu_ns, t->nr_switch_in, t->rq_wait_cnt, t->rq_wait_ns,
		     t->rq_wait_max_ns);
	if (delta_has_pmu(t))
		acc_pmu(a, t->pmu_count, t->pmu_enabled, t->pmu_running, d->pmu_per_s);
}

void cg_acc_merge(struct cg_acc *a, const struct cg_acc *src)
{
	if (!src->any)
		return;
	acc_counters(a, src->no_hist, src->oncpu_ns, src->nr_switch_in, src->rq_wait_cnt,
		     src->rq_wait_ns, src->rq_wait_max_ns);
	if (src->has_pmu)
		acc_pmu(a, src->pmu.count, src->pmu.enabled, src->pmu.running, src->pmu.per_s);
}

static void interval_waits(const struct cg_acc *a, const __u32 *hist, struct hist_span span,
			   struct snap_stats *st)
{
	__u64 total;

	st->rq_waits = a->rq_wait_cnt;
	if (!a->rq_wait_cnt)
		return;
	st->rq_wait_mean_ns = (double)a->rq_wait_ns / (double)a->rq_wait_cnt;
	/* no histogram this tick: the caller carries the last quantiles (rq_hist_stale) */
	st->rq_hist_stale = a->no_hist || !hist;
	if (st->rq_hist_stale)
		return;
	total = hist_total_span(hist, span);
	st->rq_max_ns = a->rq_wait_max_ns;
	/* A midpoint may overshoot the largest value actually seen. */
	st->rq_p50_ns = hist_quantile_span(hist, span, total, 0.5);
	st->rq_p99_ns = hist_quantile_span(hist, span, total, 0.99);
	if (st->rq_p50_ns > st->rq_max_ns)
		st->rq_p50_ns = st->rq_max_ns;
	if (st->rq_p99_ns > st->rq_max_ns)
		st->rq_p99_ns = st->rq_max_ns;
}

static void totals_since_start(const struct cg_cum *c, struct snap_stats *st)
{
	st->cpu_ns_total = c->oncpu;
	st->rq_waits_total = c->waits;
	st->rq_wait_ns_total = c->wait_ns;
}

static void pmu_rates(const struct cg_acc *a, const struct cg_cum *c,
		      const struct pmu_event_cfg *ev, int n, struct snap_stats *st)
{
	struct snap_pmu_stats *p = st->pmu;

	st->pmu_n = p ? n : 0;
	if (!st->pmu_n)
		return;
	for (int i = 0; i < n; i++) {
		p->per_s[i] = a->pmu.per_s[i];
		/* untracked times (software events, never multiplexed) read as always running */
		p->running_ratio[i] =
			a->pmu.enabled[i] ? (double)a->pmu.running[i] / (double)a->pmu.enabled[i] :
					    1;
		p->total[i] = c->pmu[i];
	}
	st->has_cpi = !rate_cpi(p->per_s, ev, n, &st->cpi);
	st->has_mpki = !rate_mpki(p->per_s, ev, n, &st->llc_mpki);
}

void rq_quantiles_carry(struct rq_quantiles *q, struct snap_stats *st)
{
	if (!st->rq_waits)
		return;
	if (!st->rq_hist_stale) {
		*q = (struct rq_quantiles){ .has = true,
					    .p50_ns = st->rq_p50_ns,
					    .p99_ns = st->rq_p99_ns,
					    .max_ns = st->rq_max_ns };
		return;
	}
	if (!q->has)
		return;
	st->rq_p50_ns = q->p50_ns;
	st->rq_p99_ns = q->p99_ns;
	st->rq_max_ns = q->max_ns;
}

void sample_stats(const struct cg_acc *a, const struct cg_cum *c, const __u32 *hist,
		  struct hist_span span, __u64 dt_ns, const struct pmu_event_cfg *ev, int n,
		  struct snap_stats *st)
{
	if (!a->any || !dt_ns)
		return;
	st->has_cpu = true;
	st->cpu_cores = (double)a->oncpu_ns / (double)dt_ns;
	st->runs_per_s = (double)a->nr_switch_in * 1e9 / (double)dt_ns;
	interval_waits(a, hist, span, st);
	totals_since_start(c, st);
	pmu_rates(a, c, ev, n, st);
}

static int role_rate(const double *pmu_per_s, const struct pmu_event_cfg *ev, int n, __u32 role,
		     double *ret)
{
	for (int i = 0; i < n && i < KQOS_PMU_MAX; i++) {
		if (ev[i].role == role) {
			*ret = pmu_per_s[i];
			return 0;
		}
	}
	return -ENODATA;
}

int rate_cpi(const double *pmu_per_s, const struct pmu_event_cfg *ev, int n, double *ret)
{
	double cycles, insns;

	if (role_rate(pmu_per_s, ev, n, PMU_ROLE_CYCLES, &cycles) ||
	    role_rate(pmu_per_s, ev, n, PMU_ROLE_INSTRUCTIONS, &insns) || insns <= 0)
		return -ENODATA;
	*ret = cycles / insns;
	return 0;
}

int rate_mpki(const double *pmu_per_s, const struct pmu_event_cfg *ev, int n, double *ret)
{
	double misses, insns;

	if (role_rate(pmu_per_s, ev, n, PMU_ROLE_LLC_MISSES, &misses) ||
	    role_rate(pmu_per_s, ev, n, PMU_ROLE_INSTRUCTIONS, &insns) || insns <= 0)
		return -ENODATA;
	*ret = misses * 1000 / insns;
	return 0;
}
