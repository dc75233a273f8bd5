// SPDX-License-Identifier: GPL-2.0
/* mon_data: parsing "no value" states, reset/wrap-safe deltas, reading a fake tree. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>

#include "resctrl.h"
#include "resctrl_fake.h"

#define NS 1000000000ULL

static struct resctrl_fake *fake;
static struct resctrl *rc;

static void open_profile(const char *profile)
{
	cr_assert_eq(resctrl_fake__new(profile, &fake), 0);
	cr_assert_eq(resctrl_fake__open(fake, &rc), 0);
}

static void setup(void)
{
	open_profile(NULL);
}

static void teardown(void)
{
	resctrl_close(rc);
	resctrl_fake__free(fake);
	rc = NULL;
	fake = NULL;
}

Test(resctrl_mon, parse_numbers_and_no_value_words)
{
	enum resctrl_mon_state st;
	uint64_t v = 7;

	cr_assert_eq(resctrl_mon_parse("123456\n", &v, &st), 0);
	cr_assert_eq(v, 123456);
	cr_assert_eq(st, RESCTRL_MON_OK);
	v = 7;
	cr_assert_eq(resctrl_mon_parse("Unavailable\n", &v, &st), -ENODATA);
	cr_assert_eq(st, RESCTRL_MON_UNAVAILABLE);
	cr_assert_eq(v, 7, "a no-value reading must not write 0");
	cr_assert_eq(resctrl_mon_parse("Error\n", &v, &st), -ENODATA);
	cr_assert_eq(st, RESCTRL_MON_ERROR);
	cr_assert_eq(resctrl_mon_parse("Unassigned\n", &v, &st), -ENODATA);
	cr_assert_eq(st, RESCTRL_MON_UNASSIGNED);
	cr_assert_eq(resctrl_mon_parse("", &v, &st), -ENODATA);
	cr_assert_eq(st, RESCTRL_MON_MISSING);
	cr_assert_eq(resctrl_mon_parse("-1\n", &v, &st), -ENODATA);
	cr_assert_eq(resctrl_mon_parse("12x\n", &v, &st), -ENODATA);
}

Test(resctrl_mon, delta_plain_wrap_and_reset)
{
	uint64_t d;

	cr_assert_eq(resctrl_counter_delta(100, 350, &d), 0);
	cr_assert_eq(d, 250);
	cr_assert_eq(resctrl_counter_delta(UINT64_MAX - 9, 10, &d), 0);
	cr_assert_eq(d, 20);
	/* a group recreated: counter back near zero, never a ~1.8e19 delta */
	cr_assert_eq(resctrl_counter_delta(5000000000ULL, 1000, &d), -ERANGE);
	cr_assert_eq(resctrl_counter_delta(UINT64_MAX - 9, 1ULL << 41, &d), -ERANGE);
}

Test(resctrl_mon, rate_survives_unavailable_and_reset)
{
	struct resctrl_rate rt = { 0 };
	double bps = -1;

	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 1000, 1 * NS, &bps), -ENODATA);
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 3000, 2 * NS, &bps), 0);
	cr_assert_float_eq(bps, 2000.0, 1e-6);
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_UNAVAILABLE, 0, 3 * NS, &bps), -ENODATA);
	/* first good reading after "no value" is a new baseline, not a delta from 3000 */
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 50, 4 * NS, &bps), -ENODATA);
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 550, 4 * NS + NS / 2, &bps), 0);
	cr_assert_float_eq(bps, 1000.0, 1e-6);
	/* reset: lower value -> no rate, then rates resume from the new base */
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 10, 5 * NS, &bps), -ENODATA);
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 110, 6 * NS, &bps), 0);
	cr_assert_float_eq(bps, 100.0, 1e-6);
	/* time that does not advance gives no rate */
	cr_assert_eq(resctrl_rate_update(&rt, RESCTRL_MON_OK, 210, 6 * NS, &bps), -ENODATA);
}

Test(resctrl_mon, reads_domains_and_sum, .init = setup, .fini = teardown)
{
	struct resctrl_mon_value mv;

	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_fake__set_occupancy(fake, "kqos-BE", 0, 4 << 20), 0);
	cr_assert_eq(resctrl_fake__set_occupancy(fake, "kqos-BE", 1, 2 << 20), 0);
	cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_LLC_OCCUPANCY, &mv), 0);
	cr_assert_eq(mv.nr, 2);
	cr_assert_eq(mv.dom[0].id, 0);
	cr_assert_eq(mv.dom[0].bytes, 4 << 20);
	cr_assert_eq(mv.dom[1].bytes, 2 << 20);
	cr_assert(mv.is_sum_valid);
	cr_assert_eq(mv.sum, 6 << 20);
}

Test(resctrl_mon, ctrl_group_sums_its_mon_groups, .init = setup, .fini = teardown)
{
	struct resctrl_mon_value mv;

	cr_assert_eq(resctrl_group_create(rc, "LS"), 0);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "pod1"), 0);
	cr_assert_eq(resctrl_fake__add_mbm(fake, "kqos-LS", RESCTRL_EV_MBM_TOTAL, 0, 100), 0);
	cr_assert_eq(resctrl_fake__add_mbm(fake, "kqos-LS/mon_groups/kqos-pod1",
					   RESCTRL_EV_MBM_TOTAL, 0, 900),
		     0);
	cr_assert_eq(resctrl_mon_read(rc, "LS", "pod1", RESCTRL_EV_MBM_TOTAL, &mv), 0);
	cr_assert_eq(mv.dom[0].bytes, 900);
	cr_assert_eq(resctrl_mon_read(rc, "LS", NULL, RESCTRL_EV_MBM_TOTAL, &mv), 0);
	cr_assert_eq(mv.dom[0].bytes, 1000);
}

Test(resctrl_mon, no_value_states_are_not_zero, .init = setup, .fini = teardown)
{
	static const char *const words[] = { "Unavailable", "Error", "Unassigned" };
	static const enum resctrl_mon_state states[] = { RESCTRL_MON_UNAVAILABLE, RESCTRL_MON_ERROR,
							 RESCTRL_MON_UNASSIGNED };
	struct resctrl_mon_value mv;
	size_t i;

	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_LOCAL, 0, 5000), 0);
	for (i = 0; i < 3; i++) {
		cr_assert_eq(resctrl_fake__set_mon_state(fake, "kqos-BE", RESCTRL_EV_MBM_LOCAL, 1,
							 words[i]),
			     0);
		cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_MBM_LOCAL, &mv), -ENODATA);
		cr_assert_not(mv.is_sum_valid);
		cr_assert_eq(mv.dom[0].state, RESCTRL_MON_OK);
		cr_assert_eq(mv.dom[0].bytes, 5000);
		cr_assert_eq(mv.dom[1].state, states[i], "%s", words[i]);
	}
	cr_assert_eq(resctrl_fake__set_mon_state(fake, "kqos-BE", RESCTRL_EV_MBM_LOCAL, 1, NULL),
		     0);
	cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_MBM_LOCAL, &mv), 0);
}

Test(resctrl_mon, rate_across_fake_reset, .init = setup, .fini = teardown)
{
	struct resctrl_mon_value mv;
	struct resctrl_rate rt = { 0 };
	double bps = 0;
	uint64_t t = NS;

	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 1 << 30), 0);
	cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_MBM_TOTAL, &mv), 0);
	cr_assert_eq(resctrl_rate_update(&rt, mv.dom[0].state, mv.dom[0].bytes, t, &bps), -ENODATA);
	cr_assert_eq(resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 1 << 20), 0);
	cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_MBM_TOTAL, &mv), 0);
	cr_assert_eq(resctrl_rate_update(&rt, mv.dom[0].state, mv.dom[0].bytes, t += NS, &bps), 0);
	cr_assert_float_eq(bps, 1 << 20, 1e-3);
	cr_assert_eq(resctrl_fake__reset_counters(fake, "kqos-BE"), 0);
	cr_assert_eq(resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 10), 0);
	cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_MBM_TOTAL, &mv), 0);
	bps = -1;
	cr_assert_eq(resctrl_rate_update(&rt, mv.dom[0].state, mv.dom[0].bytes, t += NS, &bps),
		     -ENODATA);
	cr_assert_float_eq(bps, -1, 1e-9, "a reset must not produce a rate");
}

Test(resctrl_mon, snc_sub_domains, .fini = teardown)
{
	struct resctrl_mon_value mv;
	unsigned int i;

	open_profile("snc2");
	cr_assert_eq(resctrl_fake__add_mbm(fake, ".", RESCTRL_EV_MBM_TOTAL, 1, 1001), 0);
	cr_assert_eq(resctrl_mon_read(rc, NULL, NULL, RESCTRL_EV_MBM_TOTAL, &mv), 0);
	cr_assert_eq(mv.nr, 2);
	cr_assert_eq(mv.dom[1].nr_sub, 2);
	cr_assert_eq(mv.dom[1].bytes, 1001);
	cr_assert_eq(mv.dom[1].sub_bytes[0] + mv.dom[1].sub_bytes[1], 1001);
	for (i = 0; i < 2; i++)
		cr_assert(mv.dom[1].sub_ids[i] == 2 || mv.dom[1].sub_ids[i] == 3);
	cr_assert_eq(mv.sum, 1001, "subs must not be counted twice");
}

Test(resctrl_mon, unsupported_event_and_missing_group, .init = setup, .fini = teardown)
{
	struct resctrl_mon_value mv;

	cr_assert_eq(resctrl_mon_read(rc, "nope", NULL, RESCTRL_EV_LLC_OCCUPANCY, &mv), -ENOENT);
	cr_assert_eq(resctrl_mon_read(rc, NULL, NULL, RESCTRL_EV_MAX, &mv), -EOPNOTSUPP);
}
