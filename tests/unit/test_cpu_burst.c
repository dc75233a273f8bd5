// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_burst against canned pods: koordinator.md §4.4 (burst from cpuBurstPercent, quota scaled
 * x1.2 / x0.8 within [base, base x cfsQuotaBurstPercent/100], share-pool states, the token
 * bucket), the annotation merge, and the clamp to what the kernel accepts.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_burst.h"
#include "slo.h"
#include "snapshot.h"
#include "strategy.h"
#include "window.h"

#define NS   1000000000ULL
#define POD  "/kubepods/burstable/podb1"
#define CTR0 POD "/c0"
#define CTR1 POD "/c1"

static struct pod pod;
static struct pod_container ctrs[2];
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;
static void *state;

static void setup(void)
{
	slo_config_init(&cfg);
	cfg.burst.configured = true;
	cfg.burst.policy = POD_BURST_AUTO;
	snap = snapshot__new();
	snap->node.nr_cpus = 8;
	snap->node.has_cpu_usage = true;
	snap->node.cpu_cores_used = 1.0; /* share pool idle */
	plan_init(&plan);
	plan.strategy = "cpu_burst";

	memset(&pod, 0, sizeof(pod));
	pod.uid = "b1";
	pod.name = "web";
	pod.namespace = "shop";
	pod.qos_raw = pod.qos = POD_QOS_LS;
	pod.phase = POD_PHASE_RUNNING;
	pod.is_active = true;
	for (int i = 0; i < 2; i++) {
		memset(&ctrs[i], 0, sizeof(ctrs[i]));
		ctrs[i].name = i ? "c1" : "c0";
		pod_res_init(&ctrs[i].requests);
		pod_res_init(&ctrs[i].limits);
	}
	ctrs[0].limits.cpu_milli = 500; /* quota 50000 */
	ctrs[1].limits.cpu_milli = 2000; /* quota 200000 */
	pod.containers = ctrs;
	pod.nr_containers = 2;

	snap->pods = calloc(1, sizeof(*snap->pods));
	snap->nr_pods = 1;
	snap->pods[0].pod = &pod;
	snap->pods[0].cgroup = strdup(POD);
	snap->pods[0].ctrs = calloc(2, sizeof(struct snap_container));
	snap->pods[0].nr_ctrs = 2;
	for (int i = 0; i < 2; i++) {
		snap->pods[0].ctrs[i].cgroup = strdup(i ? CTR1 : CTR0);
		snap->pods[0].ctrs[i].spec = &ctrs[i];
		snap->pods[0].ctrs[i].name = i ? "c1" : "c0";
	}
	cr_assert_eq(cpu_burst_strategy.init(&cfg, &state), 0);
}

static void teardown(void)
{
	cpu_burst_strategy.fini(state);
	plan_fini(&plan);
	snapshot__put(snap);
}

TestSuite(cpu_burst, .init = setup, .fini = teardown);

static struct strategy_report rep;

static void decide_at(uint64_t t_ns)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg, .now_ns = t_ns, .is_tick = true };

	plan_reset(&plan);
	memset(&rep, 0, sizeof(rep));
	cr_assert_eq(cpu_burst_strategy.decide(state, &in, &plan, &rep), 0);
}

static const struct plan_entry *entry(const char *cg, enum plan_knob k)
{
	return plan_find(&plan, cg, k);
}

static int64_t quota(const char *cg)
{
	const struct plan_entry *e = entry(cg, PLAN_KNOB_CFS_QUOTA);

	cr_assert_not_null(e, "no quota for %s", cg);
	return e->v.quota_us;
}

static void throttle(int c, double ratio)
{
	snap->pods[0].ctrs[c].st.has_throttle = true;
	snap->pods[0].ctrs[c].st.throttled_ratio = ratio;
}

Test(cpu_burst, defaults_are_koordinators)
{
	struct slo_config d;

	slo_config_init(&d);
	cr_assert_eq(d.burst.policy, POD_BURST_NONE);
	cr_assert_eq(d.burst.cpu_burst_pct, 1000);
	cr_assert_eq(d.burst.cfs_quota_burst_pct, 300);
	cr_assert_eq(d.burst.cfs_quota_burst_period_s, -1);
	cr_assert_eq(d.burst.share_pool_threshold_pct, 50);
	cr_assert_not(cpu_burst_strategy.enabled(&d));
	cr_assert(cpu_burst_strategy.enabled(&cfg));
	/* a cpuBurstStrategy with policy none still runs: pods may opt in by annotation */
	cr_assert_eq(slo_config_parse("{\"cpuBurstStrategy\":{}}", NULL, &d, NULL, 0), 0);
	cr_assert_eq(d.burst.policy, POD_BURST_NONE);
	cr_assert(cpu_burst_strategy.enabled(&d));
}

Test(cpu_burst, a_pod_opts_in_under_a_node_policy_none)
{
	cfg.burst.policy = POD_BURST_NONE;
	decide_at(NS);
	cr_assert_eq(plan.nr, 0);
	pod.cpu_burst = (struct pod_cpu_burst){ .state = POD_ANN_OK,
						.policy = POD_BURST_CPU_ONLY,
						.cpu_burst_pct = POD_BURST_UNSET,
						.cfs_quota_burst_pct = POD_BURST_UNSET,
						.cfs_quota_burst_period_s = POD_BURST_UNSET };
	decide_at(2 * NS);
	cr_assert_eq(entry(CTR0, PLAN_KNOB_CFS_BURST)->v.burst_us, 50000);
	cr_assert_null(entry(CTR0, PLAN_KNOB_CFS_QUOTA));
}

Test(cpu_burst, asked_and_clamped_to_the_quota)
{
	/* 500m x 1000 % = 5 cores of burst per period; the kernel takes at most the quota */
	cr_assert_eq(burst_asked_us(500, 1000), 500000);
	cr_assert_eq(burst_clamp_us(500000, 50000), 50000);
	cr_assert_eq(burst_clamp_us(50000, 50000), 50000);
	cr_assert_eq(burst_clamp_us(20000, 50000), 20000);
	cr_assert_eq(burst_clamp_us(500000, -1), 500000);
	cr_assert_eq(burst_asked_us(0, 1000), 0);
	cr_assert_eq(burst_asked_us(1000, 50), 50000);
}

Test(cpu_burst, burst_planned_per_container_and_summed_on_the_pod)
{
	cfg.burst.cpu_burst_pct = 50; /* fits: 25000 and 100000 */
	decide_at(NS);
	cr_assert_eq(entry(CTR0, PLAN_KNOB_CFS_BURST)->v.burst_us, 25000);
	cr_assert_eq(entry(CTR1, PLAN_KNOB_CFS_BURST)->v.burst_us, 100000);
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_BURST)->v.burst_us, 125000);
	cr_assert_eq(rep.burst.nr_rows, 2);
	cr_assert_not(rep.burst.rows[0].clamp_new);
}

Test(cpu_burst, default_percent_is_clamped_and_logged_once_per_pod)
{
	decide_at(NS);
	cr_assert_eq(rep.burst.rows[0].asked_us, 500000);
	cr_assert_eq(rep.burst.rows[0].burst_us, 50000);
	cr_assert_eq(rep.burst.rows[1].asked_us, 2000000);
	cr_assert_eq(rep.burst.rows[1].burst_us, 200000);
	cr_assert_eq(entry(CTR0, PLAN_KNOB_CFS_BURST)->v.burst_us, 50000);
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_BURST)->v.burst_us, 250000);
	/* one log line for the pod, none on the next tick */
	cr_assert(rep.burst.rows[0].clamp_new);
	cr_assert_not(rep.burst.rows[1].clamp_new);
	decide_at(2 * NS);
	cr_assert_not(rep.burst.rows[0].clamp_new);
	cr_assert_not(rep.burst.rows[1].clamp_new);
}

Test(cpu_burst, only_ls_and_unlabelled_pods_with_a_limit)
{
	enum pod_qos no[] = { POD_QOS_LSE, POD_QOS_LSR, POD_QOS_BE };

	/* by the raw label, as koordlet: SYSTEM shares the pool and may burst */
	pod.qos_raw = POD_QOS_SYSTEM;
	decide_at(NS);
	cr_assert_not_null(entry(CTR0, PLAN_KNOB_CFS_BURST));

	for (size_t i = 0; i < 3; i++) {
		pod.qos_raw = no[i];
		decide_at(NS);
		cr_assert_eq(plan.nr, 0, "class %d planned", no[i]);
	}
	pod.qos_raw = POD_QOS_NONE;
	pod.phase = POD_PHASE_SUCCEEDED;
	decide_at(NS);
	cr_assert_eq(plan.nr, 0);
	pod.phase = POD_PHASE_PENDING;
	ctrs[1].limits.cpu_milli = POD_RES_UNSET;
	decide_at(NS);
	cr_assert_not_null(entry(CTR0, PLAN_KNOB_CFS_BURST));
	cr_assert_null(entry(CTR1, PLAN_KNOB_CFS_BURST));
	/* pod quota is unlimited without every limit: its burst is not clamped, its quota kept */
	cr_assert_eq(entry(POD, PLAN_KNOB_CFS_BURST)->v.burst_us, 50000);
	cr_assert_null(entry(POD, PLAN_KNOB_CFS_QUOTA));
}

Test(cpu_burst, scale_formula)
{
	cr_assert_eq(burst_scale(100000, BURST_OP_UP, 100000, 300), 120000);
	cr_assert_eq(burst_scale(120000, BURST_OP_UP, 100000, 300), 144000);
	cr_assert_eq(burst_scale(290000, BURST_OP_UP, 100000, 300), 300000);
	cr_assert_eq(burst_scale(300000, BURST_OP_DOWN, 100000, 300), 240000);
	cr_assert_eq(burst_scale(110000, BURST_OP_DOWN, 100000, 300), 100000);
	cr_assert_eq(burst_scale(150000, BURST_OP_REMAIN, 100000, 300), 150000);
	cr_assert_eq(burst_scale(150000, BURST_OP_REMAIN, 100000, 100), 100000);
}

Test(cpu_burst, node_states)
{
	cr_assert_eq(burst_node_state(3.5, 8, 50), BURST_NODE_IDLE);
	cr_assert_eq(burst_node_state(3.7, 8, 50), BURST_NODE_COOLING);
	cr_assert_eq(burst_node_state(4.0, 8, 50), BURST_NODE_OVERLOAD);
	/* LSE/LSR requests take every CPU: no pool left is overloaded, as in koordlet */
	cr_assert_eq(burst_node_state(1, 0, 50), BURST_NODE_OVERLOAD);
	cr_assert_eq(burst_op_for(true, BURST_NODE_IDLE, true), BURST_OP_UP);
	cr_assert_eq(burst_op_for(false, BURST_NODE_IDLE, true), BURST_OP_REMAIN);
	cr_assert_eq(burst_op_for(true, BURST_NODE_COOLING, true), BURST_OP_REMAIN);
	cr_assert_eq(burst_op_for(true, BURST_NODE_UNKNOWN, true), BURST_OP_REMAIN);
	cr_assert_eq(burst_op_for(false, BURST_NODE_OVERLOAD, true), BURST_OP_DOWN);
	cr_assert_eq(burst_op_for(true, BURST_NODE_IDLE, false), BURST_OP_DOWN);
}

Test(cpu_burst, share_pool_excludes_lse_lsr_and_be)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg };
	struct pod lsr = pod, be = pod;
	struct pod_container c = ctrs[0];
	struct snap_pod *sp;
	double used, total;

	c.requests.cpu_milli = 2000;
	lsr.uid = "l1";
	lsr.qos_raw = POD_QOS_LSR;
	lsr.containers = &c;
	lsr.nr_containers = 1;
	be.uid = "e1";
	be.qos_raw = POD_QOS_BE;
	be.containers = &c;
	be.nr_containers = 1;
	snap->pods = realloc(snap->pods, 3 * sizeof(*snap->pods));
	sp = &snap->pods[1];
	memset(sp, 0, 2 * sizeof(*sp));
	sp[0].pod = &lsr;
	sp[0].st.has_cpu = true;
	sp[0].st.cpu_cores = 1.5;
	sp[1].pod = &be;
	sp[1].st.has_cpu = true;
	sp[1].st.cpu_cores = 2.0;
	snap->nr_pods = 3;
	snap->node.cpu_cores_used = 6.5;
	cr_assert(burst_share_pool(&in, &used, &total));
	/* total 8 - 2 (LSR request; BE requests do not count) = 6, used 6.5 - 1.5 - 2 = 3 */
	cr_assert_float_eq(total, 6.0, 1e-9);
	cr_assert_float_eq(used, 3.0, 1e-9);
	snap->node.has_cpu_usage = false;
	cr_assert_not(burst_share_pool(&in, &used, &total));
	snap->nr_pods = 1;
}

Test(cpu_burst, quota_scales_up_while_throttled_and_down_when_overloaded)
{
	throttle(0, 0.3);
	decide_at(NS);
	cr_assert_eq(quota(CTR0), 60000);
	cr_assert_eq(quota(CTR1), 200000); /* not throttled: held at base */
	/* the pod moves by the containers' delta */
	cr_assert_eq(quota(POD), 250000 + 10000);
	for (int i = 2; i < 12; i++)
		decide_at(i * NS);
	cr_assert_eq(quota(CTR0), 150000); /* ceiling 300 % of 50000 */
	throttle(0, 0);
	decide_at(20 * NS);
	cr_assert_eq(quota(CTR0), 150000); /* idle and not throttled: remain */
	snap->node.cpu_cores_used = 4.0; /* 4 / 8 = the 50 % threshold */
	decide_at(21 * NS);
	cr_assert_eq(quota(CTR0), 120000);
	cr_assert_eq(rep.burst.node, BURST_NODE_OVERLOAD);
	for (int i = 22; i < 40; i++)
		decide_at(i * NS);
	cr_assert_eq(quota(CTR0), 50000); /* never below base */
	cr_assert_eq(quota(POD), 250000);
}

Test(cpu_burst, cooling_holds_a_throttled_container)
{
	throttle(0, 0.5);
	snap->node.cpu_cores_used = 3.7; /* 46 %: at 90 % of the threshold */
	decide_at(NS);
	cr_assert_eq(quota(CTR0), 50000);
	cr_assert_eq(rep.burst.node, BURST_NODE_COOLING);
}

Test(cpu_burst, bucket_consumes_above_the_limit_and_refills_below_60_percent)
{
	struct burst_bucket b = { 0 };

	/* 10 s x (300 - 100) = 2000 %-s; started full here to follow the arithmetic */
	cr_assert(burst_bucket_update(&b, 10, 300, 250, 0, 1.0));
	cr_assert_float_eq(b.tokens, 2000, 1e-9);
	/* 250 % for 10 s: 1500 spent */
	cr_assert(burst_bucket_update(&b, 10, 300, 250, 10 * NS, 1.0));
	cr_assert_float_eq(b.tokens, 500, 1e-9);
	/* 80 %: neither; 100 % spends nothing either */
	cr_assert(burst_bucket_update(&b, 10, 300, 80, 12 * NS, 1.0));
	cr_assert(burst_bucket_update(&b, 10, 300, 100, 13 * NS, 1.0));
	cr_assert_float_eq(b.tokens, 500, 1e-9);
	/* 300 % for 3 s: 600 more than left */
	cr_assert_not(burst_bucket_update(&b, 10, 300, 300, 16 * NS, 1.0));
	cr_assert_float_eq(b.tokens, -100, 1e-9);
	/* 20 % for 5 s: 400 back */
	cr_assert(burst_bucket_update(&b, 10, 300, 20, 21 * NS, 1.0));
	cr_assert_float_eq(b.tokens, 300, 1e-9);
	/* capped at the capacity, and at minus the capacity */
	cr_assert(burst_bucket_update(&b, 10, 300, 0, 40 * NS, 1.0));
	cr_assert_float_eq(b.tokens, 2000, 1e-9);
	cr_assert_not(burst_bucket_update(&b, 10, 300, 500, 59 * NS, 1.0));
	cr_assert_float_eq(b.tokens, -2000, 1e-9);
	/* idle for more than 2 periods: a new bucket at its start fill */
	cr_assert(burst_bucket_update(&b, 10, 300, 300, 80 * NS, 0.25));
	cr_assert_float_eq(b.tokens, 500, 1e-9);
	/* a changed capacity starts over too */
	cr_assert(burst_bucket_update(&b, 20, 300, 300, 81 * NS, 0.25));
	cr_assert_float_eq(b.tokens, 1000, 1e-9);
	/* an empty start refuses at once */
	memset(&b, 0, sizeof(b));
	cr_assert_not(burst_bucket_update(&b, 10, 300, 50, 0, 0));
}

Test(cpu_burst, bucket_start_fill_is_spread_and_stable)
{
	double a = burst_bucket_init_ratio(CTR0), b = burst_bucket_init_ratio(CTR1);

	cr_assert(a >= 0 && a < 0.5 && b >= 0 && b < 0.5, "%g %g", a, b);
	cr_assert_neq(a, b);
	cr_assert_eq(a, burst_bucket_init_ratio(CTR0));
}

Test(cpu_burst, empty_bucket_forces_the_quota_down)
{
	struct snap_stats *st = &snap->pods[0].ctrs[0].st;
	double tokens = 2000 * burst_bucket_init_ratio(CTR0);
	int64_t want = 50000;
	bool went_up = false;

	cfg.burst.cfs_quota_burst_period_s = 10; /* 10 x 200 = 2000 %-s, started at < half */
	throttle(0, 0.5);
	st->has_cpu = true;
	st->cpu_cores = 1.0; /* 200 % of a 500m limit: 100 %-s spent per second */
	for (int i = 1; i <= 20; i++) {
		decide_at((uint64_t)i * NS);
		if (i > 1)
			tokens -= 100;
		/* up while tokens are left, then down although throttled */
		want = burst_scale(want, tokens > 0 ? BURST_OP_UP : BURST_OP_DOWN, 50000, 300);
		went_up = went_up || want > 50000;
		cr_assert_eq(quota(CTR0), want, "round %d", i);
	}
	cr_assert(went_up, "start fill %g: the test wants a round up", tokens);
	cr_assert_eq(want, 50000, "back to base once the bucket is empty");
}

Test(cpu_burst, annotation_merges_over_the_node)
{
	struct burst_config out;
	struct pod_cpu_burst a = { .state = POD_ANN_OK,
				   .policy = POD_BURST_CPU_ONLY,
				   .cpu_burst_pct = POD_BURST_UNSET,
				   .cfs_quota_burst_pct = 200,
				   .cfs_quota_burst_period_s = POD_BURST_UNSET };

	burst_config_merge(&cfg.burst, &a, &out);
	cr_assert_eq(out.policy, POD_BURST_CPU_ONLY);
	cr_assert_eq(out.cpu_burst_pct, 1000);
	cr_assert_eq(out.cfs_quota_burst_pct, 200);
	cr_assert_eq(out.cfs_quota_burst_period_s, -1);
	cr_assert_eq(out.share_pool_threshold_pct, 50);
	a.state = POD_ANN_INVALID;
	burst_config_merge(&cfg.burst, &a, &out);
	cr_assert_eq(out.policy, POD_BURST_AUTO);
	cr_assert_eq(out.cfs_quota_burst_pct, 300);

	/* in decide: the pod's cpuBurstOnly leaves its quota alone */
	pod.cpu_burst = (struct pod_cpu_burst){ .state = POD_ANN_OK,
						.policy = POD_BURST_CPU_ONLY,
						.cpu_burst_pct = 20,
						.cfs_quota_burst_pct = POD_BURST_UNSET,
						.cfs_quota_burst_period_s = POD_BURST_UNSET };
	throttle(0, 0.5);
	decide_at(NS);
	cr_assert_eq(entry(CTR0, PLAN_KNOB_CFS_BURST)->v.burst_us, 10000);
	cr_assert_null(entry(CTR0, PLAN_KNOB_CFS_QUOTA));
	pod.cpu_burst.policy = POD_BURST_NONE;
	decide_at(2 * NS);
	cr_assert_eq(plan.nr, 0);
}

static const char *podlist(const char *ann)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"kind\":\"PodList\",\"items\":[{\"metadata\":{\"name\":\"a\",\"namespace\":"
		 "\"n\",\"uid\":\"0a\",\"annotations\":{\"koordinator.sh/cpuBurst\":%s}},"
		 "\"spec\":{\"containers\":[]},\"status\":{\"phase\":\"Running\"}}]}",
		 ann);
	return buf;
}

static struct pod_cpu_burst parse_ann(const char *ann)
{
	struct pod_list *l = NULL;
	const char *doc = podlist(ann);
	struct pod_cpu_burst b;

	cr_assert_eq(pod_list__parse(doc, strlen(doc), "t", NULL, &l, NULL), 0);
	cr_assert_eq(l->nr_pods, 1);
	b = l->pods[0].cpu_burst;
	pod_list__put(l);
	return b;
}

Test(cpu_burst, annotation_parse)
{
	struct pod_cpu_burst b;

	b = parse_ann("\"{\\\"policy\\\":\\\"cfsQuotaBurstOnly\\\",\\\"cfsQuotaBurstPercent\\\":"
		      "250}\"");
	cr_assert_eq(b.state, POD_ANN_OK);
	cr_assert_eq(b.policy, POD_BURST_CFS_QUOTA_ONLY);
	cr_assert_eq(b.cfs_quota_burst_pct, 250);
	cr_assert_eq(b.cpu_burst_pct, POD_BURST_UNSET);
	cr_assert_eq(b.cfs_quota_burst_period_s, POD_BURST_UNSET);
	/* an unknown policy enables neither burst, as in koordlet */
	b = parse_ann("\"{\\\"policy\\\":\\\"sometimes\\\"}\"");
	cr_assert_eq(b.state, POD_ANN_OK);
	cr_assert_eq(b.policy, POD_BURST_NONE);
	b = parse_ann("\"{\\\"cpuBurstPercent\\\":\\\"lots\\\"}\"");
	cr_assert_eq(b.state, POD_ANN_INVALID);
	b = parse_ann("\"not json\"");
	cr_assert_eq(b.state, POD_ANN_INVALID);
}

Test(cpu_burst, node_config_parse)
{
	struct slo_config c;
	char err[256];

	cr_assert_eq(slo_config_parse("{\"cpuBurstStrategy\":{\"policy\":\"auto\","
				      "\"cpuBurstPercent\":500,\"cfsQuotaBurstPercent\":200,"
				      "\"cfsQuotaBurstPeriodSeconds\":60,"
				      "\"sharePoolThresholdPercent\":40}}",
				      NULL, &c, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(c.burst.policy, POD_BURST_AUTO);
	cr_assert_eq(c.burst.cpu_burst_pct, 500);
	cr_assert_eq(c.burst.cfs_quota_burst_pct, 200);
	cr_assert_eq(c.burst.cfs_quota_burst_period_s, 60);
	cr_assert_eq(c.burst.share_pool_threshold_pct, 40);
	cr_assert_eq(slo_config_parse("{\"cpuBurstStrategy\":{\"policy\":\"always\"}}", NULL, &c,
				      err, sizeof(err)),
		     -EINVAL);
	cr_assert(strstr(err, "nodeSLO.cpuBurstStrategy.policy"), "%s", err);
	cr_assert_eq(slo_config_parse("{\"cpuBurstStrategy\":{\"sharePoolThresholdPercent\":101}}",
				      NULL, &c, err, sizeof(err)),
		     -EINVAL);
}

/* A snapshot at @t s with the node at @node cores, for the window. */
static struct snapshot *at(int t, double node)
{
	struct snapshot *s = snapshot__new();

	s->mono_ns = (uint64_t)t * NS;
	s->interval_s = 1.0;
	s->node.nr_cpus = 8;
	s->node.has_cpu_usage = true;
	s->node.cpu_cores_used = node;
	return s;
}

Test(cpu_burst, share_pool_averages_the_window)
{
	struct strategy_input in = { .cfg = &cfg };
	double used, total, load[] = { 1, 1, 7, 1, 6, 7 };
	struct window *w = NULL;
	struct snapshot *s = NULL;

	cr_assert_eq(window__new(window_capacity(10 * NS, NS), &w), 0);
	in.win = w;
	for (int i = 0; i < 6; i++) {
		snapshot__put(s);
		s = at(i + 1, load[i]);
		cr_assert_eq(window__feed(w, s, NULL), 0);
	}
	in.snap = s;
	/* min(5 x 1 s, 10 s): the last five, (1 + 7 + 1 + 6 + 7) / 5 = 4.4, not the last 7 */
	cr_assert(burst_share_pool(&in, &used, &total));
	cr_assert_float_eq(used, 4.4, 1e-9);
	cr_assert_eq(burst_node_state(used, total, 50), BURST_NODE_OVERLOAD);
	/* one sample is under a third of the window: no figure, unknown */
	window__free(w);
	cr_assert_eq(window__new(window_capacity(10 * NS, NS), &w), 0);
	in.win = w;
	cr_assert_eq(window__feed(w, s, NULL), 0);
	cr_assert_not(burst_share_pool(&in, &used, &total));
	window__free(w);
	snapshot__put(s);
}
