// SPDX-License-Identifier: GPL-2.0
/* cpu_suppress against canned snapshots: koordinator.md §4.1 formulas and CPU picks. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_suppress.h"
#include "slo.h"
#include "snapshot.h"
#include "strategy.h"

#define NCPU 16

static struct topo_cpu tcpus[NCPU];
static struct topology topo;
static struct pod pods[8];
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;
static void *state;

/*
 * 2 sockets (= NUMA nodes), 4 cores each, HT: socket 0 holds CPUs 0-3 and their siblings
 * 8-11, socket 1 CPUs 4-7 and 12-15; core ids restart per socket, as in sysfs.
 */
static void build_topology(void)
{
	memset(&topo, 0, sizeof(topo));
	for (int i = 0; i < NCPU; i++) {
		struct topo_cpu *c = &tcpus[i];

		c->cpu = i;
		c->socket_id = (i % 8) / 4;
		c->node_id = c->socket_id;
		c->core_id = i % 4;
		c->l3_id = c->socket_id;
		cpumask_zero(&c->siblings);
		cpumask_set(&c->siblings, (unsigned int)i);
		cpumask_set(&c->siblings, (unsigned int)(i ^ 8));
		cpumask_set(&topo.online, (unsigned int)i);
	}
	topo.cpus = tcpus;
	topo.nr_cpus = NCPU;
	topo.nr_sockets = topo.nr_nodes = 2;
	topo.nr_cores = 8;
	topo.has_smt = true;
}

static struct pod *mkpod(int i, enum pod_qos qos, enum pod_k8s_qos k8s, const char *cpuset)
{
	struct pod *p = &pods[i];

	memset(p, 0, sizeof(*p));
	p->uid = (char *)(const char *[]){ "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7" }[i];
	p->name = p->uid;
	p->qos_raw = p->qos = qos;
	p->k8s_qos = k8s;
	p->is_active = true;
	if (cpuset) {
		p->res_status.state = POD_ANN_OK;
		p->res_status.cpuset = (char *)cpuset;
	}
	return p;
}

/* Append a pod with its cgroup, usage in cores and optional container cgroup. */
static void add(const struct pod *pod, const char *cg, double cores, const char *ctr)
{
	struct snap_pod *sp;

	snap->pods = realloc(snap->pods, (snap->nr_pods + 1) * sizeof(*snap->pods));
	cr_assert_not_null(snap->pods);
	sp = &snap->pods[snap->nr_pods++];
	memset(sp, 0, sizeof(*sp));
	sp->pod = pod;
	sp->cgroup = strdup(cg);
	sp->st.has_cpu = true;
	sp->st.cpu_cores = cores;
	if (ctr) {
		sp->ctrs = calloc(1, sizeof(*sp->ctrs));
		sp->ctrs[0].cgroup = strdup(ctr);
		sp->nr_ctrs = 1;
	}
}

static void setup(void)
{
	build_topology();
	slo_config_init(&cfg);
	cfg.suppress_enable = true;
	snap = snapshot__new();
	cr_assert_not_null(snap);
	snap->wall_ns = 1;
	snap->node.topo = &topo;
	snap->node.nr_cpus = NCPU;
	snap->node.has_cpu_usage = true;
	snprintf(snap->node.kubepods, sizeof(snap->node.kubepods), "/kubepods");
	snprintf(snap->node.besteffort, sizeof(snap->node.besteffort), "/kubepods/besteffort");
	plan_init(&plan);
	plan.strategy = "cpu_suppress";
	plan.prio = 30;
	cr_assert_eq(cpu_suppress_strategy.init(&cfg, &state), 0);
}

static void teardown(void)
{
	cpu_suppress_strategy.fini(state);
	state = NULL;
	plan_fini(&plan);
	snapshot__put(snap);
	snap = NULL;
}

TestSuite(cpu_suppress, .init = setup, .fini = teardown);

static int64_t budget(void)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg };

	return suppress_be_budget_milli(&in);
}

/* node 10 cores used, LS 6, BE 2 -> system 2 -> 16000*65% - 6000 - 2000 = 2400 */
static void node_10_ls_6_be_2(void)
{
	snap->node.cpu_cores_used = 10.0;
	add(mkpod(0, POD_QOS_LS, POD_K8S_QOS_BURSTABLE, NULL), "/kubepods/burstable/podu0", 6.0,
	    "/kubepods/burstable/podu0/c0");
	add(mkpod(1, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL), "/kubepods/besteffort/podu1", 2.0,
	    "/kubepods/besteffort/podu1/c1");
}

Test(cpu_suppress, budget_formula)
{
	node_10_ls_6_be_2();
	cr_assert_eq(budget(), 2400);
	/* a min percent is a floor: 20 % of 16000 = 3200 */
	cfg.suppress_min_pct = 20;
	cr_assert_eq(budget(), 3200);
	cfg.suppress_min_pct = -1;
	/* reserved raises systemUsed to max(2000, 3000) */
	cfg.node_reserved_milli = 3000;
	cr_assert_eq(budget(), 1400);
	/* reservedCPUs count as reserved too: 4 CPUs = 4000 */
	cpulist_parse("0-1,8-9", &cfg.reserved_cpus);
	cr_assert_eq(budget(), 400);
	cfg.suppress_threshold_pct = 40;
	cr_assert_eq(budget(), 6400 - 6000 - 4000);
}

Test(cpu_suppress, budget_unlabelled_pod_without_object_is_non_be)
{
	snap->node.cpu_cores_used = 4.0;
	add(NULL, "/kubepods/podx", 3.0, NULL);
	/* 10400 - 3000 - 1000 */
	cr_assert_eq(budget(), 6400);
}

Test(cpu_suppress, cpuset_count_min_growth_cap_shrink)
{
	cr_assert_eq(suppress_cpuset_count(2400, NCPU, 0, NCPU), 3);
	cr_assert_eq(suppress_cpuset_count(100, NCPU, 0, NCPU), 2, "at least 2");
	cr_assert_eq(suppress_cpuset_count(-5000, NCPU, 0, NCPU), 2);
	/* ceil(0.1 * 16) = 2 above the current 2 */
	cr_assert_eq(suppress_cpuset_count(8000, NCPU, 2, NCPU), 4);
	/* shrinking is immediate */
	cr_assert_eq(suppress_cpuset_count(2000, NCPU, 12, NCPU), 2);
	cr_assert_eq(suppress_cpuset_count(64000, NCPU, 0, 14), 14, "never above the candidates");
}

static void expect_pick(const char *lse, const char *lsr, unsigned int n, const char *want)
{
	struct cpumask allowed = topo.online, mlse, mlsr, got;
	char buf[64];

	cr_assert_eq(cpulist_parse(lse, &mlse), 0);
	cr_assert_eq(cpulist_parse(lsr, &mlsr), 0);
	suppress_pick_cpuset(&topo, &allowed, &mlse, &mlsr, n, &got);
	cpulist_format(&got, buf, sizeof(buf));
	cr_assert_str_eq(buf, want, "n=%u lse=%s lsr=%s", n, lse, lsr);
}

Test(cpu_suppress, cpuset_picks_lowest_ht_pairs_spread_over_numa)
{
	/* pairs round-robin over the two nodes: {0,8} {4,12} {1,9} */
	expect_pick("", "", 6, "0-1,4,8-9,12");
	/* one pair, then the single CPUs restart from the first bucket */
	expect_pick("", "", 3, "0-1,8");
	expect_pick("", "", 2, "0,8");
	expect_pick("", "", 16, "0-15");
}

Test(cpu_suppress, cpuset_picks_exclude_lse_share_lsr_proportionally)
{
	/*
	 * LSE on 0,8 is excluded; LSR on 1-2,9-10 is A (4 CPUs), B the other 10. n=7:
	 * floor(7*4/14) = 2 from A (pair {1,9}), 5 from B: the socket-1 bucket (8 CPUs) goes
	 * first: {4,12}, then socket 0's {3,11}, then the single 5.
	 */
	expect_pick("0,8", "1-2,9-10", 7, "1,3-5,9,11-12");
	/* everything that is not LSE */
	expect_pick("0,8", "1-2,9-10", 14, "1-7,9-15");
}

Test(cpu_suppress, cfs_quota_floor_dead_band_growth_cap)
{
	/* budget 2400m -> 240000 us per 100 ms */
	cr_assert_eq(suppress_cfs_quota(2400, NCPU, -1), 240000);
	/* |250000 - 240000| < 1 % of 16 * 100000: keep the current value */
	cr_assert_eq(suppress_cfs_quota(2500, NCPU, 240000), 240000);
	cr_assert_eq(suppress_cfs_quota(2570, NCPU, 240000), 257000, "just outside the band");
	/* growth capped at 10 % of the node per round */
	cr_assert_eq(suppress_cfs_quota(8000, NCPU, 240000), 400000);
	/* shrinking is immediate, down to the 2000 us floor, which the band never hides */
	cr_assert_eq(suppress_cfs_quota(1000, NCPU, 400000), 100000);
	cr_assert_eq(suppress_cfs_quota(10, NCPU, -1), 2000);
	cr_assert_eq(suppress_cfs_quota(-900, NCPU, 2500), 2000);
}

static const struct plan_entry *entry(const char *cg, enum plan_knob knob)
{
	const struct plan_entry *e = plan_find(&plan, cg, knob);

	cr_assert_not_null(e, "no %s entry for %s", plan_knob_name(knob), cg);
	cr_assert_str_eq(e->strategy, "cpu_suppress");
	cr_assert(e->why[0], "every entry says why");
	return e;
}

static void expect_cpuset(const char *cg, const char *want)
{
	char buf[64];

	cpulist_format(&entry(cg, PLAN_KNOB_CPUSET)->v.cpus, buf, sizeof(buf));
	cr_assert_str_eq(buf, want, "%s", cg);
}

static struct strategy_report rep; /* what the last decide() reported */

static void decide(void)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg };

	plan_reset(&plan);
	rep = (struct strategy_report){ 0 };
	cr_assert_eq(cpu_suppress_strategy.decide(state, &in, &plan, &rep), 0);
}

Test(cpu_suppress, cpuset_policy_plans_the_besteffort_tree)
{
	node_10_ls_6_be_2();
	decide();
	/* 2400m -> 3 CPUs */
	expect_cpuset("/kubepods/besteffort", "0-1,8");
	expect_cpuset("/kubepods/besteffort/podu1", "0-1,8");
	expect_cpuset("/kubepods/besteffort/podu1/c1", "0-1,8");
	cr_assert_eq(entry("/kubepods/besteffort", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_null(plan_find(&plan, "/kubepods/burstable/podu0", PLAN_KNOB_CPUSET));
	cr_assert(rep.has_be_cpus);
	cr_assert_eq(cpumask_count(&rep.be_cpus), 3);
}

Test(cpu_suppress, cpuset_policy_kubelet_static_keeps_upper_dirs_full)
{
	cfg.kubelet_policy = KUBELET_CPU_STATIC;
	node_10_ls_6_be_2();
	decide();
	expect_cpuset("/kubepods/besteffort", "0-15");
	expect_cpuset("/kubepods/besteffort/podu1", "0-15");
	expect_cpuset("/kubepods/besteffort/podu1/c1", "0-1,8");
}

Test(cpu_suppress, cpuset_growth_is_capped_across_ticks)
{
	snap->node.cpu_cores_used = 12.0;
	add(mkpod(0, POD_QOS_LS, POD_K8S_QOS_BURSTABLE, NULL), "/kubepods/burstable/podu0", 10.0,
	    NULL);
	add(mkpod(1, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL), "/kubepods/besteffort/podu1", 2.0,
	    NULL);
	decide(); /* budget 10400 - 10000 - 0 = 400 -> 2 */
	cr_assert_eq(cpumask_count(&rep.be_cpus), 2);
	snap->pods[0].st.cpu_cores = 0.0;
	snap->node.cpu_cores_used = 2.0;
	decide(); /* budget 10400 -> 11, capped at 2 + 2 */
	cr_assert_eq(cpumask_count(&rep.be_cpus), 4);
	decide();
	cr_assert_eq(cpumask_count(&rep.be_cpus), 6);
	/* LS busy again: immediate shrink to the minimum */
	snap->pods[0].st.cpu_cores = 10.0;
	snap->node.cpu_cores_used = 12.0;
	decide();
	cr_assert_eq(cpumask_count(&rep.be_cpus), 2);
}

Test(cpu_suppress, no_usage_holds_the_last_decision)
{
	node_10_ls_6_be_2();
	snap->node.has_cpu_usage = false;
	decide();
	cr_assert_eq(plan.nr, 0, "nothing decided yet, nothing to hold");
	snap->node.has_cpu_usage = true;
	decide();
	snap->node.has_cpu_usage = false;
	decide();
	expect_cpuset("/kubepods/besteffort", "0-1,8");
}

Test(cpu_suppress, policy_switch_restores_the_other_mechanism)
{
	node_10_ls_6_be_2();
	decide();
	expect_cpuset("/kubepods/besteffort", "0-1,8");

	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	decide();
	cr_assert_eq(entry("/kubepods/besteffort", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 240000);
	cr_assert_eq(entry("/kubepods/besteffort", PLAN_KNOB_CFS_QUOTA)->v.period_us, 100000);
	expect_cpuset("/kubepods/besteffort", "0-15");
	expect_cpuset("/kubepods/besteffort/podu1/c1", "0-15");
	cr_assert(rep.has_be_quota && !rep.has_be_cpus);

	cfg.suppress_policy = SUPPRESS_WEIGHT;
	decide();
	cr_assert_eq(entry("/kubepods/besteffort", PLAN_KNOB_SHARES)->v.shares, 2);
	cr_assert_eq(entry("/kubepods/besteffort", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	expect_cpuset("/kubepods/besteffort", "0-15");

	cfg.suppress_policy = SUPPRESS_IDLE;
	decide();
	cr_assert(entry("/kubepods/besteffort", PLAN_KNOB_IDLE)->v.idle);
	cr_assert_null(plan_find(&plan, "/kubepods/besteffort", PLAN_KNOB_SHARES),
		       "the actuator releases the weight policy's shares");

	/* back to cpuset: no growth cap against the old mechanism's history */
	cfg.suppress_policy = SUPPRESS_CPUSET;
	decide();
	expect_cpuset("/kubepods/besteffort", "0-1,8");
	cr_assert_eq(entry("/kubepods/besteffort", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
}

Test(cpu_suppress, full_be_set_excludes_lse_reserved_and_exclusive_system)
{
	add(mkpod(0, POD_QOS_LSE, POD_K8S_QOS_GUARANTEED, "2,10"), "/kubepods/podu0", 0.0, NULL);
	add(mkpod(1, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL), "/kubepods/besteffort/podu1", 0.0,
	    NULL);
	cpulist_parse("0", &cfg.reserved_cpus);
	cfg.has_system_cpus = true;
	cpulist_parse("15", &cfg.system_cpus);
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	decide();
	expect_cpuset("/kubepods/besteffort", "1,3-9,11-14");
}

Test(cpu_suppress, bare_metal_groups_are_their_own_level)
{
	struct pod *ls = mkpod(0, POD_QOS_LS, POD_K8S_QOS_BURSTABLE, NULL);
	struct pod *be = mkpod(1, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL);

	ls->is_static = be->is_static = true;
	snap->node.kubepods[0] = snap->node.besteffort[0] = '\0';
	snap->node.cpu_cores_used = 16.0;
	add(ls, "/ls", 14.0, NULL);
	add(be, "/be", 2.0, NULL);
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	decide();
	/* 10400 - 14000 -> floor */
	cr_assert_eq(entry("/be", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 2000);
	cr_assert_null(plan_find(&plan, "/ls", PLAN_KNOB_CFS_QUOTA));
}

/* ---- Mid+LS inside besteffort ----------------------------------------------------------- */

static struct pod_container pctrs[8];

/* A Mid pod in the besteffort dir (the webhook made it BestEffort), with a batch-cpu request. */
static struct pod *mkmid(int i, enum pod_qos raw)
{
	struct pod *p = mkpod(i, raw, POD_K8S_QOS_BESTEFFORT, NULL);

	p->prio_raw = p->prio = POD_PRIO_MID;
	return p;
}

static void request(struct pod *p, int i, int64_t batch_milli)
{
	pctrs[i] = (struct pod_container){ .name = "c" };
	pod_res_init(&pctrs[i].requests);
	pod_res_init(&pctrs[i].limits);
	pctrs[i].requests.batch_cpu_milli = batch_milli;
	p->containers = &pctrs[i];
	p->nr_containers = 1;
}

static struct pod *request_be(int i, int64_t batch_milli)
{
	struct pod *p = mkpod(i, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL);

	p->prio_raw = p->prio = POD_PRIO_BATCH;
	request(p, i, batch_milli);
	return p;
}

#define BE     "/kubepods/besteffort"
#define MIDLS  BE "/podu2"
#define MIDLSC BE "/podu2/c2"

/* node_10_ls_6_be_2 plus a Mid+LS pod using 1.5 cores, and a second BE pod (3000m, 0.5) */
static void with_mid_ls(void)
{
	node_10_ls_6_be_2();
	add(mkmid(2, POD_QOS_NONE), MIDLS, 1.5, MIDLSC);
	request(&pods[1], 1, 1000);
	add(request_be(3, 3000), BE "/podu3", 0.5, BE "/podu3/c3");
	snap->node.cpu_cores_used = 10.0 + 1.5 + 0.5;
}

Test(cpu_suppress, budget_counts_mid_ls_as_non_be)
{
	with_mid_ls();
	/* all pods 10.0, node 12.0 -> system 2000; non-BE 6000 + 1500 */
	cr_assert_eq(budget(), 10400 - 7500 - 2000);
	cfg.mid_ls_protected = false; /* koordinator: a BestEffort pod is BE */
	cr_assert_eq(budget(), 10400 - 6000 - 2000);
	/* Mid+BE is BE either way */
	cfg.mid_ls_protected = true;
	pods[2].qos_raw = POD_QOS_BE;
	cr_assert_eq(budget(), 10400 - 6000 - 2000);
}

Test(cpu_suppress, split_quota_by_weight_floor_and_equal_parts)
{
	cr_assert_eq(suppress_split_quota(240000, 1000, 4000, 2), 60000);
	cr_assert_eq(suppress_split_quota(240000, 3000, 4000, 2), 180000);
	cr_assert_eq(suppress_split_quota(240000, 0, 0, 3), 80000, "nothing to weigh by");
	cr_assert_eq(suppress_split_quota(2000, 1, 100, 2), 2000, "the 2000 us floor");
}

Test(cpu_suppress, cfs_quota_moves_to_each_be_pod_split_by_request)
{
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	with_mid_ls();
	decide();
	/* budget 900m -> 90000 us, split 1000 : 3000 */
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1, "the dir is neutral");
	cr_assert_eq(entry(BE "/podu1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 22500);
	cr_assert_eq(entry(BE "/podu3", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 67500);
	cr_assert_eq(entry(BE "/podu3", PLAN_KNOB_CFS_QUOTA)->v.period_us, 100000);
	cr_assert_null(plan_find(&plan, MIDLS, PLAN_KNOB_CFS_QUOTA), "Mid+LS is not suppressed");
	cr_assert_null(plan_find(&plan, MIDLS, PLAN_KNOB_CPUSET));
	cr_assert_null(plan_find(&plan, MIDLSC, PLAN_KNOB_CPUSET));
	expect_cpuset(BE, "0-15");
	expect_cpuset(BE "/podu1/c1", "0-15");
	cr_assert(rep.has_be_quota);
	cr_assert_eq(rep.be_quota_us, 90000);
}

Test(cpu_suppress, cfs_quota_split_falls_back_to_usage)
{
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	with_mid_ls();
	pctrs[3].requests.batch_cpu_milli = POD_RES_UNSET; /* podu3: usage 0.5 core */
	decide();
	decide();
	cr_assert_eq(entry(BE "/podu1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 60000);
	cr_assert_eq(entry(BE "/podu3", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 30000);
}

Test(cpu_suppress, cpuset_moves_to_each_be_pod)
{
	with_mid_ls();
	decide();
	decide();
	/* 900m -> 2 CPUs on the BE pods and their containers; the dir keeps the full set */
	expect_cpuset(BE, "0-15");
	expect_cpuset(BE "/podu1", "0,8");
	expect_cpuset(BE "/podu1/c1", "0,8");
	expect_cpuset(BE "/podu3/c3", "0,8");
	cr_assert_null(plan_find(&plan, BE "/podu1", PLAN_KNOB_CFS_QUOTA),
		       "a BE pod's own quota stays extended_resource's");
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_null(plan_find(&plan, MIDLS, PLAN_KNOB_CPUSET));
	cr_assert_null(plan_find(&plan, MIDLSC, PLAN_KNOB_CPUSET));
	/* kubelet static: pod dirs stay full, containers narrow */
	cfg.kubelet_policy = KUBELET_CPU_STATIC;
	decide();
	expect_cpuset(BE "/podu1", "0-15");
	expect_cpuset(BE "/podu1/c1", "0,8");
}

Test(cpu_suppress, weight_and_idle_move_to_each_be_pod)
{
	cfg.suppress_policy = SUPPRESS_WEIGHT;
	with_mid_ls();
	decide();
	decide();
	cr_assert_eq(entry(BE "/podu1", PLAN_KNOB_SHARES)->v.shares, 2);
	cr_assert_eq(entry(BE "/podu3", PLAN_KNOB_SHARES)->v.shares, 2);
	cr_assert_null(plan_find(&plan, BE, PLAN_KNOB_SHARES), "the dir keeps kubelet's shares");
	cr_assert_null(plan_find(&plan, MIDLS, PLAN_KNOB_SHARES));
	cfg.suppress_policy = SUPPRESS_IDLE;
	decide();
	cr_assert(entry(BE "/podu1", PLAN_KNOB_IDLE)->v.idle);
	cr_assert_null(plan_find(&plan, BE, PLAN_KNOB_IDLE), "Mid+LS must not be SCHED_IDLE");
	cr_assert_null(plan_find(&plan, MIDLS, PLAN_KNOB_IDLE));
}

Test(cpu_suppress, mid_be_is_suppressed_with_the_be_pods)
{
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	with_mid_ls();
	add(mkmid(4, POD_QOS_BE), BE "/podu4", 0.0, NULL);
	request(&pods[4], 4, 4000);
	decide();
	decide();
	/* 90000 over 1000 : 3000 : 4000 */
	cr_assert_eq(entry(BE "/podu4", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 45000);
}

Test(cpu_suppress, mid_ls_unprotected_is_suppressed_with_the_dir)
{
	cfg.mid_ls_protected = false;
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	with_mid_ls();
	decide();
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 240000);
	cr_assert_null(plan_find(&plan, BE "/podu1", PLAN_KNOB_CFS_QUOTA));
	cr_assert_null(plan_find(&plan, MIDLS, PLAN_KNOB_CFS_QUOTA));
	expect_cpuset(MIDLSC, "0-15"); /* the whole BE tree, koordinator's walk */
}

/*
 * Going back when the Mid+LS pod leaves: one tick suppresses at both levels (the dir tightens
 * after its pods, which keep their parts), the next lets the pods go. At no tick is a BE pod
 * without a limit on some level.
 */
Test(cpu_suppress, switch_back_to_the_dir_keeps_be_suppressed)
{
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	with_mid_ls();
	decide();
	decide();
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	pods[2].is_active = false; /* the Mid+LS pod is gone */
	snap->pods[2].st.cpu_cores = 0.0;
	snap->node.cpu_cores_used = 10.5;
	decide();
	/* budget 10400 - 6000 - 2000 = 2400; capped at +10 % of the node over the total */
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 240000);
	cr_assert_eq(entry(BE "/podu1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 60000);
	cr_assert_eq(entry(BE "/podu3", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 180000);
	decide();
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 240000);
	cr_assert_null(plan_find(&plan, BE "/podu1", PLAN_KNOB_CFS_QUOTA),
		       "released: the actuator restores the pod's own value");
	cr_assert_null(plan_find(&plan, BE "/podu3", PLAN_KNOB_CFS_QUOTA));
}

/* Coming in: the dir is let go in the same tick that the pods get their parts. */
Test(cpu_suppress, switch_to_pods_in_one_tick)
{
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	with_mid_ls();
	pods[2].is_active = false;
	decide();
	cr_assert_gt(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 0);
	cr_assert_null(plan_find(&plan, BE "/podu1", PLAN_KNOB_CFS_QUOTA));
	pods[2].is_active = true;
	decide();
	cr_assert_eq(entry(BE, PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_gt(entry(BE "/podu1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 0);
	cr_assert_gt(entry(BE "/podu3", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 0);
}

/* cpuset going back: the dir-level plan already covers the pods, so one tick is enough. */
Test(cpu_suppress, cpuset_switch_back)
{
	with_mid_ls();
	decide();
	decide();
	expect_cpuset(BE, "0-15");
	pods[2].is_active = false;
	snap->pods[2].st.cpu_cores = 0.0;
	snap->node.cpu_cores_used = 10.5;
	decide();
	expect_cpuset(BE, "0-1,8");
	expect_cpuset(BE "/podu1", "0-1,8");
	decide();
	expect_cpuset(BE, "0-1,8");
	expect_cpuset(BE "/podu1", "0-1,8");
	expect_cpuset(BE "/podu1/c1", "0-1,8");
}
