// SPDX-License-Identifier: GPL-2.0
#include <linux/types.h>

#include <criterion/criterion.h>

#include "hist.h"
#include "histstore.h"
#include "sample.h"

Test(hist, exact_slots_below_sixteen)
{
	for (__u64 v = 0; v < 16; v++) {
		cr_assert_eq(kqos_hist_slot(v), v);
		cr_assert_eq(kqos_hist_slot_lower(v), v);
		cr_assert_eq(kqos_hist_slot_width(v), 1);
	}
}

Test(hist, slots_are_contiguous_and_ordered)
{
	/* Every slot's range starts where the previous one ended. */
	for (__u32 s = 1; s < KQOS_HIST_SLOTS; s++)
		cr_assert_eq(kqos_hist_slot_lower(s),
			     kqos_hist_slot_lower(s - 1) + kqos_hist_slot_width(s - 1), "slot %u",
			     s);
}

Test(hist, every_value_lands_inside_its_slot)
{
	__u64 v = 1;

	for (int i = 0; i < 2000 && v < (1ULL << 33); i++, v = v * 21 / 20 + 1) {
		__u32 s = kqos_hist_slot(v);

		cr_assert_leq(kqos_hist_slot_lower(s), v, "v=%llu", (unsigned long long)v);
		cr_assert_lt(v, kqos_hist_slot_lower(s) + kqos_hist_slot_width(s), "v=%llu",
			     (unsigned long long)v);
	}
}

Test(hist, slot_width_is_at_most_an_eighth)
{
	for (__u32 s = 16; s < KQOS_HIST_SLOTS; s++)
		cr_assert_leq(kqos_hist_slot_width(s) * 8, kqos_hist_slot_lower(s), "slot %u", s);
}

Test(hist, overflow_goes_to_the_last_slot)
{
	cr_assert_eq(kqos_hist_slot(1ULL << 40), KQOS_HIST_SLOTS - 1);
	cr_assert_eq(kqos_hist_slot(~0ULL), KQOS_HIST_SLOTS - 1);
	cr_assert_eq(kqos_hist_slot_lower(KQOS_HIST_SLOTS - 1), 15ULL << 30);
}

Test(hist, log2)
{
	cr_assert_eq(kqos_log2_u64(1), 0);
	cr_assert_eq(kqos_log2_u64(2), 1);
	cr_assert_eq(kqos_log2_u64(3), 1);
	cr_assert_eq(kqos_log2_u64(1ULL << 63), 63);
	cr_assert_eq(kqos_log2_u64((1ULL << 40) + 5), 40);
}

Test(hist_quantile, zero_samples_is_zero)
{
	__u32 h[KQOS_HIST_SLOTS] = { 0 };

	cr_assert_eq(hist_quantile(h, 0, 0.99), 0);
}

Test(hist_quantile, one_sample_is_its_slot_midpoint)
{
	__u32 h[KQOS_HIST_SLOTS] = { 0 };
	__u32 s = kqos_hist_slot(100000);

	h[s] = 1;
	cr_assert_eq(hist_quantile(h, 1, 0.5),
		     kqos_hist_slot_lower(s) + kqos_hist_slot_width(s) / 2);
	cr_assert_eq(hist_quantile(h, 1, 0.99), hist_quantile(h, 1, 0.5));
}

Test(hist_quantile, overflow_slot_reports_its_lower_bound)
{
	__u32 h[KQOS_HIST_SLOTS] = { 0 };

	h[KQOS_HIST_SLOTS - 1] = 3;
	cr_assert_eq(hist_quantile(h, 3, 0.99), kqos_hist_slot_lower(KQOS_HIST_SLOTS - 1));
}

/* p99 of a spread of values is within 10 % of the exact p99. */
Test(hist_quantile, p99_within_ten_percent)
{
	static __u64 vals[10000];
	__u32 h[KQOS_HIST_SLOTS] = { 0 };
	__u64 seed = 42, exact, got;

	for (int i = 0; i < 10000; i++) {
		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		/* log-uniform between 1 us and 10 ms */
		vals[i] = (__u64)(1000.0 *
				  __builtin_pow(10.0, (double)(seed >> 11) / (1ULL << 53) * 4));
		h[kqos_hist_slot(vals[i])]++;
	}
	for (int i = 1; i < 10000; i++) /* insertion sort is fine for a test */
		for (int j = i; j > 0 && vals[j - 1] > vals[j]; j--) {
			__u64 t = vals[j];

			vals[j] = vals[j - 1];
			vals[j - 1] = t;
		}
	for (int q = 50; q <= 99; q += 49) {
		exact = vals[(10000 * q + 99) / 100 - 1];
		got = hist_quantile(h, 10000, q / 100.0);
		cr_assert_leq(got > exact ? got - exact : exact - got, exact / 10,
			      "p%d exact=%llu got=%llu", q, (unsigned long long)exact,
			      (unsigned long long)got);
	}
}

/* The export bucket of slot @s by its definition: the first power-of-two bound >= its top. */
static int bucket_by_bound(__u32 s)
{
	__u64 top = kqos_hist_slot_lower(s) + kqos_hist_slot_width(s);

	for (int b = 0; b < SNAP_RQ_BUCKETS; b++)
		if (top <= 1ULL << (SNAP_RQ_FIRST_LOG + b))
			return b;
	return -1;
}

static __u64 rnd(__u64 *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

/* @h as the first read of a new cgroup hands it out: its increase over its span. */
static const __u32 *first_read(const __u32 *h, struct hist_span *span)
{
	static struct hist_store hs;
	struct cg_totals one = { .cgid = 1 };

	hist_store_fini(&hs); /* a new cgroup each time: its last read is zero */
	cr_assert_eq(hist_store_sync(&hs, &one, 1), 0);
	return hist_store_read(&hs, 0, h, span);
}

/* Folding a block of slots at a time is folding each slot by its bound, over any span. */
Test(hist, fold_by_blocks_matches_the_bucket_of_each_slot)
{
	__u64 x = 88172645463325252ULL;

	for (int round = 0; round < 200; round++) {
		__u32 h[KQOS_HIST_SLOTS] = { 0 };
		__u64 want[SNAP_RQ_BUCKETS] = { 0 }, all[SNAP_RQ_BUCKETS] = { 0 };
		__u64 got[SNAP_RQ_BUCKETS] = { 0 };
		struct hist_span span;
		const __u32 *d;

		for (int k = 0; k < 1 + round % 12; k++)
			h[rnd(&x) % KQOS_HIST_SLOTS] += (__u32)(1 + rnd(&x) % 1000);
		for (__u32 s = 0; s < KQOS_HIST_SLOTS; s++)
			if (bucket_by_bound(s) >= 0)
				want[bucket_by_bound(s)] += h[s];
		d = first_read(h, &span);
		hist_fold(d, span, got);
		hist_fold(h, (struct hist_span){ 0 }, all);
		for (int b = 0; b < SNAP_RQ_BUCKETS; b++) {
			cr_assert_eq(got[b], want[b], "round %d bucket %d", round, b);
			cr_assert_eq(all[b], want[b], "round %d bucket %d, whole", round, b);
		}
	}
}

/* A delta's span holds every slot that moved, in whole blocks, and is empty when none did. */
Test(hist, a_deltas_span_holds_every_change)
{
	__u64 x = 0x9e3779b97f4a7c15ULL;
	__u32 last[KQOS_HIST_SLOTS] = { 0 }, now[KQOS_HIST_SLOTS] = { 0 }, want[KQOS_HIST_SLOTS];
	struct cg_totals one = { .cgid = 1 };
	struct hist_store hs = { 0 };
	struct hist_span span;
	const __u32 *d;

	for (int round = 0; round < 200; round++) {
		for (int k = 0; k < 1 + round % 5; k++)
			now[rnd(&x) % KQOS_HIST_SLOTS]++;
		for (__u32 s = 0; s < KQOS_HIST_SLOTS; s++) {
			want[s] = now[s] - last[s];
			last[s] = now[s];
		}
		cr_assert_eq(hist_store_sync(&hs, &one, 1), 0);
		d = hist_store_read(&hs, 0, now, &span);
		cr_assert_lt(span.lo, span.hi);
		cr_assert_eq(span.lo % HIST_SPAN_BLOCK, 0);
		cr_assert_eq(span.hi % HIST_SPAN_BLOCK, 0);
		for (__u32 s = 0; s < KQOS_HIST_SLOTS; s++) {
			if (want[s])
				cr_assert(s >= span.lo && s < span.hi, "slot %u outside [%u, %u)",
					  s, span.lo, span.hi);
			if (s >= span.lo && s < span.hi)
				cr_assert_eq(d[s - span.lo], want[s], "slot %u", s);
		}
		cr_assert_eq(hist_quantile_span(d, span, hist_total(want), 0.99),
			     hist_quantile(want, hist_total(want), 0.99));
		cr_assert_eq(hist_total_span(d, span), hist_total(want));
	}
	cr_assert_eq(hist_store_sync(&hs, &one, 1), 0);
	d = hist_store_read(&hs, 0, now, &span);
	cr_assert_geq(span.lo, span.hi, "nothing moved");
	cr_assert_eq(hist_total_span(d, span), 0);
	hist_store_fini(&hs);
}
