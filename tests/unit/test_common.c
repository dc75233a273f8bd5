// SPDX-License-Identifier: GPL-2.0
/*
 * The strategies' shared BE targets (strategies/common.c): the besteffort dir as koordinator's
 * level, each BE pod's own cgroup while a protected Mid+LS pod sits in the dir, and the
 * predicates behind them. cpu_suppress and the latency guard both hold BE back through these.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

static struct pod pods[4];
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;
static struct be_targets t;

static void add(int i, enum pod_qos raw, enum pod_prio prio, enum pod_k8s_qos k8s, const char *cg)
{
	struct snap_pod *sp;

	pods[i] = (struct pod){ .uid = "u",
				.name = "p",
				.qos_raw = raw,
				.prio_raw = prio,
				.k8s_qos = k8s,
				.is_active = true };
	snap->pods = realloc(snap->pods, (snap->nr_pods + 1) * sizeof(*snap->pods));
	cr_assert_not_null(snap->pods);
	sp = &snap->pods[snap->nr_pods++];
	memset(sp, 0, sizeof(*sp));
	sp->pod = &pods[i];
	sp->cgroup = strdup(cg);
}

static void setup(void)
{
	slo_config_init(&cfg);
	snap = snapshot__new();
	snap->node.nr_cpus = 4;
	snprintf(snap->node.besteffort, sizeof(snap->node.besteffort), "/kubepods/besteffort");
	plan_init(&plan);
	plan.strategy = "test";
	plan.prio = 1;
	add(0, POD_QOS_LS, POD_PRIO_PROD, POD_K8S_QOS_BURSTABLE, "/kubepods/burstable/pod0");
	add(1, POD_QOS_BE, POD_PRIO_BATCH, POD_K8S_QOS_BESTEFFORT, "/kubepods/besteffort/pod1");
}

static void teardown(void)
{
	plan_fini(&plan);
	snapshot__put(snap);
}

TestSuite(strat_common, .init = setup, .fini = teardown);

static void targets(void)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg };

	strat_be_targets(&in, &t);
}

Test(strat_common, predicates)
{
	cr_assert(strat_pod_suppressed(&cfg, &pods[1]));
	cr_assert_not(strat_pod_suppressed(&cfg, &pods[0]));
	add(2, POD_QOS_NONE, POD_PRIO_MID, POD_K8S_QOS_BESTEFFORT, "/kubepods/besteffort/pod2");
	cr_assert(strat_pod_is_be(&pods[2]), "BestEffort to Kubernetes");
	cr_assert_not(strat_pod_suppressed(&cfg, &pods[2]), "Mid+LS is protected");
	cfg.mid_ls_protected = false;
	cr_assert(strat_pod_suppressed(&cfg, &pods[2]));
	cr_assert_not(strat_pod_cfs_suppressed(&cfg, &pods[2]), "suppress is off");
	cfg.suppress_enable = true;
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	cr_assert(strat_pod_cfs_suppressed(&cfg, &pods[2]));
}

Test(strat_common, the_dir_without_a_protected_pod)
{
	targets();
	cr_assert(t.k8s && t.at_dir && !t.at_pods && !t.per_pod);
	cr_assert_str_eq(t.dir, "/kubepods/besteffort");
	cr_assert_eq(t.nr_pods, 1);
}

/* The latency guard narrows with full == cpus: the dir must still keep every BE CPU. */
Test(strat_common, pods_with_a_protected_pod_and_the_dir_keeps_all)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg };
	struct plan_value v = { .idle = true };
	struct cpumask cpus;
	char buf[32];

	add(2, POD_QOS_NONE, POD_PRIO_MID, POD_K8S_QOS_BESTEFFORT, "/kubepods/besteffort/pod2");
	targets();
	cr_assert(t.per_pod && t.at_pods && !t.at_dir);
	cr_assert_eq(t.nr_pods, 1);
	cr_assert_eq(t.pods[0].sp, &snap->pods[1]);
	cr_assert_str_eq(t.pods[0].cgroup, "/kubepods/besteffort/pod1");
	cpulist_parse("3", &cpus);
	cr_assert_eq(strat_plan_be_cpusets(&plan, &in, &t, false, &cpus, &cpus, "t"), 0);
	cr_assert_eq(strat_plan_top(&plan, &t, PLAN_KNOB_IDLE, &v, "t"), 0);
	cpulist_format(&plan_find(&plan, "/kubepods/besteffort", PLAN_KNOB_CPUSET)->v.cpus, buf,
		       sizeof(buf));
	cr_assert_str_eq(buf, "0-3");
	cpulist_format(&plan_find(&plan, "/kubepods/besteffort/pod1", PLAN_KNOB_CPUSET)->v.cpus,
		       buf, sizeof(buf));
	cr_assert_str_eq(buf, "3");
	cr_assert_null(plan_find(&plan, "/kubepods/besteffort/pod2", PLAN_KNOB_CPUSET));
	cr_assert_null(plan_find(&plan, "/kubepods/besteffort", PLAN_KNOB_IDLE));
	cr_assert_not_null(plan_find(&plan, "/kubepods/besteffort/pod1", PLAN_KNOB_IDLE));
	cr_assert_null(plan_find(&plan, "/kubepods/besteffort/pod2", PLAN_KNOB_IDLE));
}

/* A bare-metal group's glob may match several cgroups: each is a level of its own. */
Test(strat_common, bare_metal_group_with_several_cgroups)
{
	char *cgs[] = { "/batch/a", "/batch/b" };

	snap->node.besteffort[0] = '\0';
	pods[1].is_static = true;
	pods[1].cgroups = cgs;
	pods[1].nr_cgroups = 2;
	targets();
	cr_assert_eq(t.nr_pods, 2);
	cr_assert_str_eq(t.pods[0].cgroup, "/batch/a");
	cr_assert_str_eq(t.pods[1].cgroup, "/batch/b");
	pods[1].cgroups = NULL;
	pods[1].nr_cgroups = 0;
}

Test(strat_common, bare_metal_groups)
{
	snap->node.besteffort[0] = '\0';
	pods[1].is_static = true;
	pods[1].prio = POD_PRIO_BATCH;
	targets();
	cr_assert(!t.k8s && !t.at_dir && t.at_pods);
	cr_assert_eq(t.nr_pods, 1);
	pods[1].is_active = false;
	targets();
	cr_assert_not(strat_be_targets_any(&t));
}
