// SPDX-License-Identifier: GPL-2.0
/* resctrl_qos on canned snapshots: class groups only when enabled, members, pod groups. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slo.h"
#include "snapshot.h"
#include "strategy.h"

#define NR_PODS 4

static struct pod pods[NR_PODS];
static struct pod_llc_range per_cache[1];
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;

static const char *const uids[NR_PODS] = { "aaa-1", "bbb-2", "ccc-3", "ddd-4" };
static const enum pod_qos qos[NR_PODS] = { POD_QOS_LSE, POD_QOS_LS, POD_QOS_BE, POD_QOS_BE };

static void setup(void)
{
	slo_config_init(&cfg);
	snap = snapshot__new();
	snap->rdt_enabled = true;
	plan_init(&plan);
	plan.strategy = "resctrl_qos";
	snap->pods = calloc(NR_PODS, sizeof(*snap->pods));
	snap->nr_pods = NR_PODS;
	for (int i = 0; i < NR_PODS; i++) {
		char cg[96];

		memset(&pods[i], 0, sizeof(pods[i]));
		pods[i].uid = pods[i].name = (char *)uids[i];
		pods[i].qos = qos[i];
		pods[i].is_active = true;
		snap->pods[i].pod = &pods[i];
		snprintf(cg, sizeof(cg), "/kubepods/pod%s", uids[i]);
		snap->pods[i].cgroup = strdup(cg);
		snap->pods[i].cgid = 100 + i;
		snap->pods[i].ctrs = calloc(1, sizeof(struct snap_container));
		snap->pods[i].nr_ctrs = 1;
		snprintf(cg, sizeof(cg), "/kubepods/pod%s/c0", uids[i]);
		snap->pods[i].ctrs[0].cgroup = strdup(cg);
		snap->pods[i].ctrs[0].cgid = 200 + i;
	}
	/* the last BE pod asks for its own group: 10-50 % everywhere, 0-20 % on cache 1 */
	pods[3].resctrl.state = POD_ANN_OK;
	pods[3].resctrl.has_llc = true;
	pods[3].resctrl.llc = (struct pod_llc_range){ -1, 10, 50 };
	per_cache[0] = (struct pod_llc_range){ 1, 0, 20 };
	pods[3].resctrl.llc_per_cache = per_cache;
	pods[3].resctrl.nr_llc_per_cache = 1;
	pods[3].resctrl.has_mb = true;
	pods[3].resctrl.mb = (struct pod_mb_pct){ -1, 40 };
}

static void teardown(void)
{
	plan_fini(&plan);
	snapshot__put(snap);
}

TestSuite(resctrl_qos, .init = setup, .fini = teardown);

static int decide(void)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg, .is_tick = true };
	struct strategy_report rep = { 0 };

	return resctrl_qos_strategy.decide(NULL, &in, &plan, &rep);
}

Test(resctrl_qos, off_by_default)
{
	cr_assert_not(resctrl_qos_strategy.enabled(&cfg));
	cr_assert_eq(decide(), 0);
	cr_assert_eq(plan.rdt.nr_groups, 0);
	cr_assert_eq(plan.rdt.nr_members, 0);
}

Test(resctrl_qos, only_enabled_classes_get_groups)
{
	const struct plan_rdt_group *be;

	cfg.rdt[RDT_CLASS_BE].enable = true;
	cr_assert(resctrl_qos_strategy.enabled(&cfg));
	cr_assert_eq(decide(), 0);
	cr_assert(plan.rdt.is_on);
	cr_assert_eq(plan.rdt.nr_groups, 1);
	be = plan_rdt_find(&plan.rdt, "BE");
	cr_assert_not_null(be);
	cr_assert(be->has_l3 && be->has_mb);
	cr_assert_eq(be->l3[0].cache_id, -1);
	cr_assert_eq(be->l3[0].start_pct, 0);
	cr_assert_eq(be->l3[0].end_pct, 30);
	cr_assert_eq(be->mb[0].pct, 100);
	/* pod-level off: the annotated BE pod is a class member too; LS pods are not */
	cr_assert_eq(plan.rdt.nr_members, 4);
	cr_assert_eq(plan_rdt_group_of(&plan.rdt, 102), 0);
	cr_assert_eq(plan_rdt_group_of(&plan.rdt, 203), 0);
	cr_assert_eq(plan_rdt_group_of(&plan.rdt, 100), -1);
	cr_assert_eq(plan_rdt_group_of(&plan.rdt, 101), -1);
}

Test(resctrl_qos, lse_and_lsr_share_the_lsr_group)
{
	for (int c = 0; c < RDT_CLASS_NR; c++)
		cfg.rdt[c].enable = true;
	cr_assert_eq(decide(), 0);
	cr_assert_eq(plan.rdt.nr_groups, 3);
	cr_assert_str_eq(plan.rdt.groups[plan_rdt_group_of(&plan.rdt, 100)].name, "LSR");
	cr_assert_str_eq(plan.rdt.groups[plan_rdt_group_of(&plan.rdt, 201)].name, "LS");
	cr_assert_str_eq(plan.rdt.groups[plan_rdt_group_of(&plan.rdt, 102)].name, "BE");
	cr_assert_eq(plan.rdt.groups[plan_rdt_group_of(&plan.rdt, 201)].l3[0].end_pct, 100);
}

Test(resctrl_qos, annotated_pod_gets_its_group_with_class_fallback)
{
	const struct plan_rdt_group *g;

	cfg.rdt[RDT_CLASS_BE].enable = true;
	cfg.rdt_pod_level = true;
	cr_assert_eq(decide(), 0);
	g = plan_rdt_find(&plan.rdt, "pod-ddd-4");
	cr_assert_not_null(g);
	cr_assert_str_eq(g->pod_uid, "ddd-4");
	cr_assert_str_eq(plan.rdt.groups[g->fallback].name, "BE");
	cr_assert_eq(g->nr_l3, 2);
	cr_assert_eq(g->l3[1].cache_id, 1);
	cr_assert_eq(g->l3[1].end_pct, 20);
	cr_assert_eq(g->nr_mb, 1);
	cr_assert_eq(g->mb[0].pct, 40);
	cr_assert_str_eq(plan.rdt.groups[plan_rdt_group_of(&plan.rdt, 103)].name, "pod-ddd-4");
	cr_assert_str_eq(plan.rdt.groups[plan_rdt_group_of(&plan.rdt, 102)].name, "BE");
}

Test(resctrl_qos, invalid_annotation_stays_in_class_and_no_class_no_fallback)
{
	cfg.rdt_pod_level = true;
	pods[3].resctrl.state = POD_ANN_INVALID;
	cr_assert_eq(decide(), 0);
	cr_assert_eq(plan.rdt.nr_groups, 0);
	pods[3].resctrl.state = POD_ANN_OK;
	plan_reset(&plan);
	cr_assert_eq(decide(), 0);
	cr_assert_eq(plan.rdt.nr_groups, 1);
	cr_assert_eq(plan.rdt.groups[0].fallback, PLAN_RDT_NO_GROUP);
}

Test(resctrl_qos, nothing_without_resctrl_or_between_ticks)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg, .is_tick = false };
	struct strategy_report rep = { 0 };

	cfg.rdt[RDT_CLASS_BE].enable = true;
	cr_assert_eq(resctrl_qos_strategy.decide(NULL, &in, &plan, &rep), 0);
	cr_assert_eq(plan.rdt.nr_groups, 0);
	snap->rdt_enabled = false;
	cr_assert_eq(decide(), 0);
	cr_assert_eq(plan.rdt.nr_groups, 0);
	cr_assert_not(plan.rdt.is_on);
}

Test(resctrl_qos, inactive_pods_are_skipped)
{
	cfg.rdt[RDT_CLASS_BE].enable = true;
	pods[2].is_active = false;
	cr_assert_eq(decide(), 0);
	cr_assert_eq(plan_rdt_group_of(&plan.rdt, 102), -1);
}

Test(resctrl_qos, ls_pods_in_a_class_group_get_a_monitoring_group)
{
	for (int c = 0; c < RDT_CLASS_NR; c++)
		cfg.rdt[c].enable = true;
	cr_assert_eq(decide(), 0);
	for (size_t i = 0; i < plan.rdt.nr_members; i++) {
		const struct plan_rdt_member *m = &plan.rdt.members[i];

		if (m->cgid == 100 || m->cgid == 200)
			cr_assert_str_eq(m->mon, "pod-aaa-1");
		else if (m->cgid == 101 || m->cgid == 201)
			cr_assert_str_eq(m->mon, "pod-bbb-2");
		else
			cr_assert_str_eq(m->mon, "", "BE pods stay at class level");
	}
	cfg.rdt_pod_monitor = false;
	plan_reset(&plan);
	cr_assert_eq(decide(), 0);
	cr_assert_str_eq(plan.rdt.members[0].mon, "");
}
