// SPDX-License-Identifier: GPL-2.0
/* extended_resource against canned pods: koordinator.md §3.2 conversions and -1 rules, both tiers. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extended_resource.h"
#include "cgroupfs.h"
#include "slo.h"
#include "snapshot.h"
#include "strategy.h"

#define GI (1024ULL * 1024 * 1024)

static struct pod pod;
static struct pod_container ctrs[2];
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;

static void setup(void)
{
	slo_config_init(&cfg);
	cfg.batch_resource_enable = true;
	snap = snapshot__new();
	snap->node.nr_cpus = 4;
	plan_init(&plan);
	plan.strategy = "extended_resource";
	plan.prio = 10;

	memset(&pod, 0, sizeof(pod));
	pod.uid = pod.name = "b0";
	pod.qos_raw = pod.qos = POD_QOS_BE;
	pod.k8s_qos = POD_K8S_QOS_BESTEFFORT;
	pod.is_active = true;
	for (int i = 0; i < 2; i++) {
		memset(&ctrs[i], 0, sizeof(ctrs[i]));
		ctrs[i].name = i ? "c1" : "c0";
		pod_res_init(&ctrs[i].requests);
		pod_res_init(&ctrs[i].limits);
	}
	/* c0: 1 core request, 2 cores limit, 1 GiB; c1: 500m request, no limit */
	ctrs[0].requests.batch_cpu_milli = 1000;
	ctrs[0].limits.batch_cpu_milli = 2000;
	ctrs[0].limits.batch_memory_bytes = (int64_t)GI;
	ctrs[1].requests.batch_cpu_milli = 500;
	pod.containers = ctrs;
	pod.nr_containers = 2;

	snap->pods = calloc(1, sizeof(*snap->pods));
	snap->nr_pods = 1;
	snap->pods[0].pod = &pod;
	snap->pods[0].cgroup = strdup("/kubepods/besteffort/podb0");
	snap->pods[0].ctrs = calloc(2, sizeof(struct snap_container));
	snap->pods[0].nr_ctrs = 2;
	for (int i = 0; i < 2; i++) {
		char cg[64];

		snprintf(cg, sizeof(cg), "/kubepods/besteffort/podb0/c%d", i);
		snap->pods[0].ctrs[i].cgroup = strdup(cg);
		snap->pods[0].ctrs[i].spec = &ctrs[i];
	}
}

static void teardown(void)
{
	plan_fini(&plan);
	snapshot__put(snap);
}

TestSuite(extended_resource, .init = setup, .fini = teardown);

Test(extended_resource, conversions)
{
	cr_assert_eq(ext_milli_to_shares(0), 2);
	cr_assert_eq(ext_milli_to_shares(-1), 2);
	cr_assert_eq(ext_milli_to_shares(1), 2);
	cr_assert_eq(ext_milli_to_shares(100), 102);
	cr_assert_eq(ext_milli_to_shares(1000), 1024);
	cr_assert_eq(ext_milli_to_shares(1000000), 262144);
	cr_assert_eq(ext_milli_to_quota(0), -1);
	cr_assert_eq(ext_milli_to_quota(-5), -1);
	cr_assert_eq(ext_milli_to_quota(5), 1000, "0 < q < 1000 -> 1000 (issue #696)");
	cr_assert_eq(ext_milli_to_quota(2000), 200000);
}

/* ecosystem.md §2.2: the request -> shares -> v2 weight table, both formulas */
Test(extended_resource, shares_to_weight_both_formulas)
{
	static const struct {
		int64_t milli;
		uint64_t shares, linear, log;
	} t[] = {
		{ 0, 2, 1, 1 },		  { 100, 102, 4, 17 },		{ 250, 256, 10, 35 },
		{ 500, 512, 20, 59 },	  { 1000, 1024, 39, 100 },	{ 2000, 2048, 79, 174 },
		{ 4000, 4096, 157, 303 }, { 64000, 65536, 2500, 3023 },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		uint64_t s = ext_milli_to_shares(t[i].milli);

		cr_assert_eq(s, t[i].shares, "%lldm", (long long)t[i].milli);
		cr_assert_eq(cg_shares_to_weight(s, CG_WEIGHT_LINEAR), t[i].linear, "%llu",
			     (unsigned long long)s);
		cr_assert_eq(cg_shares_to_weight(s, CG_WEIGHT_LOG), t[i].log, "%llu",
			     (unsigned long long)s);
	}
}

static void decide(void)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg };
	struct strategy_report rep = { 0 };

	plan_reset(&plan);
	cr_assert_eq(extended_resource_strategy.decide(NULL, &in, &plan, &rep), 0);
}

static const struct plan_entry *entry(const char *cg, enum plan_knob knob)
{
	const struct plan_entry *e = plan_find(&plan, cg, knob);

	cr_assert_not_null(e, "no %s for %s", plan_knob_name(knob), cg);
	return e;
}

#define POD "/kubepods/besteffort/podb0"

Test(extended_resource, container_without_limit_makes_pod_quota_unlimited)
{
	decide();
	cr_assert_eq(entry(POD, PLAN_KNOB_SHARES)->v.shares, 1536);
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_eq(entry(POD, PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, UINT64_MAX);
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_SHARES)->v.shares, 1024);
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 200000);
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, GI);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_SHARES)->v.shares, 512);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, UINT64_MAX);
	cr_assert_str_eq(entry(POD, PLAN_KNOB_SHARES)->strategy, "extended_resource");
}

Test(extended_resource, all_limits_sum_at_pod_level)
{
	ctrs[1].limits.batch_cpu_milli = 1000;
	ctrs[1].limits.batch_memory_bytes = (int64_t)GI;
	decide();
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 300000);
	cr_assert_eq(entry(POD, PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, 2 * GI);
}

Test(extended_resource, cfs_quota_suppress_forces_unlimited)
{
	cfg.suppress_enable = true;
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cfg.suppress_policy = SUPPRESS_CPUSET;
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 200000);
}

Test(extended_resource, normalization_ratio_divides_quota)
{
	cfg.cpu_normalization_ratio = 1.2;
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 166667);
}

Test(extended_resource, extended_spec_annotation_fills_missing_fields)
{
	struct pod_ext_spec_ctr ext = { .name = "c1" };

	pod_res_init(&ext.requests);
	pod_res_init(&ext.limits);
	ext.limits.batch_cpu_milli = 3000;
	pod.ext_spec.state = POD_ANN_OK;
	pod.ext_spec.containers = &ext;
	pod.ext_spec.nr_containers = 1;
	decide();
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 300000);
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 500000);
}

Test(extended_resource, only_be_labelled_pods_with_batch_resources)
{
	pod.qos_raw = POD_QOS_NONE;
	decide();
	cr_assert_eq(plan.nr, 0, "unlabelled BestEffort pods are not touched");
	pod.qos_raw = POD_QOS_BE;
	for (int i = 0; i < 2; i++) {
		pod_res_init(&ctrs[i].requests);
		pod_res_init(&ctrs[i].limits);
	}
	decide();
	cr_assert_eq(plan.nr, 0, "nothing happens without the extended spec");
}

/*
 * Batch behaviour byte for byte: a mixed node (spec and annotation resources, missing limits,
 * the 1000 us floor, a container without cgroup, pods the strategy must skip) under three
 * configurations, dumped as text. The expected text was recorded from the batch-only code
 * before the tiers were introduced; any change in the batch translation shows up here.
 */
#define NGOLD 6

static struct pod gpods[NGOLD];
static struct pod_container gctrs[NGOLD][2];
static struct pod_ext_spec_ctr gext[2];

static void gold_pod(int i, const char *uid, enum pod_qos raw, bool active)
{
	struct snap_pod *sp = &snap->pods[i];
	char cg[96];

	gpods[i] = (struct pod){ .uid = (char *)uid,
				 .name = (char *)uid,
				 .qos_raw = raw,
				 .qos = raw ? raw : POD_QOS_BE,
				 .k8s_qos = POD_K8S_QOS_BESTEFFORT,
				 .is_active = active,
				 .containers = gctrs[i],
				 .nr_containers = 2 };
	snprintf(cg, sizeof(cg), "/kubepods/besteffort/pod%s", uid);
	sp->pod = &gpods[i];
	sp->cgroup = strdup(cg);
	sp->ctrs = calloc(2, sizeof(*sp->ctrs));
	sp->nr_ctrs = 2;
	for (int c = 0; c < 2; c++) {
		gctrs[i][c] = (struct pod_container){ .name = c ? "c1" : "c0" };
		pod_res_init(&gctrs[i][c].requests);
		pod_res_init(&gctrs[i][c].limits);
		snprintf(cg, sizeof(cg), "/kubepods/besteffort/pod%s/c%d", uid, c);
		sp->ctrs[c].cgroup = strdup(cg);
		sp->ctrs[c].spec = &gctrs[i][c];
	}
}

static void gold_node(void)
{
	for (size_t i = 0; i < snap->nr_pods; i++) {
		free(snap->pods[i].cgroup);
		for (size_t c = 0; c < snap->pods[i].nr_ctrs; c++)
			free(snap->pods[i].ctrs[c].cgroup);
		free(snap->pods[i].ctrs);
	}
	free(snap->pods);
	snap->pods = calloc(NGOLD, sizeof(*snap->pods));
	snap->nr_pods = NGOLD;
	/* spec only; c1 has no limit */
	gold_pod(0, "g0", POD_QOS_BE, true);
	gctrs[0][0].requests.batch_cpu_milli = 1000;
	gctrs[0][0].limits.batch_cpu_milli = 2000;
	gctrs[0][0].limits.batch_memory_bytes = (int64_t)GI;
	gctrs[0][1].requests.batch_cpu_milli = 500;
	/* annotation only, the 1000 us floor */
	gold_pod(1, "g1", POD_QOS_BE, true);
	for (int c = 0; c < 2; c++) {
		gext[c] = (struct pod_ext_spec_ctr){ .name = c ? "c1" : "c0" };
		pod_res_init(&gext[c].requests);
		pod_res_init(&gext[c].limits);
	}
	gext[0].requests.batch_cpu_milli = 250;
	gext[0].limits.batch_cpu_milli = 300;
	gext[0].limits.batch_memory_bytes = (int64_t)GI / 2;
	gext[1].limits.batch_cpu_milli = 5;
	gext[1].limits.batch_memory_bytes = (int64_t)GI;
	gpods[1].ext_spec = (struct pod_ext_spec){ .state = POD_ANN_OK,
						   .containers = gext,
						   .nr_containers = 2 };
	/* every limit given; c1's request is 0; c0's container cgroup not found */
	gold_pod(2, "g2", POD_QOS_BE, true);
	gctrs[2][0].requests.batch_cpu_milli = 2000;
	gctrs[2][0].limits.batch_cpu_milli = 4000;
	gctrs[2][0].limits.batch_memory_bytes = 2 * (int64_t)GI;
	gctrs[2][1].requests.batch_cpu_milli = 0;
	gctrs[2][1].limits.batch_cpu_milli = 1000;
	gctrs[2][1].limits.batch_memory_bytes = (int64_t)GI;
	free(snap->pods[2].ctrs[0].cgroup);
	snap->pods[2].ctrs[0].cgroup = NULL;
	/* unlabelled BestEffort with batch resources: not touched */
	gold_pod(3, "g3", POD_QOS_NONE, true);
	gctrs[3][0].requests.batch_cpu_milli = 1000;
	/* inactive: not touched */
	gold_pod(4, "g4", POD_QOS_BE, false);
	gctrs[4][0].requests.batch_cpu_milli = 1000;
	/* only a memory request in the spec: still "has batch resources"; mid ignored */
	gold_pod(5, "g5", POD_QOS_BE, true);
	gctrs[5][0].requests.batch_memory_bytes = (int64_t)GI;
	gctrs[5][1].requests.mid_cpu_milli = 1000;
	gctrs[5][1].limits.mid_cpu_milli = 1500;
	gpods[5].prio_raw = gpods[5].prio = POD_PRIO_MID;
}

static void gold_dump(char *buf, size_t size)
{
	size_t off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < plan.nr && off < size; i++) {
		const struct plan_entry *e = &plan.entries[i];
		char v[64];

		plan_value_format(e->knob, &e->v, v, sizeof(v));
		off += (size_t)snprintf(buf + off, size - off, "%s %s %s %s|", e->cgroup,
					plan_knob_name(e->knob), v, e->why);
	}
}

/* One line per configuration, recorded from the batch-only strategy. */
#define GOLD_FILE "tests/fixtures/plans/batch_resource_golden.txt"

static void gold_want(char want[3][16384])
{
	FILE *f = fopen(GOLD_FILE, "r");

	cr_assert_not_null(f, "cannot open %s (run from the repository root)", GOLD_FILE);
	for (int k = 0; k < 3; k++) {
		cr_assert_not_null(fgets(want[k], sizeof(want[k]), f));
		want[k][strcspn(want[k], "\n")] = '\0';
	}
	fclose(f);
}

Test(extended_resource, golden_batch_plan)
{
	static char got[16384], want[3][16384];

	gold_want(want);
	gold_node();
	for (int k = 0; k < 3; k++) {
		slo_config_init(&cfg);
		cfg.batch_resource_enable = true;
		if (k == 1)
			cfg.cpu_normalization_ratio = 1.5;
		if (k == 2) {
			cfg.suppress_enable = true;
			cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
		}
		decide();
		gold_dump(got, sizeof(got));
		if (getenv("KQOS_GOLD_PRINT"))
			printf("%s\n", got);
		cr_expect_str_eq(got, want[k], "configuration %d", k);
	}
}

/* With the mid tier on too, a node without Mid pods gets the same batch plan. */
Test(extended_resource, golden_batch_plan_with_mid_tier_on)
{
	static char got[16384], want[3][16384];

	gold_want(want);
	gold_node();
	gpods[5].prio_raw = gpods[5].prio = POD_PRIO_BATCH;
	slo_config_init(&cfg);
	cfg.batch_resource_enable = cfg.mid_resource_enable = true;
	decide();
	gold_dump(got, sizeof(got));
	cr_expect_str_eq(got, want[0]);
}

/* The pod of setup() as a Mid pod: mid-cpu/mid-memory instead of batch-*. */
static void make_mid(enum pod_qos raw)
{
	pod.prio_raw = pod.prio = POD_PRIO_MID;
	pod.qos_raw = raw;
	pod.qos = raw ? raw : POD_QOS_BE;
	for (int i = 0; i < 2; i++) {
		pod_res_init(&ctrs[i].requests);
		pod_res_init(&ctrs[i].limits);
	}
	/* c0: 1 core request, 1.5 cores limit, 1 GiB; c1: 500m request, no limit */
	ctrs[0].requests.mid_cpu_milli = 1000;
	ctrs[0].limits.mid_cpu_milli = 1500;
	ctrs[0].limits.mid_memory_bytes = (int64_t)GI;
	ctrs[1].requests.mid_cpu_milli = 500;
	cfg.batch_resource_enable = false;
	cfg.mid_resource_enable = true;
}

Test(extended_resource, mid_pod_and_container_levels)
{
	make_mid(POD_QOS_NONE); /* koord-mid/LS */
	decide();
	cr_assert_eq(entry(POD, PLAN_KNOB_SHARES)->v.shares, 1536);
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1, "c1 has no limit");
	cr_assert_eq(entry(POD, PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, UINT64_MAX);
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_SHARES)->v.shares, 1024);
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 150000);
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, GI);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_SHARES)->v.shares, 512);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1);
	cr_assert_str_eq(entry(POD, PLAN_KNOB_SHARES)->why, "mid resources: pod");
	cr_assert_str_eq(entry(POD "/c0", PLAN_KNOB_SHARES)->why, "mid resources: container");
	/* every limit given: the pod's are the sums */
	ctrs[1].limits.mid_cpu_milli = 5; /* below 1000 us: the floor */
	ctrs[1].limits.mid_memory_bytes = (int64_t)GI;
	decide();
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 150500);
	cr_assert_eq(entry(POD, PLAN_KNOB_MEMORY_MAX)->v.mem_bytes, 2 * GI);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 1000);
}

Test(extended_resource, mid_normalization_and_annotation)
{
	struct pod_ext_spec_ctr ext = { .name = "c1" };

	make_mid(POD_QOS_LS);
	pod_res_init(&ext.requests);
	pod_res_init(&ext.limits);
	ext.limits.mid_cpu_milli = 2000;
	ext.limits.batch_cpu_milli = 9000; /* another tier's name: not read */
	pod.ext_spec = (struct pod_ext_spec){ .state = POD_ANN_OK,
					      .containers = &ext,
					      .nr_containers = 1 };
	cfg.cpu_normalization_ratio = 1.2;
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 125000);
	cr_assert_eq(entry(POD "/c1", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 166667);
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_QUOTA)->v.quota_us, 291667);
}

/* cfsQuota suppress forces -1 on the pods it suppresses; a protected Mid+LS keeps its limit. */
Test(extended_resource, mid_quota_under_cfs_quota_suppress)
{
	cfg.suppress_enable = true;
	cfg.suppress_policy = SUPPRESS_CFS_QUOTA;
	make_mid(POD_QOS_NONE);
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, 150000, "Mid+LS");
	cfg.mid_ls_protected = false;
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1, "koordinator: BE");
	cfg.mid_ls_protected = true;
	make_mid(POD_QOS_BE);
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_CFS_QUOTA)->v.quota_us, -1, "Mid+BE");
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_SHARES)->v.shares, 1024);
}

Test(extended_resource, each_tier_has_its_switch)
{
	make_mid(POD_QOS_NONE);
	cfg.mid_resource_enable = false;
	cr_assert_not(extended_resource_strategy.enabled(&cfg));
	cfg.batch_resource_enable = true;
	cr_assert(extended_resource_strategy.enabled(&cfg));
	decide();
	cr_assert_eq(plan.nr, 0, "the batch tier does not read mid resources");
	/* mid tier on, batch off: a batch pod is left alone */
	teardown();
	setup();
	cfg.batch_resource_enable = false;
	cfg.mid_resource_enable = true;
	decide();
	cr_assert_eq(plan.nr, 0, "the mid tier does not read batch resources");
}

/* Only valid koord-mid pairs are Mid pods: an invalid pair goes by its QoS alone. */
Test(extended_resource, mid_tier_takes_valid_mid_pairs_only)
{
	make_mid(POD_QOS_LSR); /* koord-mid/LSR is invalid */
	decide();
	cr_assert_eq(plan.nr, 0);
	make_mid(POD_QOS_NONE);
	pod.prio_raw = POD_PRIO_BATCH; /* koord-batch/LS with mid names: not a Mid pod */
	decide();
	cr_assert_eq(plan.nr, 0);
}

/* A koord-mid/BE pod carrying both names: its own tier's values win. */
Test(extended_resource, mid_be_with_both_names_takes_mid)
{
	make_mid(POD_QOS_BE);
	cfg.batch_resource_enable = true;
	ctrs[0].requests.batch_cpu_milli = 4000;
	decide();
	cr_assert_eq(entry(POD "/c0", PLAN_KNOB_SHARES)->v.shares, 1024);
	cr_assert_gt(plan.nr_overridden, 0);
}
