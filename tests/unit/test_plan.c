// SPDX-License-Identifier: GPL-2.0
/* The plan: precedence, provenance, path checks, depth, registry. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "plan.h"
#include "strategy.h"

static struct plan plan;

static void setup(void)
{
	plan_init(&plan);
}

static void teardown(void)
{
	plan_fini(&plan);
}

TestSuite(plan, .init = setup, .fini = teardown);

Test(plan, higher_precedence_wins_and_keeps_provenance)
{
	const struct plan_entry *e;

	plan.strategy = "extended_resource";
	plan.prio = 10;
	cr_assert_eq(plan_set_quota(&plan, "/kubepods/besteffort/p", 200000, "batch"), 0);
	plan.strategy = "cpu_suppress";
	plan.prio = 30;
	cr_assert_eq(plan_set_quota(&plan, "/kubepods/besteffort/p", -1, "suppress"), 0);
	plan.strategy = "cpuset_rules";
	plan.prio = 20;
	cr_assert_eq(plan_set_quota(&plan, "/kubepods/besteffort/p", 5000, "rules"), 0);
	cr_assert_eq(plan.nr, 1, "one entry per (cgroup, knob)");
	e = plan_find(&plan, "/kubepods/besteffort/p", PLAN_KNOB_CFS_QUOTA);
	cr_assert_not_null(e);
	cr_assert_eq(e->v.quota_us, -1);
	cr_assert_str_eq(e->strategy, "cpu_suppress");
	cr_assert_str_eq(e->why, "suppress");
	cr_assert_eq(plan.nr_overridden, 2);
}

Test(plan, tie_keeps_the_first_writer)
{
	plan.strategy = "a";
	plan.prio = 5;
	plan_set_shares(&plan, "/x", 2, "first");
	plan.strategy = "b";
	plan_set_shares(&plan, "/x", 1024, "second");
	cr_assert_eq(plan_find(&plan, "/x", PLAN_KNOB_SHARES)->v.shares, 2);
	/* other knobs of the same cgroup are separate entries */
	plan_set_idle(&plan, "/x", true, "idle");
	cr_assert_eq(plan.nr, 2);
}

Test(plan, unsafe_paths_are_refused)
{
	cr_assert_eq(plan_set_idle(&plan, "relative", true, ""), -EINVAL);
	cr_assert_eq(plan_set_idle(&plan, "/a/../b", true, ""), -EINVAL);
	cr_assert_eq(plan_set_idle(&plan, "/a/./b", true, ""), -EINVAL);
	cr_assert_eq(plan_set_idle(&plan, "/a/b\n", true, ""), -EINVAL);
	cr_assert_eq(plan_set_idle(&plan, "/a/..b", true, ""), 0);
	cr_assert_eq(plan.nr, 1);
}

Test(plan, grows_past_the_first_allocation)
{
	char cg[32];

	for (int i = 0; i < 200; i++) {
		snprintf(cg, sizeof(cg), "/p%d", i);
		cr_assert_eq(plan_set_memory(&plan, cg, (uint64_t)i, "m"), 0);
	}
	cr_assert_eq(plan.nr, 200);
	cr_assert_eq(plan_find(&plan, "/p199", PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, 199);
	plan_reset(&plan);
	cr_assert_eq(plan.nr, 0);
}

Test(plan, depth_and_names)
{
	enum plan_knob k;

	cr_assert_eq(plan_cgroup_depth("/"), 0);
	cr_assert_eq(plan_cgroup_depth("/kubepods"), 1);
	cr_assert_eq(plan_cgroup_depth("/kubepods/besteffort/"), 2);
	cr_assert_eq(plan_cgroup_depth("kubepods/besteffort/pod"), 3);
	for (int i = 0; i < PLAN_KNOB_NR; i++) {
		cr_assert_eq(plan_knob_parse(plan_knob_name((enum plan_knob)i), &k), 0);
		cr_assert_eq((int)k, i);
	}
	cr_assert_eq(plan_knob_parse("cpu.max", &k), -EINVAL);
}

Test(plan, value_equality_and_format)
{
	struct plan_value a = { .quota_us = -1, .period_us = PLAN_PERIOD_KEEP };
	struct plan_value b = { .quota_us = -1, .period_us = 100000 };
	char buf[32];

	cr_assert(plan_value_equal(PLAN_KNOB_CFS_QUOTA, &a, &b), "keep matches any period");
	b.quota_us = 2000;
	cr_assert_not(plan_value_equal(PLAN_KNOB_CFS_QUOTA, &a, &b));
	plan_value_format(PLAN_KNOB_CFS_QUOTA, &a, buf, sizeof(buf));
	cr_assert_str_eq(buf, "max");
	a.mem_bytes = UINT64_MAX;
	plan_value_format(PLAN_KNOB_MEMORY_MAX, &a, buf, sizeof(buf));
	cr_assert_str_eq(buf, "max");
}

Test(plan, registry_in_precedence_order)
{
	const struct kqos_strategy *s, *prev = NULL;
	size_t i, n = 0;

	strategy_for_each(s, i) {
		cr_assert_not_null(s->decide, "%s", s->name);
		cr_assert_not_null(s->enabled, "%s", s->name);
		if (prev)
			cr_assert_gt(prev->prio, s->prio, "%s before %s", prev->name, s->name);
		prev = s;
		n++;
	}
	cr_assert_eq(n, 9);
	cr_assert_eq(strategy_find("cpu_suppress"), &cpu_suppress_strategy);
	cr_assert(strategy_find("latency_guard")->tightens, "the tightening strategy runs last");
	cr_assert_null(strategy_find("nope"));
}

Test(plan, tighten_keeps_the_tighter_value_and_never_loosens)
{
	struct plan p;
	struct cpumask a, b;
	const struct plan_entry *e;

	plan_init(&p);
	p.strategy = "cpu_suppress";
	p.prio = 30;
	cr_assert_eq(plan_set_quota(&p, "/be", 50000, "suppress"), 0);
	cr_assert_eq(plan_set_shares(&p, "/be", 2, "suppress"), 0);
	cpulist_parse("0-3", &a);
	cr_assert_eq(plan_set_cpuset(&p, "/be", &a, "suppress"), 0);
	p.strategy = "latency_guard";
	p.prio = 5;
	p.tighten = true;
	cr_assert_eq(plan_set_quota(&p, "/be", -1, "guard"), 0, "unlimited is the loosest");
	cr_assert_eq(plan_find(&p, "/be", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 50000);
	cr_assert_eq(plan_set_quota(&p, "/be", 20000, "guard"), 0);
	e = plan_find(&p, "/be", PLAN_KNOB_CFS_QUOTA);
	cr_assert_eq(e->v.quota_us, 20000);
	cr_assert_str_eq(e->strategy, "latency_guard");
	cr_assert_eq(plan_set_shares(&p, "/be", 100, "guard"), 0);
	cr_assert_eq(plan_find(&p, "/be", PLAN_KNOB_SHARES)->v.shares, 2);
	cpulist_parse("2-5", &b);
	cr_assert_eq(plan_set_cpuset(&p, "/be", &b, "guard"), 0);
	cpulist_parse("2-3", &b);
	cr_assert(cpumask_equal(&plan_find(&p, "/be", PLAN_KNOB_CPUSET)->v.cpus, &b));
	cpulist_parse("7", &b);
	cr_assert_eq(plan_set_cpuset(&p, "/be", &b, "guard"), 0);
	cpulist_parse("2-3", &b);
	cr_assert(cpumask_equal(&plan_find(&p, "/be", PLAN_KNOB_CPUSET)->v.cpus, &b),
		  "an empty intersection keeps the planned set");
	cr_assert_eq(plan_set_idle(&p, "/ls", true, "guard"), 0, "a knob nobody planned is set");
	cr_assert(plan_find(&p, "/ls", PLAN_KNOB_IDLE)->v.idle);
	plan_fini(&p);
}
