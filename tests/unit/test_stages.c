// SPDX-License-Identifier: GPL-2.0
/* The agent's stage timers: log2 µs buckets, quantiles as bucket bounds capped at the max. */
#include <criterion/criterion.h>

#include "stages.h"

Test(stages, a_duration_lands_in_the_first_bucket_that_holds_it)
{
	struct agent_stages st = { 0 };

	stages_add(&st, STAGE_BUILD, 1000); /* 1 us: bucket 0 */
	stages_add(&st, STAGE_BUILD, 1001); /* just over: bucket 1 (2 us) */
	stages_add(&st, STAGE_BUILD, 3000000); /* 3 ms: bucket 12 (4096 us) */
	stages_add(&st, STAGE_BUILD, 60ULL * 1000000000ULL); /* a minute: the last, +Inf */
	cr_expect_eq(st.s[STAGE_BUILD].bucket[0], 1);
	cr_expect_eq(st.s[STAGE_BUILD].bucket[1], 1);
	cr_expect_eq(st.s[STAGE_BUILD].bucket[12], 1);
	cr_expect_eq(st.s[STAGE_BUILD].bucket[STAGE_BUCKETS - 1], 1);
	cr_expect_eq(st.s[STAGE_BUILD].count, 4);
	cr_expect_eq(st.s[STAGE_BUILD].max_ns, 60ULL * 1000000000ULL);
	cr_expect_eq(st.s[STAGE_BUILD].last_ns, 60ULL * 1000000000ULL);
	cr_expect_eq(st.s[STAGE_COLLECT].count, 0, "other stages untouched");
	cr_expect_eq(stage_bucket_le_us(12), 4096);
	cr_expect_eq(stage_bucket_le_us(STAGE_BUCKETS - 1), 0, "+Inf");
}

Test(stages, quantiles_are_bucket_bounds_never_above_the_largest_seen)
{
	struct agent_stages st = { 0 };

	cr_expect_float_eq(stage_quantile_us(&st.s[STAGE_TICK], 0.99), 0, 1e-9, "nothing yet");
	for (int i = 0; i < 99; i++)
		stages_add(&st, STAGE_TICK, 100000); /* 100 us: bucket 7 (128 us) */
	stages_add(&st, STAGE_TICK, 5000000); /* 5 ms */
	cr_expect_float_eq(stage_quantile_us(&st.s[STAGE_TICK], 0.5), 128, 1e-9);
	cr_expect_float_eq(stage_quantile_us(&st.s[STAGE_TICK], 0.99), 128, 1e-9);
	cr_expect_float_eq(stage_quantile_us(&st.s[STAGE_TICK], 1.0), 5000, 1e-9,
			   "8192 us bound capped at the 5 ms seen");
	cr_expect_str_eq(stage_name(STAGE_WALL), "wall");
	cr_expect_str_eq(stage_name(STAGE_COLLECT), "collect");
}
