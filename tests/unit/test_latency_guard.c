// SPDX-License-Identifier: GPL-2.0
/* The latency guard's state machine on canned snapshots and LS wait events. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "slo.h"
#include "snapshot.h"
#include "strategy.h"

#define MS	  1000000ULL
#define LS_CG	  100
#define LS_CTR_CG 101
#define BE_CG	  200
#define BE_DIR	  "/kubepods/besteffort"
#define BE_POD	  "/kubepods/besteffort/podbe"

static struct pod ls, be;
static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;
static struct strategy_report rep;
static void *state;
static uint64_t be_cgids[] = { BE_CG };

static void setup(void)
{
	struct snap_container *c;

	slo_config_init(&cfg);
	cfg.guard.enable = true;
	ls = (struct pod){
		.uid = "ls", .qos = POD_QOS_LS, .k8s_qos = POD_K8S_QOS_BURSTABLE, .is_active = true
	};
	be = (struct pod){
		.uid = "be", .qos = POD_QOS_BE, .k8s_qos = POD_K8S_QOS_BESTEFFORT, .is_active = true
	};
	snap = snapshot__new();
	snap->node.nr_cpus = 4;
	snprintf(snap->node.besteffort, sizeof(snap->node.besteffort), "%s", BE_DIR);
	snap->nr_pods = 2;
	snap->pods = calloc(2, sizeof(*snap->pods));
	snap->pods[0] = (struct snap_pod){ .pod = &ls, .cgid = LS_CG };
	snap->pods[0].cgroup = strdup("/kubepods/burstable/podls");
	c = calloc(1, sizeof(*c));
	c->cgid = LS_CTR_CG;
	snap->pods[0].ctrs = c;
	snap->pods[0].nr_ctrs = 1;
	snap->pods[1] = (struct snap_pod){ .pod = &be, .cgid = BE_CG };
	snap->pods[1].cgroup = strdup(BE_POD);
	snap->pods[1].cgids = malloc(sizeof(be_cgids));
	memcpy(snap->pods[1].cgids, be_cgids, sizeof(be_cgids));
	snap->pods[1].nr_cgids = 1;
	snap->classes[POD_QOS_BE].cpu_cores = 2.0;
	plan_init(&plan);
	cr_assert_eq(latency_guard_strategy.init(&cfg, &state), 0);
}

static void teardown(void)
{
	latency_guard_strategy.fini(state);
	plan_fini(&plan);
	snapshot__put(snap);
}

TestSuite(latency_guard, .init = setup, .fini = teardown);

static int decide(uint64_t now, bool tick, const struct wait_event *w, size_t n)
{
	struct strategy_input in = {
		.snap = snap, .cfg = &cfg, .now_ns = now, .is_tick = tick, .waits = w, .nr_waits = n
	};

	plan_reset(&plan);
	plan.strategy = "latency_guard";
	plan.tighten = true;
	rep = (struct strategy_report){ 0 };
	return latency_guard_strategy.decide(state, &in, &plan, &rep);
}

/* An LS wait of @us on @cpu behind @prev. */
static int wait_behind(uint64_t now, uint64_t prev, unsigned int cpu, uint64_t us)
{
	struct wait_event w = {
		.cgid = LS_CG, .wait_ns = us * 1000, .ts_ns = now, .prev_cgid = prev, .cpu = cpu
	};

	return decide(now, false, &w, 1);
}

static const struct plan_entry *entry(const char *cg, enum plan_knob k)
{
	return plan_find(&plan, cg, k);
}

/* The LS pod's interval p99 as this tick's snapshot shows it. */
static void ls_p99(uint64_t us)
{
	snap->pods[0].st.has_cpu = true;
	snap->pods[0].st.rq_waits = 100;
	snap->pods[0].st.rq_p99_ns = us * 1000;
}

Test(latency_guard, a_wait_behind_be_escalates_at_once)
{
	cr_assert_eq(wait_behind(10 * MS, BE_CG, 1, 3000), 0);
	cr_assert_eq(rep.guard.level, 1);
	cr_assert_eq(rep.guard.nr_new, 1);
	cr_assert_eq(rep.guard.new_moves[0].move, GUARD_ESCALATE);
	cr_assert_not_null(strstr(rep.guard.new_moves[0].why, "behind BE"));
	cr_assert(entry(BE_DIR, PLAN_KNOB_IDLE)->v.idle, "the first step: BE SCHED_IDLE");
	cr_assert(rep.guard.steps & (1U << GUARD_STEP_IDLE));
	cr_assert_gt(rep.guard.next_ns, 10 * MS, "a relax deadline is set");
}

Test(latency_guard, a_wait_behind_ls_or_the_system_is_not_bes_doing)
{
	cr_assert_eq(wait_behind(10 * MS, LS_CTR_CG, 1, 3000), 0);
	cr_assert_eq(rep.guard.level, 0);
	cr_assert_eq(wait_behind(11 * MS, 0, 1, 3000), 0, "idle before: no blame");
	cr_assert_eq(wait_behind(12 * MS, 999, 1, 3000), 0, "an unknown cgroup: no blame");
	cr_assert_eq(rep.guard.level, 0);
	cr_assert_eq(plan.nr, 0);
}

Test(latency_guard, the_ladder_waits_for_each_step_to_settle)
{
	const struct plan_entry *cs, *q;
	struct cpumask want;

	wait_behind(10 * MS, BE_CG, 1, 3000);
	wait_behind(50 * MS, BE_CG, 1, 3000);
	cr_assert_eq(rep.guard.level, 1, "settle is 100 ms: no second step after 40 ms");
	wait_behind(120 * MS, BE_CG, 1, 3000);
	cr_assert_eq(rep.guard.level, 2);
	cs = entry(BE_DIR, PLAN_KNOB_CPUSET);
	cr_assert_not_null(cs);
	cpulist_parse("0,2-3", &want);
	cr_assert(cpumask_equal(&cs->v.cpus, &want), "BE off CPU 1, where LS waited");
	cr_assert(cpumask_equal(&entry(BE_POD, PLAN_KNOB_CPUSET)->v.cpus, &want),
		  "the BE pods below get the same set (v1 refuses a parent narrower than a child)");
	cr_assert(entry(BE_DIR, PLAN_KNOB_IDLE)->v.idle, "earlier steps stay");
	wait_behind(230 * MS, BE_CG, 2, 3000);
	cr_assert_eq(rep.guard.level, 3);
	q = entry(BE_DIR, PLAN_KNOB_CFS_QUOTA);
	cr_assert_eq(q->v.quota_us, 20000, "20 %% of one CPU");
	wait_behind(340 * MS, BE_CG, 3, 3000);
	cr_assert_eq(rep.guard.level, 3, "nothing left to try");
}

Test(latency_guard, the_cpuset_step_keeps_one_cpu_for_be)
{
	struct cpumask want;

	cfg.guard.ladder[0] = GUARD_STEP_CPUSET;
	cfg.guard.nr_ladder = 1;
	for (unsigned int cpu = 0; cpu < 4; cpu++)
		wait_behind((10 + cpu) * MS, BE_CG, cpu, 3000);
	cpulist_parse("3", &want);
	cr_assert(cpumask_equal(&entry(BE_DIR, PLAN_KNOB_CPUSET)->v.cpus, &want));
}

Test(latency_guard, a_step_that_made_waits_worse_is_backed_out_and_skipped)
{
	cfg.guard.ladder[0] = GUARD_STEP_QUOTA;
	cfg.guard.ladder[1] = GUARD_STEP_IDLE;
	cfg.guard.nr_ladder = 2;
	ls_p99(2000); /* 2x the 1 ms LS target */
	decide(1000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 1, "a tick over target with BE busy escalates");
	cr_assert_not_null(entry(BE_DIR, PLAN_KNOB_CFS_QUOTA));
	ls_p99(6000); /* the quota made it 3x worse */
	decide(2000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
	cr_assert_eq(rep.guard.new_moves[0].move, GUARD_BACK_OUT);
	cr_assert_not_null(strstr(rep.guard.new_moves[0].why, "quota made LS waits worse"));
	cr_assert_null(entry(BE_DIR, PLAN_KNOB_CFS_QUOTA));
	wait_behind(2200 * MS, BE_CG, 0, 3000);
	cr_assert_eq(rep.guard.level, 2, "the banned quota step is passed over");
	cr_assert(entry(BE_DIR, PLAN_KNOB_IDLE)->v.idle);
	cr_assert_null(entry(BE_DIR, PLAN_KNOB_CFS_QUOTA));
	cr_assert_eq(rep.guard.moves[GUARD_BACK_OUT], 1);
}

Test(latency_guard, a_helpful_step_stays)
{
	ls_p99(2000);
	decide(1000 * MS, true, NULL, 0);
	ls_p99(800);
	decide(2000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 1);
	cr_assert_eq(rep.guard.moves[GUARD_BACK_OUT], 0);
}

Test(latency_guard, an_lS_tail_with_be_idle_is_left_alone)
{
	snap->classes[POD_QOS_BE].cpu_cores = 0;
	ls_p99(5000);
	decide(1000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
}

Test(latency_guard, relaxes_after_a_quiet_window_and_backs_off_instead_of_oscillating)
{
	wait_behind(10 * MS, BE_CG, 1, 3000);
	decide(1500 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 1, "quiet for 1.49 s of 2 s");
	decide(2010 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
	cr_assert_eq(rep.guard.new_moves[0].move, GUARD_RELAX);
	cr_assert_eq(plan.nr, 0, "back at rest: nothing planned, the actuator restores");
	cr_assert_eq(rep.guard.next_ns, 0);
	/* BE hurts again right away: the next quiet window is twice as long */
	wait_behind(2050 * MS, BE_CG, 1, 3000);
	cr_assert_eq(rep.guard.level, 1);
	decide(4100 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 1, "2 s of quiet is no longer enough");
	decide(6060 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
	cr_assert_eq(rep.guard.moves[GUARD_RELAX], 2);
	cr_assert_eq(rep.guard.moves[GUARD_ESCALATE], 2);
}

Test(latency_guard, relaxes_one_step_per_window)
{
	wait_behind(10 * MS, BE_CG, 1, 3000);
	wait_behind(200 * MS, BE_CG, 1, 3000);
	cr_assert_eq(rep.guard.level, 2);
	decide(2300 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 1);
	decide(2400 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 1, "the next step back needs its own quiet window");
	decide(4400 * MS, false, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
}

Test(latency_guard, pmu_harm_without_waiting_escalates)
{
	snap->pods[0].st.has_cpu = true;
	snap->pods[0].st.cpu_cores = 1.0;
	snap->pods[0].st.has_cpi = true;
	snap->pods[0].st.cpi = 1.0;
	snap->classes[POD_QOS_BE].cpu_cores = 0; /* BE quiet: the baseline */
	decide(1000 * MS, true, NULL, 0);
	decide(2000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
	snap->classes[POD_QOS_BE].cpu_cores = 2.0;
	snap->pods[0].st.cpi = 1.1; /* +10 %: under the 20 % default */
	decide(3000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 0);
	snap->pods[0].st.cpi = 1.3;
	decide(4000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 1);
	cr_assert_not_null(strstr(rep.guard.new_moves[0].why, "CPI"));
}

Test(latency_guard, no_pmu_no_pmu_harm)
{
	snap->pods[0].st.has_cpu = true;
	snap->pods[0].st.cpu_cores = 1.0;
	for (int i = 1; i <= 4; i++) {
		snap->classes[POD_QOS_BE].cpu_cores = i % 2 ? 0 : 2.0;
		decide(i * 1000 * MS, true, NULL, 0);
	}
	cr_assert_eq(rep.guard.level, 0);
}

Test(latency_guard, watches_ls_cgroups_with_their_targets)
{
	struct wait_watch w[8];
	size_t n;

	ls.wait_target_ns = 0;
	n = latency_guard_watches(snap, &cfg, w, 8);
	cr_assert_eq(n, 2, "the LS pod and its container; BE is not watched");
	cr_assert(w[0].cgid == LS_CG && w[0].target_ns == cfg.guard.target_ls_ns);
	cr_assert(w[1].cgid == LS_CTR_CG);
	ls.wait_target_ns = 250000; /* kqos.sh/wait-target */
	n = latency_guard_watches(snap, &cfg, w, 8);
	cr_assert_eq(w[0].target_ns, 250000);
	ls.qos = POD_QOS_LSE;
	ls.wait_target_ns = 0;
	latency_guard_watches(snap, &cfg, w, 8);
	cr_assert_eq(w[0].target_ns, cfg.guard.target_lse_ns);
	cfg.guard.enable = false;
	cr_assert_eq(latency_guard_watches(snap, &cfg, w, 8), 0);
}

Test(latency_guard, reserves_every_knob_a_reaction_may_write)
{
	struct plan reserve;

	plan_init(&reserve);
	rep = (struct strategy_report){ .reserve = &reserve };
	plan.strategy = "latency_guard";
	cr_assert_eq(latency_guard_strategy.decide(
			     state,
			     &(struct strategy_input){ .snap = snap, .cfg = &cfg, .is_tick = true },
			     &plan, &rep),
		     0);
	cr_assert_not_null(plan_find(&reserve, BE_DIR, PLAN_KNOB_IDLE));
	cr_assert_not_null(plan_find(&reserve, BE_DIR, PLAN_KNOB_CPUSET));
	cr_assert_not_null(plan_find(&reserve, BE_POD, PLAN_KNOB_CPUSET));
	cr_assert_not_null(plan_find(&reserve, BE_DIR, PLAN_KNOB_CFS_QUOTA));
	cr_assert_eq(plan.nr, 0, "reserving changes nothing");
	plan_fini(&reserve);
}

/* In a container whose cpuset root holds CPUs 0-1, BE is never given more (EACCES otherwise). */
Test(latency_guard, the_cpuset_step_stays_inside_the_cpuset_root)
{
	struct cpumask want;

	cfg.guard.ladder[0] = GUARD_STEP_CPUSET;
	cfg.guard.nr_ladder = 1;
	snap->node.has_root_cpus = true;
	cpulist_parse("0-1", &snap->node.root_cpus);
	wait_behind(10 * MS, BE_CG, 1, 3000);
	cpulist_parse("0", &want);
	cr_assert(cpumask_equal(&entry(BE_DIR, PLAN_KNOB_CPUSET)->v.cpus, &want));
}

/* A Mid+LS pod lives in besteffort but is LS to protect: watched, and never blamed. */
Test(latency_guard, a_mid_ls_pod_is_protected_not_blamed)
{
	struct wait_watch w[8];
	size_t n;
	bool watched = false;

	be.prio_raw = POD_PRIO_MID;
	be.qos_raw = POD_QOS_NONE;
	n = latency_guard_watches(snap, &cfg, w, 8);
	for (size_t i = 0; i < n; i++)
		watched |= w[i].cgid == BE_CG;
	cr_assert(watched, "the Mid+LS pod's cgroup is watched");
	wait_behind(10 * MS, BE_CG, 1, 3000);
	cr_assert_eq(rep.guard.level, 0, "a wait behind Mid+LS is not BE's doing");
	cfg.mid_ls_protected = false;
	wait_behind(20 * MS, BE_CG, 1, 3000);
	cr_assert_eq(rep.guard.level, 1, "unprotected, it is BE like koordinator says");
}

/* A burst that grew after the step is no proof against the step: no back-out, the next step. */
Test(latency_guard, a_growing_burst_is_not_blamed_on_the_step)
{
	cfg.guard.ladder[0] = GUARD_STEP_QUOTA;
	cfg.guard.ladder[1] = GUARD_STEP_IDLE;
	cfg.guard.nr_ladder = 2;
	snap->classes[POD_QOS_BE].cpu_cores = 0.5;
	ls_p99(2000);
	decide(1000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.level, 1);
	snap->classes[POD_QOS_BE].cpu_cores = 2.0; /* BE four times as busy */
	ls_p99(6000);
	decide(2000 * MS, true, NULL, 0);
	cr_assert_eq(rep.guard.moves[GUARD_BACK_OUT], 0);
	cr_assert_eq(rep.guard.level, 2, "still a breach: the next step");
}
