// SPDX-License-Identifier: GPL-2.0
#include <string.h>
#include <linux/types.h>

#include <criterion/criterion.h>

#include "histstore.h"
#include "rates.h"

static struct cg_totals t(__u64 id, __u64 oncpu, __u64 runs)
{
	struct cg_totals x;

	memset(&x, 0, sizeof(x));
	x.cgid = id;
	x.oncpu_ns = oncpu;
	x.nr_switch_in = runs;
	return x;
}

Test(sample, cpu_cores_and_runs_per_second)
{
	struct cg_totals prev[] = { t(1, 1000, 10), t(2, 0, 0) };
	struct cg_totals cur[] = { t(1, 1000 + 500000000, 110), t(2, 2000000000, 50) };
	struct test_rate r[4];
	size_t n = test_rates(prev, 2, cur, 2, 1000000000, NULL, 0, r, 4);

	cr_assert_eq(n, 2);
	cr_assert_float_eq(r[0].st.cpu_cores, 0.5, 1e-9);
	cr_assert_float_eq(r[0].st.runs_per_s, 100, 1e-9);
	cr_assert_float_eq(r[1].st.cpu_cores, 2.0, 1e-9);
}

Test(sample, idle_cgroups_are_left_out_and_new_ones_start_at_zero)
{
	struct cg_totals prev[] = { t(1, 5, 5), t(3, 7, 7) };
	struct cg_totals cur[] = { t(1, 5, 5), t(2, 100, 1), t(3, 7, 7) };
	struct test_rate r[4];
	size_t n = test_rates(prev, 2, cur, 3, 1000, NULL, 0, r, 4);

	cr_assert_eq(n, 1);
	cr_assert_eq(r[0].cgid, 2);
	cr_assert_float_eq(r[0].st.cpu_cores, 0.1, 1e-9);
}

Test(sample, histogram_delta_wraps_and_max_is_exact_when_new)
{
	struct cg_totals prev = t(1, 0, 0), cur = t(1, 10, 2);
	__u32 now[KQOS_HIST_SLOTS] = { 0 };
	struct hist_store hs = { 0 };
	struct hist_span span;
	struct test_rate r;
	__u32 s = kqos_hist_slot(5000);
	const __u32 *d;

	cr_assert_eq(hist_store_sync(&hs, &cur, 1), 0);
	now[s] = 0xffffffffu;
	hist_store_read(&hs, 0, now, &span);
	now[s] = 1; /* the u32 slot wrapped between reads */
	cr_assert_eq(hist_store_sync(&hs, &cur, 1), 0);
	d = hist_store_read(&hs, 0, now, &span);
	cr_assert_eq(d[s - span.lo], 2);
	cr_assert_eq(hist_store_sync(&hs, &cur, 1), 0);
	hist_store_read(&hs, 0, now, &span);
	cr_assert_geq(span.lo, span.hi, "the read becomes the next one's base");
	cr_assert_eq(hist_store_sync(&hs, &cur, 1), 0);
	now[s] = 3;
	d = hist_store_read(&hs, 0, now, &span);
	cr_assert_eq(d[s - span.lo], 2);
	cur.rq_hist = d;
	cur.rq_span = span;
	prev.rq_wait_cnt = 100;
	cur.rq_wait_cnt = 102;
	cur.rq_wait_ns = prev.rq_wait_ns + 10000;
	prev.rq_wait_max_ns = 4000;
	cur.rq_wait_max_ns = 5000;
	cr_assert_eq(test_rates(&prev, 1, &cur, 1, 1000000000, NULL, 0, &r, 1), 1);
	cr_assert_eq(r.st.rq_waits, 2);
	cr_assert_float_eq(r.st.rq_wait_mean_ns, 5000, 1e-9);
	cr_assert_eq(r.st.rq_max_ns, 5000);
	cr_assert_leq(r.st.rq_p99_ns, 5000);
	cr_assert_geq(r.st.rq_p99_ns, kqos_hist_slot_lower(s));
	hist_store_fini(&hs);
}

Test(sample, max_without_a_new_record_comes_from_the_histogram)
{
	struct cg_totals prev = t(1, 0, 0), cur = t(1, 10, 1);
	__u32 h[KQOS_HIST_SLOTS] = { 0 };
	struct test_rate r;
	__u32 s = kqos_hist_slot(2000);

	prev.rq_wait_max_ns = cur.rq_wait_max_ns = 1000000; /* an old record, not this interval */
	cur.rq_wait_cnt = 1;
	cur.rq_wait_ns = 2000;
	h[s] = 1;
	cur.rq_hist = h;
	test_rates(&prev, 1, &cur, 1, 1000, NULL, 0, &r, 1);
	cr_assert_eq(r.st.rq_max_ns, kqos_hist_slot_lower(s) + kqos_hist_slot_width(s) - 1);
}

Test(sample, zero_interval_yields_nothing)
{
	struct cg_totals cur = t(1, 10, 1);
	struct test_rate r;

	cr_assert_eq(test_rates(NULL, 0, &cur, 1, 0, NULL, 0, &r, 1), 0);
}

/* Histograms read on a slower cadence than the counters (collector.histInterval). */
Test(sample, a_tick_without_a_histogram_marks_the_delta)
{
	struct cg_totals prev = t(1, 0, 0), cur = t(1, 100, 2), d;
	__u32 h[KQOS_HIST_SLOTS] = { [41] = 2 };

	cur.no_hist = true; /* not read this tick */
	totals_delta(&prev, &cur, &d);
	cr_expect(d.no_hist, "the delta says its histogram is not this tick's");
	cr_expect_null(d.rq_hist);
	cur.no_hist = false;
	cur.rq_hist = h;
	totals_delta(&prev, &cur, &d);
	cr_expect_not(d.no_hist);
	cr_expect_eq(d.rq_hist, h, "the read's increase, shared");
}

/* The store follows the collector's list: the last read carries across a change of cgroups. */
Test(sample, the_hist_store_carries_last_reads_and_starts_new_cgroups_at_zero)
{
	struct cg_totals a[] = { t(1, 0, 0), t(2, 0, 0) }, b[] = { t(2, 0, 0), t(3, 0, 0) };
	__u32 now[KQOS_HIST_SLOTS] = { [40] = 7 };
	struct hist_store hs = { 0 };
	struct hist_span span;
	const __u32 *d;

	cr_assert_eq(hist_store_sync(&hs, a, 2), 0);
	d = hist_store_read(&hs, 1, now, &span); /* cgroup 2: 7 waits since it started */
	cr_expect(span.lo <= 40 && span.hi > 40 && span.hi - span.lo == HIST_SPAN_BLOCK,
		  "the block of slot 40 only: [%u, %u)", span.lo, span.hi);
	cr_expect_eq(d[40 - span.lo], 7, "handed out from the span's first slot");
	cr_assert_eq(hist_store_sync(&hs, b, 2), 0); /* 1 gone, 3 new: 2 moves to index 0 */
	now[40] = 10;
	d = hist_store_read(&hs, 0, now, &span);
	cr_expect_eq(d[40 - span.lo], 3, "cgroup 2's increase since its last read");
	d = hist_store_read(&hs, 1, now, &span);
	cr_expect_eq(d[40 - span.lo], 10, "cgroup 3 started at zero");
	cr_assert_eq(hist_store_sync(&hs, b, 2), 0); /* unchanged: nothing moves */
	d = hist_store_read(&hs, 0, now, &span);
	cr_expect_not_null(d);
	cr_expect_geq(span.lo, span.hi, "no increase: an empty span");
	cr_expect_null(hist_store_read(&hs, 5, now, &span), "no such entry");
	hist_store_fini(&hs);
}

/*
 * Per-CPU rows are summed; a block that did not move is not written, but one inside the span
 * reads as no increase, whatever an earlier read left where it is kept.
 */
Test(sample, a_rows_read_sums_cpus_and_zeroes_still_blocks_inside_its_span)
{
	struct cg_totals a[] = { t(1, 0, 0) };
	__u32 rows[2][KQOS_HIST_SLOTS] = { 0 };
	struct hist_store hs = { 0 };
	struct hist_span span;
	const __u32 *d;

	cr_assert_eq(hist_store_sync(&hs, a, 1), 0);
	rows[0][70] = 2;
	rows[1][70] = 3;
	rows[0][40] = 1;
	d = hist_store_read_rows(&hs, 0, rows[0], 2, &span);
	cr_expect(span.lo == 32 && span.hi == 80, "[%u, %u)", span.lo, span.hi);
	cr_expect_eq(d[70 - 32], 5, "both CPUs' waits");
	cr_expect_eq(d[50 - 32], 0, "a still block between: none");
	cr_assert_eq(hist_store_sync(&hs, a, 1), 0); /* the next read reuses the pool */
	rows[1][40] = 3; /* slot 70 stays, 40 and 100 move */
	rows[0][100] = 2;
	d = hist_store_read_rows(&hs, 0, rows[0], 2, &span);
	cr_expect(span.lo == 32 && span.hi == 112, "[%u, %u)", span.lo, span.hi);
	cr_expect_eq(d[40 - 32], 3);
	cr_expect_eq(d[100 - 32], 2);
	cr_expect_eq(d[70 - 32], 0, "a still block inside the span is zero, not the last read's 5");
	cr_expect_eq(hist_total_span(d, span), 5);
	hist_store_fini(&hs);
}

Test(sample, stale_quantiles_are_the_last_fresh_ones)
{
	struct rq_quantiles q = { 0 };
	struct snap_stats fresh = {
		.rq_waits = 10, .rq_p50_ns = 100, .rq_p99_ns = 900, .rq_max_ns = 950
	};
	struct snap_stats stale = { .rq_waits = 4, .rq_hist_stale = true };
	struct snap_stats idle = { .rq_hist_stale = true };

	rq_quantiles_carry(&q, &stale);
	cr_expect_eq(stale.rq_p99_ns, 0, "nothing fresh yet: nothing to carry");
	rq_quantiles_carry(&q, &fresh);
	rq_quantiles_carry(&q, &stale);
	cr_expect_eq(stale.rq_p50_ns, 100);
	cr_expect_eq(stale.rq_p99_ns, 900);
	cr_expect_eq(stale.rq_max_ns, 950);
	rq_quantiles_carry(&q, &idle);
	cr_expect_eq(idle.rq_p99_ns, 0, "no waits this tick: no quantiles");
}
