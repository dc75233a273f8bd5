// SPDX-License-Identifier: GPL-2.0
/* cpuset_rules against canned snapshots: koordinator.md §2.4 table and §2.2 share pools. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpuset_rules.h"
#include "slo.h"
#include "snapshot.h"
#include "strategy.h"

#define NCPU 16

static struct topo_cpu tcpus[NCPU];
static struct topology topo;
static struct pod pods[8];
static struct pod_numa_res numa[8];
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;
static struct cpumgr_state *cpumgr;

/* 2 sockets/NUMA nodes, HT: node 0 = 0-3,8-11, node 1 = 4-7,12-15. */
static void build_topology(void)
{
	memset(&topo, 0, sizeof(topo));
	for (int i = 0; i < NCPU; i++) {
		tcpus[i] = (struct topo_cpu){
			.cpu = i, .socket_id = (i % 8) / 4, .node_id = (i % 8) / 4, .core_id = i % 4
		};
		cpumask_set(&topo.online, (unsigned int)i);
	}
	topo.cpus = tcpus;
	topo.nr_cpus = NCPU;
	topo.nr_sockets = topo.nr_nodes = 2;
}

static const char *const uids[] = { "u0", "u1", "u2", "u3", "u4", "u5", "u6", "u7" };

static struct pod *mkpod(int i, enum pod_qos label, enum pod_k8s_qos k8s, const char *cpuset)
{
	struct pod *p = &pods[i];

	memset(p, 0, sizeof(*p));
	p->uid = p->name = (char *)uids[i];
	p->qos_raw = label;
	p->qos = label ? label : pod_qos_from_k8s(k8s);
	p->k8s_qos = k8s;
	p->is_active = true;
	p->res_status.state = POD_ANN_OK;
	p->res_status.cpuset = (char *)(cpuset ? cpuset : "");
	return p;
}

static void bind_numa(struct pod *p, int i, int node, bool batch)
{
	pod_res_init(&numa[i].resources);
	numa[i].node = node;
	if (batch)
		numa[i].resources.batch_cpu_milli = 2000;
	else
		numa[i].resources.cpu_milli = 2000;
	p->res_status.numa = &numa[i];
	p->res_status.nr_numa = 1;
}

static void add(const struct pod *pod, const char *cg, const char *ctr)
{
	struct snap_pod *sp;

	snap->pods = realloc(snap->pods, (snap->nr_pods + 1) * sizeof(*snap->pods));
	cr_assert_not_null(snap->pods);
	sp = &snap->pods[snap->nr_pods++];
	memset(sp, 0, sizeof(*sp));
	sp->pod = pod;
	sp->cgroup = strdup(cg);
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
	cfg.cpuset_rules_enable = true;
	snap = snapshot__new();
	snap->node.topo = &topo;
	snap->node.nr_cpus = NCPU;
	plan_init(&plan);
	plan.strategy = "cpuset_rules";
	plan.prio = 20;
}

static void teardown(void)
{
	plan_fini(&plan);
	snap->node.cpumgr = NULL; /* the test's own, borrowed by the snapshot */
	snapshot__put(snap);
	free(cpumgr);
	cpumgr = NULL;
}

TestSuite(cpuset_rules, .init = setup, .fini = teardown);

static struct strategy_input input(void)
{
	snap->node.cpumgr = cpumgr;
	return (struct strategy_input){ .snap = snap, .cfg = &cfg };
}

static void fmt(const struct cpumask *m, char *buf)
{
	cpulist_format(m, buf, 64);
}

static void lse_lsr(void)
{
	add(mkpod(0, POD_QOS_LSE, POD_K8S_QOS_GUARANTEED, "0,8"), "/kubepods/podu0",
	    "/kubepods/podu0/c0");
	add(mkpod(1, POD_QOS_LSR, POD_K8S_QOS_GUARANTEED, "1-2,9-10"), "/kubepods/podu1",
	    "/kubepods/podu1/c1");
}

Test(cpuset_rules, share_pools)
{
	struct strategy_input in;
	struct share_pools pools;
	char buf[64];

	lse_lsr();
	in = input();
	cpuset_share_pools(&in, &pools);
	fmt(&pools.ls, buf);
	cr_assert_str_eq(buf, "3-7,11-15", "LS pool: minus LSE and LSR");
	fmt(&pools.be, buf);
	cr_assert_str_eq(buf, "1-7,9-15", "BE pool: minus LSE only");

	cpulist_parse("15", &cfg.reserved_cpus);
	cfg.has_system_cpus = true;
	cpulist_parse("14", &cfg.system_cpus);
	cpuset_share_pools(&in, &pools);
	fmt(&pools.ls, buf);
	cr_assert_str_eq(buf, "3-7,11-13");
	cfg.system_exclusive = false;
	cpuset_share_pools(&in, &pools);
	fmt(&pools.be, buf);
	cr_assert_str_eq(buf, "1-7,9-14");
}

Test(cpuset_rules, kubelet_static_removes_unmanaged_exclusive_cpus)
{
	struct strategy_input in;
	struct share_pools pools;
	char buf[64];

	add(mkpod(2, POD_QOS_NONE, POD_K8S_QOS_GUARANTEED, NULL), "/kubepods/podu2",
	    "/kubepods/podu2/c2");
	add(mkpod(3, POD_QOS_LS, POD_K8S_QOS_GUARANTEED, NULL), "/kubepods/podu3", NULL);
	cpumgr = calloc(1, sizeof(*cpumgr) + 2 * sizeof(struct cpumgr_entry));
	cpumgr->entries = (struct cpumgr_entry *)(cpumgr + 1);
	cpumgr->nr_entries = 2;
	snprintf(cpumgr->entries[0].pod_uid, 65, "u2");
	cpulist_parse("3", &cpumgr->entries[0].cpus);
	snprintf(cpumgr->entries[1].pod_uid, 65, "u3"); /* managed (LS): stays in the pool */
	cpulist_parse("4", &cpumgr->entries[1].cpus);
	cfg.kubelet_policy = KUBELET_CPU_STATIC;
	in = input();
	cpuset_share_pools(&in, &pools);
	fmt(&pools.ls, buf);
	cr_assert_str_eq(buf, "0-2,4-15");
	cfg.kubelet_policy = KUBELET_CPU_NONE;
	cpuset_share_pools(&in, &pools);
	fmt(&pools.ls, buf);
	cr_assert_str_eq(buf, "0-15", "the checkpoint matters only under static");
}

static void decide(void)
{
	struct strategy_input in = input();
	struct strategy_report rep = { 0 };

	plan_reset(&plan);
	cr_assert_eq(cpuset_rules_strategy.decide(NULL, &in, &plan, &rep), 0);
}

static void expect_cpuset(const char *cg, const char *want)
{
	const struct plan_entry *e = plan_find(&plan, cg, PLAN_KNOB_CPUSET);
	char buf[64];

	if (!want) {
		cr_assert_null(e, "%s must be left alone", cg);
		return;
	}
	cr_assert_not_null(e, "no cpuset for %s", cg);
	fmt(&e->v.cpus, buf);
	cr_assert_str_eq(buf, want, "%s", cg);
}

Test(cpuset_rules, table)
{
	lse_lsr();
	add(mkpod(2, POD_QOS_LS, POD_K8S_QOS_BURSTABLE, NULL), "/kubepods/burstable/podu2",
	    "/kubepods/burstable/podu2/c2");
	add(mkpod(3, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL), "/kubepods/besteffort/podu3",
	    "/kubepods/besteffort/podu3/c3");
	add(mkpod(4, POD_QOS_NONE, POD_K8S_QOS_GUARANTEED, NULL), "/kubepods/podu4",
	    "/kubepods/podu4/c4");
	add(mkpod(5, POD_QOS_SYSTEM, POD_K8S_QOS_BURSTABLE, NULL), "/kubepods/burstable/podu5",
	    "/kubepods/burstable/podu5/c5");
	add(mkpod(6, POD_QOS_NONE, POD_K8S_QOS_BESTEFFORT, NULL), "/kubepods/besteffort/podu6",
	    "/kubepods/besteffort/podu6/c6");
	cfg.has_system_cpus = true;
	cpulist_parse("7", &cfg.system_cpus);
	decide();
	/* 1: resource-status cpuset verbatim, quota -1 at pod and container level */
	expect_cpuset("/kubepods/podu0/c0", "0,8");
	expect_cpuset("/kubepods/podu1/c1", "1-2,9-10");
	cr_assert_eq(plan_find(&plan, "/kubepods/podu1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_eq(plan_find(&plan, "/kubepods/podu1/c1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	/* 4: LS share pool (minus the exclusive SYSTEM cpu) */
	expect_cpuset("/kubepods/burstable/podu2/c2", "3-6,11-15");
	/* 5: BE and unlabelled BestEffort inherit the besteffort dir */
	expect_cpuset("/kubepods/besteffort/podu3/c3", NULL);
	expect_cpuset("/kubepods/besteffort/podu6/c6", NULL);
	/* 6: kubelet none -> LS pool for unlabelled Guaranteed */
	expect_cpuset("/kubepods/podu4/c4", "3-6,11-15");
	/* 3: SYSTEM */
	expect_cpuset("/kubepods/burstable/podu5/c5", "7");
	/* pod dirs are left to the kernel's inheritance */
	expect_cpuset("/kubepods/burstable/podu2", NULL);

	cfg.kubelet_policy = KUBELET_CPU_STATIC;
	decide();
	expect_cpuset("/kubepods/podu4/c4", NULL);
	/* --disable-unset-cpu-quota */
	cfg.unset_cpu_quota = false;
	decide();
	cr_assert_null(plan_find(&plan, "/kubepods/podu1", PLAN_KNOB_CFS_QUOTA));
}

/* Priority+QoS: Mid+LS (BestEffort by the webhook) takes the LS pool, Mid+BE the BE rules. */
Test(cpuset_rules, mid_ls_takes_the_ls_pool_mid_be_inherits)
{
	struct pod *mid_ls, *mid_be, *batch_ls;

	lse_lsr();
	mid_ls = mkpod(2, POD_QOS_NONE, POD_K8S_QOS_BESTEFFORT, NULL);
	mid_ls->prio_raw = mid_ls->prio = POD_PRIO_MID;
	mid_be = mkpod(3, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL);
	mid_be->prio_raw = mid_be->prio = POD_PRIO_MID;
	batch_ls = mkpod(4, POD_QOS_NONE, POD_K8S_QOS_BESTEFFORT, NULL);
	batch_ls->prio_raw = batch_ls->prio = POD_PRIO_BATCH;
	add(mid_ls, "/kubepods/besteffort/podu2", "/kubepods/besteffort/podu2/c2");
	add(mid_be, "/kubepods/besteffort/podu3", "/kubepods/besteffort/podu3/c3");
	add(batch_ls, "/kubepods/besteffort/podu4", "/kubepods/besteffort/podu4/c4");
	decide();
	expect_cpuset("/kubepods/besteffort/podu2/c2", "3-7,11-15");
	expect_cpuset("/kubepods/besteffort/podu3/c3", NULL);
	/* koord-batch/LS is valid but not Mid: a BestEffort pod inherits, as before */
	expect_cpuset("/kubepods/besteffort/podu4/c4", NULL);
	/* an invalid pair (koord-mid/LSR) goes by its QoS alone */
	mid_ls->qos_raw = POD_QOS_LSR;
	decide();
	expect_cpuset("/kubepods/besteffort/podu2/c2", NULL);
}

Test(cpuset_rules, numa_bound_pods)
{
	struct pod *ls = mkpod(0, POD_QOS_LS, POD_K8S_QOS_BURSTABLE, NULL);
	struct pod *be = mkpod(1, POD_QOS_BE, POD_K8S_QOS_BESTEFFORT, NULL);

	bind_numa(ls, 0, 1, false);
	bind_numa(be, 1, 1, true);
	add(ls, "/kubepods/burstable/podu0", "/kubepods/burstable/podu0/c0");
	add(be, "/kubepods/besteffort/podu1", "/kubepods/besteffort/podu1/c1");
	add(mkpod(2, POD_QOS_LSE, POD_K8S_QOS_GUARANTEED, "4,12"), "/kubepods/podu2", NULL);
	add(mkpod(3, POD_QOS_LSR, POD_K8S_QOS_GUARANTEED, "5,13"), "/kubepods/podu3", NULL);
	decide();
	/* 2: the LS pool of node 1 only */
	expect_cpuset("/kubepods/burstable/podu0/c0", "6-7,14-15");
	/* without BECPUManager a NUMA-bound BE pod falls through to inherit */
	expect_cpuset("/kubepods/besteffort/podu1/c1", NULL);
	cfg.be_cpu_manager = true;
	decide();
	expect_cpuset("/kubepods/besteffort/podu1/c1", "5-7,13-15");
}

Test(cpuset_rules, bare_metal_group_is_its_own_container)
{
	struct pod *ls = mkpod(0, POD_QOS_LS, POD_K8S_QOS_BESTEFFORT, NULL);

	ls->is_static = true;
	add(ls, "/ls", NULL);
	decide();
	expect_cpuset("/ls", "0-15");
}

/* A glob's matches are each a cgroup of the group; the snapshot's cgroup is only the first. */
Test(cpuset_rules, bare_metal_glob_writes_every_match)
{
	struct pod *ls = mkpod(0, POD_QOS_LS, POD_K8S_QOS_BESTEFFORT, NULL);
	char *m[] = { "/ls-1", "/ls-2", "/ls-3" };

	ls->is_static = true;
	ls->cgroups = m;
	ls->nr_cgroups = 3;
	add(ls, "/ls-1", NULL);
	decide();
	expect_cpuset("/ls-1", "0-15");
	expect_cpuset("/ls-2", "0-15");
	expect_cpuset("/ls-3", "0-15");
	ls->cgroups = NULL;
	ls->nr_cgroups = 0;
}
