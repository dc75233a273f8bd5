// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <string.h>

#include "cpulist.h"

static void roundtrip(const char *in, const char *canon, unsigned int count)
{
	char buf[CPULIST_BUF_SIZE];
	struct cpumask m;

	cr_assert_eq(cpulist_parse(in, &m), 0, "parse \"%s\"", in);
	cr_assert_eq(cpumask_count(&m), count, "count of \"%s\"", in);
	cr_assert_eq(cpulist_format(&m, buf, sizeof(buf)), (int)strlen(canon));
	cr_assert_str_eq(buf, canon);
}

Test(cpulist, parses_and_formats_canonical_lists)
{
	roundtrip("0-3,8,10-11", "0-3,8,10-11", 7);
	roundtrip("0-3,8,10-11\n", "0-3,8,10-11", 7);
	roundtrip("", "", 0);
	roundtrip("\n", "", 0);
	roundtrip("5", "5", 1);
	roundtrip("1,0,2", "0-2", 3);
	roundtrip("3-3", "3", 1);
	roundtrip("0,2,4", "0,2,4", 3);
	roundtrip("0-1023", "0-1023", 1024);
	roundtrip("1023", "1023", 1);
	roundtrip("007", "7", 1);
}

struct bad_case {
	char s[32];
};

ParameterizedTestParameters(cpulist, rejects_malformed)
{
	static struct bad_case cases[] = {
		{ "3-1" },   { "a" },  { "1,,2" }, { "1," },	{ ",1" },	   { "-1" },
		{ "1-" },    { " 1" }, { "1 " },   { "1\n\n" }, { "1024" },	   { "0-1024" },
		{ "1-2-3" }, { "+1" }, { "1;2" },  { "0x1" },	{ "99999999999" }, { "1\n2" },
	};
	return cr_make_param_array(struct bad_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_case *c, cpulist, rejects_malformed)
{
	struct cpumask m;

	cpumask_zero(&m);
	cpumask_set(&m, 7);
	cr_assert_eq(cpulist_parse(c->s, &m), -EINVAL, "\"%s\" accepted", c->s);
	cr_assert(cpumask_test(&m, 7) && cpumask_count(&m) == 1, "output touched on failure");
}

Test(cpulist, null_is_einval)
{
	struct cpumask m;

	cr_assert_eq(cpulist_parse(NULL, &m), -EINVAL);
}

Test(cpulist, set_ops)
{
	struct cpumask a, b, r, e;

	cpulist_parse("0-7", &a);
	cpulist_parse("4-11", &b);
	cpumask_or(&r, &a, &b);
	cpulist_parse("0-11", &e);
	cr_assert(cpumask_equal(&r, &e));
	cpumask_and(&r, &a, &b);
	cpulist_parse("4-7", &e);
	cr_assert(cpumask_equal(&r, &e));
	cpumask_andnot(&r, &a, &b);
	cpulist_parse("0-3", &e);
	cr_assert(cpumask_equal(&r, &e));
	cr_assert_not(cpumask_equal(&a, &b));
	/* aliasing dst with an input */
	cpumask_andnot(&a, &a, &a);
	cr_assert(cpumask_empty(&a));
}

Test(cpulist, test_set_clear_bounds)
{
	struct cpumask m;

	cpumask_zero(&m);
	cr_assert_eq(cpumask_set(&m, 1023), 0);
	cr_assert_eq(cpumask_set(&m, 1024), -EINVAL);
	cr_assert(cpumask_test(&m, 1023));
	cr_assert_not(cpumask_test(&m, 1024));
	cpumask_clear(&m, 1023);
	cpumask_clear(&m, 5000);
	cr_assert(cpumask_empty(&m));
}

Test(cpulist, first_next_iterate_across_words)
{
	struct cpumask m;
	int seen[8], n = 0, cpu;

	cpulist_parse("0,63-64,127,128,1023", &m);
	cpumask_for_each(cpu, &m) {
		cr_assert_lt(n, 8);
		seen[n++] = cpu;
	}
	cr_assert_eq(n, 6);
	cr_assert_eq(seen[0], 0);
	cr_assert_eq(seen[1], 63);
	cr_assert_eq(seen[2], 64);
	cr_assert_eq(seen[3], 127);
	cr_assert_eq(seen[4], 128);
	cr_assert_eq(seen[5], 1023);
	cr_assert_eq(cpumask_next(&m, 1023), -1);
	cpumask_zero(&m);
	cr_assert_eq(cpumask_first(&m), -1);
}

Test(cpulist, format_reports_small_buffer)
{
	struct cpumask m;
	char buf[4];

	cpulist_parse("0-3,100-200", &m);
	cr_assert_eq(cpulist_format(&m, buf, sizeof(buf)), -ENOSPC);
	cr_assert_eq(cpulist_format(&m, buf, 0), -ENOSPC);
}

Test(cpulist, worst_case_fits_buf_size)
{
	char buf[CPULIST_BUF_SIZE];
	struct cpumask m;

	cpumask_zero(&m);
	for (unsigned int c = 0; c < CPUMASK_MAX_CPUS; c += 2)
		cpumask_set(&m, c);
	cr_assert_gt(cpulist_format(&m, buf, sizeof(buf)), 0);
	cr_assert_eq(strncmp(buf, "0,2,4", 5), 0);
}
