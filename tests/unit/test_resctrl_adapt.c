// SPDX-License-Identifier: GPL-2.0
/* resctrl_adapt on canned snapshot sequences: shrink, floor, regrow, no oscillation, no RDT. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "slo.h"
#include "snapshot.h"
#include "strategy.h"

#define SEC 1000000000ULL
#define MIB (1024.0 * 1024.0)

static struct slo_config cfg;
static struct snapshot *snap;
static struct plan plan;
static void *state;

static void setup(void)
{
	slo_config_init(&cfg);
	cfg.rdt[RDT_CLASS_BE].enable = true;
	cfg.rdt[RDT_CLASS_BE].cat_end_pct = 50;
	cfg.rdt[RDT_CLASS_BE].mba_pct = 80;
	cfg.rdt_adapt.enable = true;
	cfg.rdt_adapt.l3_floor_pct = 20;
	cfg.rdt_adapt.mb_floor_pct = 40;
	cfg.rdt_adapt.mbm_peak_bps = 10000000000ULL; /* 10 GB/s */
	snap = snapshot__new();
	snap->rdt_enabled = true;
	snap->rdt = calloc(2, sizeof(*snap->rdt));
	snap->nr_rdt = 2;
	strcpy(snap->rdt[0].name, "kqos-LS");
	strcpy(snap->rdt[0].class_name, "LS");
	strcpy(snap->rdt[1].name, "kqos-BE");
	strcpy(snap->rdt[1].class_name, "BE");
	for (int g = 0; g < 2; g++) {
		snap->rdt[g].nr_domains = 1;
		snap->rdt[g].has_llc[0] = true;
		snap->rdt[g].has_mbm_total_bps[0] = true;
	}
	plan_init(&plan);
	cr_assert_eq(resctrl_adapt_strategy.init(&cfg, &state), 0);
}

static void teardown(void)
{
	resctrl_adapt_strategy.fini(state);
	plan_fini(&plan);
	snapshot__put(snap);
}

TestSuite(resctrl_adapt, .init = setup, .fini = teardown);

/* One tick at @t s: LS and BE occupancy in MiB, node MBM in GB/s; BE's L3 end and MB back. */
static void tick(unsigned int t, double ls_mib, double be_mib, double mbm_gbps,
		 unsigned int *ret_l3, unsigned int *ret_mb)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg, .is_tick = true };
	struct strategy_report rep = { 0 };
	const struct plan_rdt_group *be;

	snap->mono_ns = in.now_ns = t * SEC;
	snap->rdt[0].llc_bytes[0] = (__u64)(ls_mib * MIB);
	snap->rdt[1].llc_bytes[0] = (__u64)(be_mib * MIB);
	snap->rdt[0].mbm_total_bps[0] = mbm_gbps * 1e9 / 2;
	snap->rdt[1].mbm_total_bps[0] = mbm_gbps * 1e9 / 2;
	plan_reset(&plan);
	plan.strategy = "resctrl_qos";
	cr_assert_eq(resctrl_qos_strategy.decide(NULL, &in, &plan, &rep), 0);
	plan.strategy = "resctrl_adapt";
	cr_assert_eq(resctrl_adapt_strategy.decide(state, &in, &plan, &rep), 0);
	be = plan_rdt_find(&plan.rdt, "BE");
	cr_assert_not_null(be);
	*ret_l3 = be->l3[0].end_pct;
	*ret_mb = be->mb[0].pct;
}

Test(resctrl_adapt, off_by_default_and_needs_the_be_class)
{
	struct slo_config d;

	slo_config_init(&d);
	cr_assert_not(resctrl_adapt_strategy.enabled(&d));
	d.rdt_adapt.enable = true;
	cr_assert_not(resctrl_adapt_strategy.enabled(&d), "nothing to adapt without kqos-BE");
	cr_assert(resctrl_adapt_strategy.enabled(&cfg));
}

Test(resctrl_adapt, shrinks_in_steps_down_to_the_floor)
{
	unsigned int l3, mb;

	tick(0, 20, 4, 1, &l3, &mb);
	cr_assert_eq(l3, 50, "starts at the configured maximum");
	cr_assert_eq(mb, 80);
	/* LS occupancy falls by 25 % while BE's grows: one L3 step, MB untouched */
	tick(1, 15, 6, 1, &l3, &mb);
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 80);
	tick(2, 11, 8, 1, &l3, &mb);
	cr_assert_eq(l3, 30);
	tick(3, 8, 10, 1, &l3, &mb);
	cr_assert_eq(l3, 20);
	tick(4, 5, 12, 1, &l3, &mb);
	cr_assert_eq(l3, 20, "never below the floor");
	/* the node's bandwidth at 95 % of the peak: MB steps down, to its floor */
	tick(5, 5, 12, 9.5, &l3, &mb);
	cr_assert_eq(mb, 70);
	for (unsigned int t = 6; t < 12; t++)
		tick(t, 5, 12, 9.5, &l3, &mb);
	cr_assert_eq(mb, 40);
	cr_assert_eq(l3, 20, "no LLC signal: L3 stays");
}

Test(resctrl_adapt, regrows_one_step_per_quiet_window)
{
	unsigned int l3, mb;

	tick(0, 20, 4, 9.5, &l3, &mb);
	tick(1, 10, 8, 9.5, &l3, &mb);
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 60);
	/* quiet: nothing before 10 s after the last shrink */
	tick(5, 10, 8, 1, &l3, &mb);
	cr_assert_eq(l3, 40);
	tick(10, 10, 8, 1, &l3, &mb);
	cr_assert_eq(l3, 40, "9 s of quiet is not a window");
	tick(11, 10, 8, 1, &l3, &mb);
	cr_assert_eq(l3, 50);
	cr_assert_eq(mb, 70);
	tick(12, 10, 8, 1, &l3, &mb);
	cr_assert_eq(mb, 70, "one step per window");
	tick(21, 10, 8, 1, &l3, &mb);
	cr_assert_eq(mb, 80);
	cr_assert_eq(l3, 50, "bounded by the configured maximum");
	tick(40, 10, 8, 1, &l3, &mb);
	cr_assert_eq(l3, 50);
	cr_assert_eq(mb, 80);
}

Test(resctrl_adapt, steady_load_does_not_oscillate)
{
	unsigned int l3, mb, changes = 0, last_l3 = 0;

	/* constant occupancy and a bandwidth just under 90 %: no signal, no move, for a minute */
	for (unsigned int t = 0; t < 60; t++) {
		tick(t, 12 + (t % 2) * 0.5, 6, 8.9, &l3, &mb);
		changes += t && l3 != last_l3;
		last_l3 = l3;
	}
	cr_assert_eq(changes, 0);
	cr_assert_eq(l3, 50);
	cr_assert_eq(mb, 80);
	/* interference every 5 s keeps it down: the quiet window never completes */
	for (unsigned int t = 60; t < 120; t++)
		tick(t, t % 5 ? 12 : 9, t % 5 ? 6 : 7, 1, &l3, &mb);
	cr_assert_eq(l3, 20);
}

Test(resctrl_adapt, nothing_without_rdt)
{
	struct strategy_input in = { .snap = snap, .cfg = &cfg, .is_tick = true };
	struct strategy_report rep = { 0 };

	snap->rdt_enabled = false;
	plan.strategy = "resctrl_qos";
	cr_assert_eq(resctrl_qos_strategy.decide(NULL, &in, &plan, &rep), 0);
	cr_assert_eq(resctrl_adapt_strategy.decide(state, &in, &plan, &rep), 0);
	cr_assert_eq(plan.rdt.nr_groups, 0, "nothing planned, nothing written");
}

Test(resctrl_adapt, ls_mpki_over_its_quiet_baseline_shrinks_l3)
{
	static struct pod ls = {
		.uid = "ls-1", .name = "ls-1", .qos = POD_QOS_LS, .is_active = true
	};
	unsigned int l3, mb;

	snap->pods = calloc(1, sizeof(*snap->pods));
	snap->nr_pods = 1;
	snap->pods[0].pod = &ls;
	snap->pods[0].st.has_cpi = snap->pods[0].st.has_mpki = true;
	snap->pods[0].st.cpi = 1.0;
	snap->pods[0].st.llc_mpki = 2.0;
	/* BE quiet: the baseline is learned, whatever the occupancy does */
	snap->classes[POD_QOS_BE].cpu_cores = 0;
	for (unsigned int t = 0; t < 5; t++)
		tick(t, 10, 5, 1, &l3, &mb);
	cr_assert_eq(l3, 50);
	/* BE busy and LS MPKI 50 % up (CPI flat): one L3 step, MB untouched */
	snap->classes[POD_QOS_BE].cpu_cores = 1.5;
	snap->pods[0].st.llc_mpki = 3.0;
	tick(5, 10, 5, 1, &l3, &mb);
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 80);
	/* back to the baseline: no further step */
	snap->pods[0].st.llc_mpki = 2.0;
	tick(6, 10, 5, 1, &l3, &mb);
	cr_assert_eq(l3, 40);
	snap->pods[0].pod = NULL; /* static pod: not the snapshot's to free */
}

/* --- LS latency events between ticks (the latency guard's LS_WAIT) ------------------------ */

#define LS_CG 100
#define BE_CG 200
#define MS    1000000ULL

static struct pod ev_ls = { .uid = "ls",
			    .qos = POD_QOS_LS,
			    .k8s_qos = POD_K8S_QOS_BURSTABLE,
			    .is_active = true };
static struct pod ev_be = { .uid = "be",
			    .qos = POD_QOS_BE,
			    .k8s_qos = POD_K8S_QOS_BESTEFFORT,
			    .is_active = true };

/* An LS pod and a BE pod the guard can blame, and a quiet tick at 0 s: 50 % and 80 %. */
static void events_setup(void)
{
	unsigned int l3, mb;

	setup();
	snap->pods = calloc(2, sizeof(*snap->pods));
	snap->nr_pods = 2;
	snap->pods[0] = (struct snap_pod){ .pod = &ev_ls, .cgid = LS_CG };
	snap->pods[1] = (struct snap_pod){ .pod = &ev_be, .cgid = BE_CG };
	tick(0, 20, 4, 1, &l3, &mb);
	cr_assert_eq(l3, 50);
	cr_assert_eq(mb, 80);
}

static void events_teardown(void)
{
	snap->pods[0].pod = snap->pods[1].pod = NULL; /* static pods: not the snapshot's */
	teardown();
}

/*
 * One LS wait at @t_ms behind @prev (a cgroup id) between ticks, decided on the last tick's
 * plan as the enforcer does; BE's L3 end and MB back. Returns whether it asks for a write.
 */
static bool event(unsigned int t_ms, uint64_t prev, unsigned int *ret_l3, unsigned int *ret_mb)
{
	struct wait_event w = {
		.cgid = LS_CG, .wait_ns = 5 * MS, .ts_ns = t_ms * MS, .prev_cgid = prev, .cpu = 1
	};
	struct strategy_input in = {
		.snap = snap, .cfg = &cfg, .now_ns = t_ms * MS, .waits = &w, .nr_waits = 1
	};
	struct strategy_report rep = { 0 };
	const struct plan_rdt_group *be;

	cr_assert(resctrl_adapt_strategy.reacts, "asked between ticks");
	plan.strategy = "resctrl_adapt";
	cr_assert_eq(resctrl_adapt_strategy.decide(state, &in, &plan, &rep), 0);
	be = plan_rdt_find(&plan.rdt, "BE");
	cr_assert_not_null(be);
	*ret_l3 = be->l3[0].end_pct;
	*ret_mb = be->mb[0].pct;
	return rep.rdt_react;
}

Test(resctrl_adapt_events, one_blamed_wait_shrinks_one_step_at_once, .init = events_setup,
     .fini = events_teardown)
{
	const struct plan_rdt_group *be;
	unsigned int l3, mb;

	cr_assert_eq(cfg.rdt_adapt.event_hold_ns, 2 * SEC, "default hold");
	cr_assert(event(300, BE_CG, &l3, &mb), "the resctrl section changed: apply it now");
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 70);
	be = plan_rdt_find(&plan.rdt, "BE");
	cr_assert(strstr(be->why, "LS latency event"), "%s", be->why);
	/* the next tick keeps the level: the event restarted the quiet window */
	tick(1, 20, 4, 1, &l3, &mb);
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 70);
}

Test(resctrl_adapt_events, waits_not_blamed_on_be_change_nothing, .init = events_setup,
     .fini = events_teardown)
{
	unsigned int l3, mb;

	/* behind LS itself, behind the idle task, behind a cgroup that is no pod */
	cr_assert_not(event(100, LS_CG, &l3, &mb));
	cr_assert_not(event(200, 0, &l3, &mb));
	cr_assert_not(event(300, 999, &l3, &mb));
	cr_assert_eq(l3, 50);
	cr_assert_eq(mb, 80);
}

Test(resctrl_adapt_events, repeated_events_within_the_hold_do_not_over_shrink, .init = events_setup,
     .fini = events_teardown)
{
	unsigned int l3, mb;

	cr_assert(event(300, BE_CG, &l3, &mb));
	/* a burst of waits: held until 2 s after the shrink */
	for (unsigned int t = 310; t < 2300; t += 10)
		cr_assert_not(event(t, BE_CG, &l3, &mb), "at %u ms", t);
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 70);
	cr_assert(event(2300, BE_CG, &l3, &mb), "the hold is over");
	cr_assert_eq(l3, 30);
	cr_assert_eq(mb, 60);
}

Test(resctrl_adapt_events, a_tick_shrink_holds_events_too, .init = events_setup,
     .fini = events_teardown)
{
	unsigned int l3, mb;

	/* the tick's LLC signal at 1 s takes a step; a wait 0.5 s later takes no second one */
	tick(1, 15, 6, 1, &l3, &mb);
	cr_assert_eq(l3, 40);
	cr_assert_not(event(1500, BE_CG, &l3, &mb));
	cr_assert_eq(l3, 40);
	cr_assert_eq(mb, 80);
	cr_assert(event(3000, BE_CG, &l3, &mb));
	cr_assert_eq(l3, 30);
	cr_assert_eq(mb, 70);
}

Test(resctrl_adapt_events, floor_respected, .init = events_setup, .fini = events_teardown)
{
	unsigned int l3, mb, writes = 0;

	/* one blamed wait every hold: L3 50 -> 20 in 3 steps, MB 80 -> 40 in 4, then nothing */
	for (unsigned int i = 1; i <= 8; i++)
		writes += event(i * 2100, BE_CG, &l3, &mb);
	cr_assert_eq(l3, 20, "l3FloorPercent");
	cr_assert_eq(mb, 40, "mbFloorPercent");
	cr_assert_eq(writes, 4, "no write once both are at their floor");
}

Test(resctrl_adapt_events, regrows_after_quiet_windows, .init = events_setup,
     .fini = events_teardown)
{
	unsigned int l3, mb;

	cr_assert(event(500, BE_CG, &l3, &mb));
	/* quiet ticks: nothing until 10 s (quietPeriod) after the event, then one step a window */
	for (unsigned int t = 1; t <= 10; t++) {
		tick(t, 20, 4, 1, &l3, &mb);
		cr_assert_eq(l3, 40, "at %u s", t);
	}
	tick(11, 20, 4, 1, &l3, &mb);
	cr_assert_eq(l3, 50);
	cr_assert_eq(mb, 80);
	/* at the floor, an event still restarts the quiet window: hysteresis, no oscillation */
	cfg.rdt_adapt.step_pct = 50;
	cr_assert(event(12000, BE_CG, &l3, &mb));
	cr_assert_eq(l3, 20);
	cr_assert_not(event(20000, BE_CG, &l3, &mb), "at the floor");
	tick(29, 20, 4, 1, &l3, &mb);
	cr_assert_eq(l3, 20, "9 s after the last event: still down");
	tick(30, 20, 4, 1, &l3, &mb);
	cr_assert_eq(l3, 50, "grown back one (50 %) step after a full quiet window");
}

Test(resctrl_adapt_events, nothing_without_rdt_or_with_the_hold_off, .init = events_setup,
     .fini = events_teardown)
{
	struct wait_event w = { .cgid = LS_CG, .wait_ns = 5 * MS, .prev_cgid = BE_CG };
	struct strategy_input in = {
		.snap = snap, .cfg = &cfg, .now_ns = 500 * MS, .waits = &w, .nr_waits = 1
	};
	struct strategy_report rep = { 0 };
	unsigned int l3, mb;

	cfg.rdt_adapt.event_hold_ns = 0;
	cr_assert_not(event(500, BE_CG, &l3, &mb), "eventHold 0: ticks only");
	cr_assert_eq(l3, 50);
	cfg.rdt_adapt.event_hold_ns = 2 * SEC;
	/* no resctrl: resctrl_qos planned no group, so the event has nothing to edit */
	snap->rdt_enabled = false;
	plan_reset(&plan);
	cr_assert_eq(resctrl_adapt_strategy.decide(state, &in, &plan, &rep), 0);
	cr_assert_not(rep.rdt_react);
	cr_assert_eq(plan.rdt.nr_groups, 0);
}
