// SPDX-License-Identifier: GPL-2.0
#include <linux/types.h>

#include <criterion/criterion.h>

#include "hist.h"
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
