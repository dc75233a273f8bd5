// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sample.h"

static __u64 slot_value(__u32 slot)
{
	if (slot == KQOS_HIST_SLOTS - 1)
		return kqos_hist_slot_lower(slot);
	return kqos_hist_slot_lower(slot) + kqos_hist_slot_width(slot) / 2;
}

__u64 hist_total(const __u32 *hist)
{
	__u64 n = 0;

	for (__u32 i = 0; i < KQOS_HIST_SLOTS; i++)
		n += hist[i];
	return n;
}

__u64 hist_quantile(const __u32 *hist, __u64 total, double q)
{
	__u64 rank, seen = 0;

	if (!total)
		return 0;
	rank = (__u64)ceil(q * (double)total);
	if (rank < 1)
		rank = 1;
	for (__u32 i = 0; i < KQOS_HIST_SLOTS; i++) {
		seen += hist[i];
		if (seen >= rank)
			return slot_value(i);
	}
	return slot_value(KQOS_HIST_SLOTS - 1);
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
	for (int i = 0; i < KQOS_HIST_SLOTS; i++)
		d->rq_hist[i] = cur->rq_hist[i] - prev->rq_hist[i];
}

__u64 totals_interval_max(const struct cg_totals *prev, const struct cg_totals *cur,
			  const struct cg_totals *d)
{
	int top = KQOS_HIST_SLOTS - 1;
	__u64 bound;

	if (!prev || cur->rq_wait_max_ns > prev->rq_wait_max_ns)
		return cur->rq_wait_max_ns;
	while (top > 0 && !d->rq_hist[top])
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

static void rate_one(const struct cg_totals *prev, const struct cg_totals *cur, __u64 dt_ns,
		     struct cg_rate *r)
{
	static const struct cg_totals zero;
	struct cg_totals d;

	totals_delta(prev ? prev : &zero, cur, &d);
	memset(r, 0, sizeof(*r));
	r->cgid = cur->cgid;
	r->cpu_cores = (double)d.oncpu_ns / (double)dt_ns;
	r->runs_per_s = (double)d.nr_switch_in * 1e9 / (double)dt_ns;
	r->waits = d.rq_wait_cnt;
	totals_pmu_per_s(&d, dt_ns, r->pmu_per_s);
	for (int i = 0; i < KQOS_PMU_MAX; i++) {
		r->pmu_count[i] = d.pmu_count[i];
		/* untracked times (software events, never multiplexed) read as always running */
		r->pmu_running_ratio[i] =
			d.pmu_enabled[i] ? (double)d.pmu_running[i] / (double)d.pmu_enabled[i] : 1;
	}
	if (!d.rq_wait_cnt)
		return;
	r->wait_mean_ns = (double)d.rq_wait_ns / (double)d.rq_wait_cnt;
	r->wait_max_ns = totals_interval_max(prev, cur, &d);
	r->wait_p50_ns = hist_quantile(d.rq_hist, hist_total(d.rq_hist), 0.50);
	r->wait_p99_ns = hist_quantile(d.rq_hist, hist_total(d.rq_hist), 0.99);
	/* A midpoint may overshoot the largest value actually seen. */
	if (r->wait_p50_ns > r->wait_max_ns)
		r->wait_p50_ns = r->wait_max_ns;
	if (r->wait_p99_ns > r->wait_max_ns)
		r->wait_p99_ns = r->wait_max_ns;
}

size_t sample_rates(const struct cg_totals *prev, size_t nprev, const struct cg_totals *cur,
		    size_t ncur, __u64 dt_ns, struct cg_rate *out, size_t cap)
{
	size_t i = 0, n = 0;

	if (!dt_ns)
		return 0;
	for (size_t j = 0; j < ncur && n < cap; j++) {
		const struct cg_totals *p = NULL;

		while (i < nprev && prev[i].cgid < cur[j].cgid)
			i++;
		if (i < nprev && prev[i].cgid == cur[j].cgid)
			p = &prev[i];
		rate_one(p, &cur[j], dt_ns, &out[n]);
		if (out[n].cpu_cores > 0 || out[n].runs_per_s > 0 || out[n].waits)
			n++;
	}
	return n;
}

static int role_rate(const struct cg_rate *r, const struct pmu_event_cfg *ev, int n, __u32 role,
		     double *ret)
{
	for (int i = 0; i < n && i < KQOS_PMU_MAX; i++) {
		if (ev[i].role == role) {
			*ret = r->pmu_per_s[i];
			return 0;
		}
	}
	return -ENODATA;
}

int rate_cpi(const struct cg_rate *r, const struct pmu_event_cfg *ev, int n, double *ret)
{
	double cycles, insns;

	if (role_rate(r, ev, n, PMU_ROLE_CYCLES, &cycles) ||
	    role_rate(r, ev, n, PMU_ROLE_INSTRUCTIONS, &insns) || insns <= 0)
		return -ENODATA;
	*ret = cycles / insns;
	return 0;
}

int rate_mpki(const struct cg_rate *r, const struct pmu_event_cfg *ev, int n, double *ret)
{
	double misses, insns;

	if (role_rate(r, ev, n, PMU_ROLE_LLC_MISSES, &misses) ||
	    role_rate(r, ev, n, PMU_ROLE_INSTRUCTIONS, &insns) || insns <= 0)
		return -ENODATA;
	*ret = misses * 1000 / insns;
	return 0;
}
