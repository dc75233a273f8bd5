// SPDX-License-Identifier: GPL-2.0
/* Pure schemata code: parse/format, the kernel's value checks, koordinator's formulas. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "resctrl.h"

static const struct resctrl_res_info intel_l3 = {
	.is_present = true,
	.is_cache = true,
	.num_closids = 16,
	.cbm_mask = 0x7ff,
	.cbm_len = 11,
	.min_cbm_bits = 1,
};

static const struct resctrl_res_info intel_mb = {
	.is_present = true,
	.num_closids = 16,
	.min_bw = 10,
	.bw_gran = 10,
	.max_bw = 100,
	.mb_unit = RESCTRL_MB_PERCENT,
};

static const struct resctrl_res_info amd_mb = {
	.is_present = true,
	.num_closids = 16,
	.min_bw = 0,
	.bw_gran = 1,
	.max_bw = 2048,
	.mb_unit = RESCTRL_MB_AMD,
};

static uint64_t val(const struct resctrl_schemata *s, enum resctrl_res res, unsigned int id)
{
	uint64_t v = 0xdead;

	cr_assert_eq(resctrl_sline_get(&s->res[res], id, &v), 0, "%s:%u missing",
		     resctrl_res_name(res), id);
	return v;
}

Test(resctrl_schemata, parses_padded_names)
{
	struct resctrl_schemata s;

	cr_assert_eq(resctrl_schemata_parse("    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n", &s), 0);
	cr_assert_eq(s.res[RESCTRL_RES_L3].nr, 2);
	cr_assert_eq(val(&s, RESCTRL_RES_L3, 1), 0x7ff);
	cr_assert_eq(val(&s, RESCTRL_RES_MB, 0), 100);
	cr_assert_eq(s.res[RESCTRL_RES_L2].nr, 0);
}

Test(resctrl_schemata, parses_legacy_zero_and_space_padding)
{
	struct resctrl_schemata s;

	cr_assert_eq(resctrl_schemata_parse("L3:0=07f;1=7ff\nMB:0=100;1=  16\n", &s), 0);
	cr_assert_eq(val(&s, RESCTRL_RES_L3, 0), 0x7f);
	cr_assert_eq(val(&s, RESCTRL_RES_MB, 1), 16);
}

Test(resctrl_schemata, parses_cdp_l2_smba_and_trailing_semicolon)
{
	struct resctrl_schemata s;
	const char *in = "L3CODE:0=fffff;1=ff\nL3DATA:0=f;1=f;\nL2:0=3;\n  SMBA:0=64;2=2048\n"
			 "    MB:0=2048;2=16\n";

	cr_assert_eq(resctrl_schemata_parse(in, &s), 0);
	cr_assert_eq(val(&s, RESCTRL_RES_L3CODE, 0), 0xfffff);
	cr_assert_eq(val(&s, RESCTRL_RES_L3DATA, 1), 0xf);
	cr_assert_eq(s.res[RESCTRL_RES_L3DATA].nr, 2);
	cr_assert_eq(val(&s, RESCTRL_RES_L2, 0), 3);
	cr_assert_eq(val(&s, RESCTRL_RES_SMBA, 2), 2048);
	cr_assert_eq(val(&s, RESCTRL_RES_MB, 2), 16);
	cr_assert_eq(s.res[RESCTRL_RES_L3].nr, 0);
}

Test(resctrl_schemata, skips_unknown_resources)
{
	struct resctrl_schemata s;

	cr_assert_eq(resctrl_schemata_parse("L3:0=f\nFOO:0=1\n", &s), 0);
	cr_assert_eq(val(&s, RESCTRL_RES_L3, 0), 0xf);
}

Test(resctrl_schemata, rejects_malformed_lines)
{
	static const char *const bad[] = {
		"L3\n",
		"L3:\n",
		"L3:0\n",
		"L3:x=f\n",
		"L3:0=xyz\n",
		"L3:0=f;0=f\n",
		"MB:0=12a\n",
		"L3:uninitialized\n",
		"L3:0=f\nL3:1=f\n",
		"MB:0=-5\n",
	};
	struct resctrl_schemata s;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(resctrl_schemata_parse(bad[i], &s), -EINVAL, "accepted '%s'", bad[i]);
}

Test(resctrl_schemata, format_ends_with_newline_and_writes_all_without_cur)
{
	struct resctrl_schemata s = { 0 };
	char buf[256];
	int n;

	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 0, 0xf);
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 1, 0x3c);
	resctrl_sline_set(&s.res[RESCTRL_RES_MB], 0, 30);
	n = resctrl_schemata_format(&s, NULL, buf, sizeof(buf));
	cr_assert_str_eq(buf, "L3:0=f;1=3c\nMB:0=30\n");
	cr_assert_eq(n, (int)strlen(buf));
}

Test(resctrl_schemata, format_writes_only_changed_lines)
{
	struct resctrl_schemata cur, want;
	char buf[256];

	cr_assert_eq(resctrl_schemata_parse("    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n", &cur), 0);
	want = cur;
	cr_assert_eq(resctrl_schemata_format(&want, &cur, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "");
	resctrl_sline_set(&want.res[RESCTRL_RES_MB], 1, 50);
	cr_assert_gt(resctrl_schemata_format(&want, &cur, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "MB:0=100;1=50\n");
}

Test(resctrl_schemata, format_reports_short_buffer)
{
	struct resctrl_schemata s = { 0 };
	char buf[8];

	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 0, 0x7ff);
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 1, 0x7ff);
	cr_assert_eq(resctrl_schemata_format(&s, NULL, buf, sizeof(buf)), -ENOSPC);
}

Test(resctrl_schemata, round_trips_through_a_buffer)
{
	struct resctrl_schemata a, b;
	char buf[256];

	cr_assert_eq(resctrl_schemata_parse("L3CODE:0=f0\nL3DATA:0=f\nL2:1=3\nMB:0=40\nSMBA:1=8\n",
					    &a),
		     0);
	cr_assert_gt(resctrl_schemata_format(&a, NULL, buf, sizeof(buf)), 0);
	cr_assert_eq(resctrl_schemata_parse(buf, &b), 0);
	cr_assert_eq(memcmp(&a, &b, sizeof(a)), 0);
}

struct cbm_case {
	uint64_t cbm;
	unsigned int min_bits;
	bool is_sparse;
	const char *msg; /* NULL = accepted */
};

Test(resctrl_schemata, check_cbm_uses_kernel_messages)
{
	static const struct cbm_case cases[] = {
		{ 0x7ff, 1, false, NULL },
		{ 0x3c, 1, false, NULL },
		{ 0x0, 1, false, "Mask out of range" },
		{ 0x0, 0, false, NULL },
		{ 0xfff, 1, false, "Mask out of range" },
		{ 0xf7, 1, false, "The mask f7 has non-consecutive 1-bits" },
		{ 0xf7, 1, true, NULL },
		{ 0x5, 2, false, "The mask 5 has non-consecutive 1-bits" },
		{ 0x4, 2, false, "Need at least 2 bits in the mask" },
		{ 0x6, 2, false, NULL },
	};
	struct resctrl_res_info ri = intel_l3;
	char msg[128];
	size_t i;
	int err;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ri.min_cbm_bits = cases[i].min_bits;
		ri.is_sparse = cases[i].is_sparse;
		msg[0] = '\0';
		err = resctrl_check_cbm(&ri, cases[i].cbm, msg, sizeof(msg));
		if (!cases[i].msg) {
			cr_expect_eq(err, 0, "cbm %lx: %s", (unsigned long)cases[i].cbm, msg);
			continue;
		}
		cr_expect_eq(err, -EINVAL, "cbm %lx accepted", (unsigned long)cases[i].cbm);
		cr_expect_str_eq(msg, cases[i].msg);
	}
}

Test(resctrl_schemata, check_mb_ranges_and_rounds_up)
{
	struct resctrl_res_info mbps = intel_mb;
	char msg[128];
	uint64_t v;

	cr_assert_eq(resctrl_check_mb(&intel_mb, 5, &v, msg, sizeof(msg)), -EINVAL);
	cr_assert_str_eq(msg, "MB value 5 out of range [10,100]");
	cr_assert_eq(resctrl_check_mb(&intel_mb, 101, &v, msg, sizeof(msg)), -EINVAL);
	cr_assert_eq(resctrl_check_mb(&intel_mb, 25, &v, NULL, 0), 0);
	cr_assert_eq(v, 30);
	cr_assert_eq(resctrl_check_mb(&amd_mb, 2048, &v, NULL, 0), 0);
	cr_assert_eq(v, 2048);
	cr_assert_eq(resctrl_check_mb(&amd_mb, 2049, &v, msg, sizeof(msg)), -EINVAL);
	cr_assert_str_eq(msg, "MB value 2049 out of range [0,2048]");
	mbps.mb_unit = RESCTRL_MB_MBPS;
	mbps.max_bw = UINT32_MAX;
	cr_assert_eq(resctrl_check_mb(&mbps, 4294967295ULL, &v, NULL, 0), 0);
	cr_assert_eq(resctrl_check_mb(&mbps, 3, &v, NULL, 0), 0);
	cr_assert_eq(v, 3);
}

Test(resctrl_schemata, validate_checks_resource_domain_and_values)
{
	struct resctrl_caps caps = { .nr_domains = 2, .domain_ids = { 0, 1 } };
	struct resctrl_schemata s = { 0 };
	char msg[128];

	caps.res[RESCTRL_RES_L3] = intel_l3;
	caps.res[RESCTRL_RES_MB] = intel_mb;
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 1, 0xf);
	cr_assert_eq(resctrl_schemata_validate(&caps, &s, msg, sizeof(msg)), 0);
	resctrl_sline_set(&s.res[RESCTRL_RES_L2], 0, 0x3);
	cr_assert_eq(resctrl_schemata_validate(&caps, &s, msg, sizeof(msg)), -EINVAL);
	cr_assert_str_eq(msg, "Unknown or unsupported resource name 'L2'");
	memset(&s, 0, sizeof(s));
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 7, 0xf);
	cr_assert_eq(resctrl_schemata_validate(&caps, &s, msg, sizeof(msg)), -EINVAL);
	cr_assert_str_eq(msg, "");
	memset(&s, 0, sizeof(s));
	resctrl_sline_set(&s.res[RESCTRL_RES_MB], 0, 5);
	cr_assert_eq(resctrl_schemata_validate(&caps, &s, msg, sizeof(msg)), -EINVAL);
	cr_assert_str_eq(msg, "MB value 5 out of range [10,100]");
}

Test(resctrl_schemata, cbm_from_pct_matches_koordinator_examples)
{
	uint64_t cbm;

	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 0, 30, &cbm), 0);
	cr_assert_eq(cbm, 0xf);
	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 10, 50, &cbm), 0);
	cr_assert_eq(cbm, 0x3c);
	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 0, 100, &cbm), 0);
	cr_assert_eq(cbm, 0x7ff);
	cr_assert_eq(resctrl_cbm_from_pct(0xfffff, 20, 80, &cbm), 0);
	cr_assert_eq(cbm, 0xfff0); /* ways 4..15 */
	cr_assert_eq(resctrl_cbm_from_pct(0xffffffffffffffffULL, 0, 100, &cbm), 0);
	cr_assert_eq(cbm, 0xffffffffffffffffULL);
}

Test(resctrl_schemata, cbm_from_pct_rejects_bad_input)
{
	uint64_t cbm = 0;

	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 50, 50, &cbm), -EINVAL);
	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 60, 50, &cbm), -EINVAL);
	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 0, 101, &cbm), -EINVAL);
	cr_assert_eq(resctrl_cbm_from_pct(0x7f0, 0, 100, &cbm), -EINVAL);
	cr_assert_eq(resctrl_cbm_from_pct(0, 0, 100, &cbm), -EINVAL);
	/* 10-11 % of 11 ways both round up to way 2: no way left */
	cr_assert_eq(resctrl_cbm_from_pct(0x7ff, 10, 11, &cbm), -ERANGE);
}

Test(resctrl_schemata, mb_from_pct_intel_rounds_up)
{
	uint64_t v;

	cr_assert_eq(resctrl_mb_from_pct(&intel_mb, 25, &v), 0);
	cr_assert_eq(v, 30);
	cr_assert_eq(resctrl_mb_from_pct(&intel_mb, 100, &v), 0);
	cr_assert_eq(v, 100);
	cr_assert_eq(resctrl_mb_from_pct(&intel_mb, 1, &v), 0);
	cr_assert_eq(v, 10);
	cr_assert_eq(resctrl_mb_from_pct(&intel_mb, 0, &v), -EINVAL);
	cr_assert_eq(resctrl_mb_from_pct(&intel_mb, 101, &v), -EINVAL);
}

Test(resctrl_schemata, mb_from_pct_amd_converts)
{
	struct resctrl_res_info mbps = intel_mb;
	uint64_t v;

	cr_assert_eq(resctrl_mb_from_pct(&amd_mb, 100, &v), 0);
	cr_assert_eq(v, 2048);
	cr_assert_eq(resctrl_mb_from_pct(&amd_mb, 50, &v), 0);
	cr_assert_eq(v, 80);
	cr_assert_eq(resctrl_mb_from_pct(&amd_mb, 33, &v), 0);
	cr_assert_eq(v, 52); /* floor(160 * 33 / 100) */
	mbps.mb_unit = RESCTRL_MB_MBPS;
	cr_assert_eq(resctrl_mb_from_pct(&mbps, 25, &v), 0);
	cr_assert_eq(v, 25);
}

Test(resctrl_schemata, set_all_covers_every_cache_id)
{
	struct resctrl_caps caps = { .nr_domains = 3, .domain_ids = { 0, 4, 9 } };
	struct resctrl_schemata s = { 0 };

	cr_assert_eq(resctrl_schemata_set_all(&s, &caps, RESCTRL_RES_L3, 0xf), 0);
	cr_assert_eq(s.res[RESCTRL_RES_L3].nr, 3);
	cr_assert_eq(val(&s, RESCTRL_RES_L3, 9), 0xf);
}
