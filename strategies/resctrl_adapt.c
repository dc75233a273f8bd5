// SPDX-License-Identifier: GPL-2.0
/*
 * resctrl_adapt (kqos, off by default): Heracles' cache and bandwidth loop on BE. It moves
 * kqos-BE's L3 range end and MB percent between a floor and what beClass.resctrlQOS
 * configures: one step down on interference, one step back per quiet window. L3 signals: the
 * LS groups' LLC occupancy falling by llcDropPercent while BE's grows, or LS CPI or LLC MPKI
 * above its baseline learned while BE was quiet (where the PMU exists). Bandwidth signal: the
 * node's MBM total at 90 % of mbmPeakBytesPerSecond. It edits the BE group resctrl_qos planned
 * this tick, so it runs after it; without resctrl nothing is planned and nothing changes.
 *
 * Between ticks it also reacts to the latency guard's LS_WAIT events: a wait the guard blames
 * on BE is interference now, and shrinks L3 and MB one step at once on the last tick's plan
 * (the enforcer then applies the resctrl section), at most once per eventHold since the last
 * shrink of either kind, within the same floors; it restarts the quiet window like any other
 * signal, so growing back waits as long.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strategy.h"

struct adapt {
	bool has_level; /* l3_end, mb set from a first plan */
	unsigned int l3_end, mb; /* in force */
	uint64_t last_change_ns; /* last shrink or grow: a grow waits a quiet window after it */
	uint64_t last_shrink_ns; /* an event shrinks again only eventHold after it */
	bool has_shrunk;
	bool has_prev;
	double prev_ls, prev_be; /* LLC occupancy bytes at the previous tick */
	uint64_t shrinks, grows; /* since start */
	uint64_t event_shrinks, events_held; /* since start: LS latency events acted on, held */
	bool has_base_cpi, has_base_mpki;
	double base_cpi, base_mpki; /* LS's, learned while BE is quiet */
};

#define BE_QUIET_CORES 0.1 /* BE using less than this: learn LS's PMU baseline */
#define BASE_ALPHA     0.2

static bool enabled(const struct slo_config *cfg)
{
	return cfg->rdt_adapt.enable && cfg->rdt[RDT_CLASS_BE].enable;
}

static int init(const struct slo_config *cfg, void **ret)
{
	(void)cfg;
	*ret = calloc(1, sizeof(struct adapt));
	return *ret ? 0 : -ENOMEM;
}

static void fini(void *state)
{
	free(state);
}

/* Occupancy of the class groups (LS: kqos-LSR and kqos-LS; BE: kqos-BE); false without one. */
static bool occupancy(const struct snapshot *s, bool is_be, double *ret)
{
	bool any = false;

	*ret = 0;
	for (size_t i = 0; i < s->nr_rdt; i++) {
		const struct snap_rdt_group *g = &s->rdt[i];
		bool be = !strcmp(g->class_name, "BE");
		bool ls = !strcmp(g->class_name, "LS") || !strcmp(g->class_name, "LSR");

		if ((is_be && !be) || (!is_be && !ls))
			continue;
		for (unsigned int d = 0; d < g->nr_domains && d < SNAP_RDT_DOMAINS; d++) {
			if (!g->has_llc[d])
				continue;
			*ret += (double)g->llc_bytes[d];
			any = true;
		}
	}
	return any;
}

/* MBM total rate over every group kqos monitors: the whole node when every task is placed. */
static double node_mbm(const struct snapshot *s)
{
	double bps = 0;

	/* a monitoring group's bytes are already in its control group's */
	for (size_t i = 0; i < s->nr_rdt; i++)
		for (unsigned int d = 0;
		     !s->rdt[i].is_mon && d < s->rdt[i].nr_domains && d < SNAP_RDT_DOMAINS; d++)
			if (s->rdt[i].has_mbm_total_bps[d])
				bps += s->rdt[i].mbm_total_bps[d];
	return bps;
}

static bool llc_signal(struct adapt *a, const struct snapshot *s, unsigned int drop_pct)
{
	double ls, be;
	bool hit = false;

	if (!occupancy(s, false, &ls) || !occupancy(s, true, &be)) {
		a->has_prev = false;
		return false;
	}
	if (a->has_prev)
		hit = ls < a->prev_ls * (100 - drop_pct) / 100.0 && be > a->prev_be;
	a->prev_ls = ls;
	a->prev_be = be;
	a->has_prev = true;
	return hit;
}

/* LS pods' mean CPI and LLC MPKI this tick, where the PMU counted them. */
static bool ls_pmu(const struct snapshot *s, double *cpi, double *mpki, bool *has_mpki)
{
	unsigned int n = 0, nm = 0;

	*cpi = *mpki = 0;
	for (size_t i = 0; i < s->nr_pods; i++) {
		const struct snap_pod *p = &s->pods[i];
		enum pod_qos q = p->pod ? p->pod->qos : POD_QOS_NONE;

		if (q != POD_QOS_LSE && q != POD_QOS_LSR && q != POD_QOS_LS)
			continue;
		if (p->st.has_cpi) {
			*cpi += p->st.cpi;
			n++;
		}
		if (p->st.has_mpki) {
			*mpki += p->st.llc_mpki;
			nm++;
		}
	}
	*cpi = n ? *cpi / n : 0;
	*mpki = nm ? *mpki / nm : 0;
	*has_mpki = nm > 0;
	return n > 0;
}

static void learn(double *base, bool *has, double v)
{
	*base = *has ? (1 - BASE_ALPHA) * *base + BASE_ALPHA * v : v;
	*has = true;
}

/* LS instructions slower or missing the LLC more than while BE was quiet: cache interference. */
static bool pmu_signal(struct adapt *a, const struct snapshot *s, const struct rdt_adapt_config *c)
{
	double cpi, mpki;
	bool has_mpki;

	if (!ls_pmu(s, &cpi, &mpki, &has_mpki))
		return false;
	if (s->classes[POD_QOS_BE].cpu_cores < BE_QUIET_CORES) {
		learn(&a->base_cpi, &a->has_base_cpi, cpi);
		if (has_mpki)
			learn(&a->base_mpki, &a->has_base_mpki, mpki);
		return false;
	}
	if (c->cpi_rise_pct && a->has_base_cpi && cpi > a->base_cpi * (1 + c->cpi_rise_pct / 100.0))
		return true;
	return c->mpki_rise_pct && has_mpki && a->has_base_mpki &&
	       mpki > a->base_mpki * (1 + c->mpki_rise_pct / 100.0);
}

static unsigned int down(unsigned int v, unsigned int step, unsigned int floor)
{
	return v > floor + step ? v - step : floor;
}

static unsigned int up(unsigned int v, unsigned int step, unsigned int max)
{
	return v + step < max ? v + step : max;
}

/* BE's floors: the configured ones, within what beClass allows. */
static void floors(const struct rdt_adapt_config *c, const struct rdt_class_config *be,
		   unsigned int *ret_l3, unsigned int *ret_mb)
{
	/* the range must keep a way above its start */
	*ret_l3 = c->l3_floor_pct > be->cat_start_pct ? c->l3_floor_pct : be->cat_start_pct + 1;
	if (*ret_l3 > be->cat_end_pct)
		*ret_l3 = be->cat_end_pct;
	*ret_mb = c->mb_floor_pct < be->mba_pct ? c->mb_floor_pct : be->mba_pct;
}

static void set_plan(const struct adapt *a, const struct rdt_class_config *be,
		     struct plan_rdt_group *g, const char *why)
{
	for (unsigned int i = 0; i < g->nr_l3; i++)
		g->l3[i].end_pct = a->l3_end;
	for (unsigned int i = 0; i < g->nr_mb; i++)
		g->mb[i].pct = a->mb;
	snprintf(g->why, sizeof(g->why), "class BE adapted: L3 %u-%u%% MB %u%% (%s)",
		 be->cat_start_pct, a->l3_end, a->mb, why);
}

/* Between ticks: one of the guard's LS waits blamed on BE. */
static bool event_signal(const struct strategy_input *in)
{
	for (size_t i = 0; i < in->nr_waits; i++)
		if (latency_guard_blames_be(in->snap, in->cfg, in->waits[i].prev_cgid))
			return true;
	return false;
}

/* An LS latency event between ticks: one step down now, unless one was taken just before. */
static int react(struct adapt *a, const struct strategy_input *in, struct plan_rdt_group *g,
		 struct strategy_report *rep)
{
	const struct rdt_adapt_config *c = &in->cfg->rdt_adapt;
	const struct rdt_class_config *be = &in->cfg->rdt[RDT_CLASS_BE];
	unsigned int l3_floor, mb_floor, l3, mb;

	/* before the first tick there is no level to step from */
	if (!c->event_hold_ns || !a->has_level || !event_signal(in))
		return 0;
	if (a->has_shrunk && in->now_ns - a->last_shrink_ns < c->event_hold_ns) {
		a->events_held++;
		return 0;
	}
	floors(c, be, &l3_floor, &mb_floor);
	l3 = down(a->l3_end, c->step_pct, l3_floor);
	mb = down(a->mb, c->step_pct, mb_floor);
	/* hysteresis: interference restarts the quiet window even at the floor */
	a->last_change_ns = in->now_ns;
	if (l3 == a->l3_end && mb == a->mb)
		return 0;
	a->l3_end = l3;
	a->mb = mb;
	a->shrinks++;
	a->event_shrinks++;
	a->last_shrink_ns = in->now_ns;
	a->has_shrunk = true;
	set_plan(a, be, g, "LS latency event");
	rep->rdt_react = true;
	return 0;
}

static int decide(void *state, const struct strategy_input *in, struct plan *plan,
		  struct strategy_report *rep)
{
	const struct rdt_adapt_config *c = &in->cfg->rdt_adapt;
	const struct rdt_class_config *be = &in->cfg->rdt[RDT_CLASS_BE];
	struct plan_rdt_group *g = plan_rdt_get(&plan->rdt, "BE");
	struct adapt *a = state;
	unsigned int l3_floor, mb_floor;
	bool llc, mbm;

	if (!g || !in->snap->rdt_enabled)
		return 0;
	if (!in->is_tick)
		return react(a, in, g, rep);
	floors(c, be, &l3_floor, &mb_floor);
	if (!a->has_level) {
		a->l3_end = be->cat_end_pct;
		a->mb = be->mba_pct;
		a->last_change_ns = in->now_ns;
		a->has_level = true;
	}
	/* a reload may have lowered the maximum */
	a->l3_end = a->l3_end > be->cat_end_pct ? be->cat_end_pct : a->l3_end;
	a->mb = a->mb > be->mba_pct ? be->mba_pct : a->mb;
	llc = llc_signal(a, in->snap, c->llc_drop_pct);
	/* both signals are evaluated every tick: the PMU one learns its baseline when quiet */
	llc = pmu_signal(a, in->snap, c) || llc;
	mbm = c->mbm_peak_bps && node_mbm(in->snap) >= 0.9 * (double)c->mbm_peak_bps;
	if (llc || mbm) {
		unsigned int l3 = llc ? down(a->l3_end, c->step_pct, l3_floor) : a->l3_end;
		unsigned int mb = mbm ? down(a->mb, c->step_pct, mb_floor) : a->mb;

		if (l3 != a->l3_end || mb != a->mb) {
			a->shrinks++;
			a->last_shrink_ns = in->now_ns;
			a->has_shrunk = true;
		}
		a->l3_end = l3;
		a->mb = mb;
		/* hysteresis: interference restarts the quiet window even at the floor */
		a->last_change_ns = in->now_ns;
	} else if (in->now_ns - a->last_change_ns >= c->quiet_ns &&
		   (a->l3_end < be->cat_end_pct || a->mb < be->mba_pct)) {
		a->l3_end = up(a->l3_end, c->step_pct, be->cat_end_pct);
		a->mb = up(a->mb, c->step_pct, be->mba_pct);
		a->last_change_ns = in->now_ns;
		a->grows++;
	}
	set_plan(a, be, g,
		 llc && mbm ? "LLC and MBM interference" :
		 llc	    ? "LLC interference" :
		 mbm	    ? "MBM near peak" :
			      "quiet");
	return 0;
}

const struct kqos_strategy resctrl_adapt_strategy = {
	.name = "resctrl_adapt",
	.desc = "BE's L3 ways and MB down on LS interference, back up when quiet (Heracles)",
	.prio = 3, /* after resctrl_qos (4), whose BE group it edits */
	.reacts = true, /* the guard's LS latency events, between ticks */
	.enabled = enabled,
	.init = init,
	.decide = decide,
	.fini = fini,
};
