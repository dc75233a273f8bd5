// SPDX-License-Identifier: GPL-2.0
/*
 * The latency guard: when an LS pod waits in the run queue past its target, push BE back at
 * once, one step of a ladder at a time (idle or weight, then a cpuset away from the CPUs where
 * LS waited, then a quota cut), keep a step only while it helps, and step back after a quiet
 * window. Pure: the kernel's LS_WAIT events and the snapshot's histograms come in, plan
 * entries and a report go out; time is the caller's (strategy_input.now_ns).
 *
 * A hard quota made the LS tail worse on this kind of host (perf-anchors.md §3.7), so every
 * step is judged in the kernel's own histogram: a step in force for a whole interval after
 * which the LS waits got worse is backed out and not tried again for a while.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"

#define GUARD_PRIO	  5
#define WORSE_FACTOR	  1.25 /* severity grew by this much: the step hurt */
#define BE_COMPARABLE	  1.5 /* ... while BE used at most this much more CPU than before */
#define MIN_WAITS	  20 /* fewer waits in an interval say nothing about its p99 */
#define BAN_QUIET_WINDOWS 10 /* a harmful step is skipped for this many quiet windows */
#define MAX_QUIET_MULT	  8 /* relax backoff: 1, 2, 4, 8 quiet windows */
#define BE_ACTIVE_CORES	  0.1 /* BE using less than this is quiet: learn the LS baseline */
#define BASE_ALPHA	  0.2 /* EWMA weight of a new quiet-BE sample */
#define CFS_PERIOD_US	  100000
#define QUOTA_FLOOR_US	  2000 /* koordinator's minimum BE quota */

struct guard_state {
	unsigned int level; /* ladder positions passed (banned steps included) */
	uint64_t level_ns; /* when the level last changed */
	uint64_t last_breach_ns;
	uint64_t relaxed_ns; /* the last relax, 0 = none since the last breach */
	unsigned int quiet_mult;
	uint64_t banned_until_ns[GUARD_STEP_NR];
	struct cpumask hot; /* CPUs where LS waited while the cpuset step was building */
	double before, before_be; /* LS severity and BE CPU of the tick before the last step */
	bool has_before;
	double last_sev, last_be; /* of the last tick */
	uint64_t last_tick_ns; /* 0 = no tick yet */
	double base_cpi, base_mpki;
	bool has_base_cpi, has_base_mpki;
	uint64_t breaches;
	uint64_t moves[GUARD_MOVE_NR];
};

/* --- targets ----------------------------------------------------------------------------- */

/* LS to protect: an LS class, or a Mid+LS pod (BestEffort to Kubernetes, not suppressed). */
static bool is_ls(const struct slo_config *cfg, const struct pod *pod)
{
	if (pod->qos == POD_QOS_LSE || pod->qos == POD_QOS_LSR || pod->qos == POD_QOS_LS)
		return true;
	return strat_pod_is_be(pod) && !strat_pod_suppressed(cfg, pod);
}

static uint64_t target_of(const struct pod *pod, const struct guard_config *g)
{
	if (pod->wait_target_ns)
		return pod->wait_target_ns;
	if (pod->qos == POD_QOS_LSE)
		return g->target_lse_ns;
	return pod->qos == POD_QOS_LSR ? g->target_lsr_ns : g->target_ls_ns;
}

static size_t add_watch(struct wait_watch *out, size_t n, size_t cap, uint64_t cgid,
			uint64_t target)
{
	if (cgid && n < cap)
		out[n++] = (struct wait_watch){ .cgid = cgid, .target_ns = target };
	return n;
}

size_t latency_guard_watches(const struct snapshot *snap, const struct slo_config *cfg,
			     struct wait_watch *out, size_t cap)
{
	size_t n = 0;

	if (!cfg->guard.enable)
		return 0;
	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];
		uint64_t t;

		if (!sp->pod || !sp->pod->is_active || !is_ls(cfg, sp->pod))
			continue;
		t = target_of(sp->pod, &cfg->guard);
		n = add_watch(out, n, cap, sp->cgid, t);
		for (size_t c = 0; c < sp->nr_ctrs; c++)
			n = add_watch(out, n, cap, sp->ctrs[c].cgid, t);
		for (size_t c = 0; c < sp->nr_cgids; c++)
			n = add_watch(out, n, cap, sp->cgids[c], t);
	}
	return n;
}

/* --- what the snapshot says about LS --------------------------------------------------- */

/* The worst LS pod's interval p99 over its target; 0 when no pod waited enough to tell. */
static double ls_severity(const struct snapshot *snap, const struct slo_config *cfg)
{
	double worst = 0;

	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];
		double r;

		if (!sp->pod || !sp->pod->is_active || !is_ls(cfg, sp->pod) || !sp->st.has_cpu ||
		    sp->st.rq_waits < MIN_WAITS)
			continue;
		r = (double)sp->st.rq_p99_ns / (double)target_of(sp->pod, &cfg->guard);
		if (r > worst)
			worst = r;
	}
	return worst;
}

/* CPI and MPKI of the LS pods, weighted by their CPU; false without PMU figures. */
static bool ls_pmu(const struct snapshot *snap, const struct slo_config *cfg, double *cpi,
		   double *mpki, bool *has_mpki)
{
	double wc = 0, sc = 0, wm = 0, sm = 0;

	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];
		double w;

		if (!sp->pod || !sp->pod->is_active || !is_ls(cfg, sp->pod) || !sp->st.has_cpu)
			continue;
		w = sp->st.cpu_cores;
		if (sp->st.has_cpi && w > 0) {
			sc += sp->st.cpi * w;
			wc += w;
		}
		if (sp->st.has_mpki && w > 0) {
			sm += sp->st.llc_mpki * w;
			wm += w;
		}
	}
	*has_mpki = wm > 0;
	*mpki = wm > 0 ? sm / wm : 0;
	*cpi = wc > 0 ? sc / wc : 0;
	return wc > 0;
}

static double be_cores(const struct snapshot *snap)
{
	return snap->classes[POD_QOS_BE].cpu_cores;
}

static void learn(double *base, bool *has, double v)
{
	*base = *has ? (1 - BASE_ALPHA) * *base + BASE_ALPHA * v : v;
	*has = true;
}

/*
 * Harm that does not show as waiting (cache and preemption interference): LS CPI or MPKI
 * above what it was while BE was quiet, with BE busy. The baseline is learned on quiet ticks.
 */
static bool pmu_harm(struct guard_state *st, const struct snapshot *snap,
		     const struct slo_config *cfg, char *why, size_t len)
{
	const struct guard_config *g = &cfg->guard;
	double cpi, mpki;
	bool has_mpki;

	if (!ls_pmu(snap, cfg, &cpi, &mpki, &has_mpki))
		return false;
	if (be_cores(snap) < BE_ACTIVE_CORES) {
		learn(&st->base_cpi, &st->has_base_cpi, cpi);
		if (has_mpki)
			learn(&st->base_mpki, &st->has_base_mpki, mpki);
		return false;
	}
	if (g->cpi_rise_pct && st->has_base_cpi &&
	    cpi > st->base_cpi * (1 + g->cpi_rise_pct / 100.0)) {
		snprintf(why, len, "LS CPI %.2f over its quiet %.2f", cpi, st->base_cpi);
		return true;
	}
	if (g->mpki_rise_pct && has_mpki && st->has_base_mpki &&
	    mpki > st->base_mpki * (1 + g->mpki_rise_pct / 100.0)) {
		snprintf(why, len, "LS MPKI %.2f over its quiet %.2f", mpki, st->base_mpki);
		return true;
	}
	return false;
}

/* --- the ladder -------------------------------------------------------------------------- */

static void note(struct guard_report *rep, enum guard_move m, unsigned int from, unsigned int to,
		 const char *why)
{
	struct guard_transition *t;

	if (rep->nr_new == GUARD_MOVES_MAX)
		return;
	t = &rep->new_moves[rep->nr_new++];
	t->move = m;
	t->from = from;
	t->to = to;
	snprintf(t->why, sizeof(t->why), "%s", why);
}

static bool banned(const struct guard_state *st, enum guard_step s, uint64_t now)
{
	return now < st->banned_until_ns[s];
}

static void move(struct guard_state *st, struct guard_report *rep, enum guard_move m,
		 unsigned int to, uint64_t now, const char *why)
{
	note(rep, m, st->level, to, why);
	st->moves[m]++;
	st->level = to;
	st->level_ns = now;
}

static void escalate(struct guard_state *st, const struct strategy_input *in,
		     struct guard_report *rep, const char *why)
{
	const struct guard_config *g = &in->cfg->guard;
	unsigned int to = st->level;

	if (st->level && in->now_ns - st->level_ns < g->settle_ns)
		return; /* the last step has not had time to work */
	while (to < g->nr_ladder && banned(st, g->ladder[to], in->now_ns))
		to++;
	if (to >= g->nr_ladder)
		return; /* every step in force or banned: nothing left to try */
	/* the step is judged against the last full interval before it */
	st->before = st->last_sev;
	st->before_be = st->last_be;
	st->has_before = st->last_tick_ns != 0;
	move(st, rep, GUARD_ESCALATE, to + 1, in->now_ns, why);
}

static void breach(struct guard_state *st, const struct strategy_input *in,
		   struct guard_report *rep, const char *why)
{
	st->breaches++;
	/* a breach soon after a relax: the quiet window was too short, wait longer next time */
	if (st->relaxed_ns && in->now_ns - st->relaxed_ns < in->cfg->guard.quiet_ns * 2 &&
	    st->quiet_mult < MAX_QUIET_MULT)
		st->quiet_mult *= 2;
	st->relaxed_ns = 0;
	st->last_breach_ns = in->now_ns;
	escalate(st, in, rep, why);
}

static bool pod_has_cgroup(const struct snap_pod *sp, uint64_t cgid)
{
	if (sp->cgid == cgid)
		return true;
	for (size_t c = 0; c < sp->nr_ctrs; c++)
		if (sp->ctrs[c].cgid == cgid)
			return true;
	for (size_t c = 0; c < sp->nr_cgids; c++)
		if (sp->cgids[c] == cgid)
			return true;
	return false;
}

/* The kernel says which cgroup ran before the late switch-in (strategy.h). */
bool latency_guard_blames_be(const struct snapshot *snap, const struct slo_config *cfg,
			     uint64_t prev_cgid)
{
	for (size_t i = 0; prev_cgid && i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];

		if (sp->pod && strat_pod_suppressed(cfg, sp->pod) && pod_has_cgroup(sp, prev_cgid))
			return true;
	}
	return false;
}

static void on_waits(struct guard_state *st, const struct strategy_input *in,
		     struct guard_report *rep)
{
	const struct wait_event *worst = NULL;
	char why[96];

	for (size_t i = 0; i < in->nr_waits; i++) {
		const struct wait_event *w = &in->waits[i];

		if (!latency_guard_blames_be(in->snap, in->cfg, w->prev_cgid))
			continue;
		if (w->cpu < CPUMASK_MAX_CPUS)
			cpumask_set(&st->hot, w->cpu);
		if (!worst || w->wait_ns > worst->wait_ns)
			worst = w;
	}
	if (!worst)
		return;
	snprintf(why, sizeof(why), "LS cgroup %llu waited %llu us behind BE on CPU %u",
		 (unsigned long long)worst->cgid, (unsigned long long)worst->wait_ns / 1000,
		 worst->cpu);
	breach(st, in, rep, why);
}

/*
 * Worse, and not because BE pushes harder: a burst that grows after the step (or began in the
 * interval before it) would otherwise look like the step's fault.
 */
static bool step_hurt(const struct guard_state *st, double sev, double be)
{
	return st->has_before && st->before_be >= BE_ACTIVE_CORES && sev > 1 &&
	       sev > st->before * WORSE_FACTOR && be <= st->before_be * BE_COMPARABLE;
}

/* A step that was in force for the whole last interval and made LS waits worse goes. */
static bool back_out(struct guard_state *st, const struct strategy_input *in, double sev,
		     struct guard_report *rep)
{
	const struct guard_config *g = &in->cfg->guard;
	enum guard_step s;
	char why[96];

	if (!st->level || !st->last_tick_ns || st->level_ns > st->last_tick_ns ||
	    in->now_ns - st->level_ns < g->settle_ns || !step_hurt(st, sev, be_cores(in->snap)))
		return false;
	s = g->ladder[st->level - 1];
	st->banned_until_ns[s] = in->now_ns + BAN_QUIET_WINDOWS * g->quiet_ns;
	snprintf(why, sizeof(why), "%s made LS waits worse: p99/target %.2f -> %.2f",
		 guard_step_name(s), st->before, sev);
	move(st, rep, GUARD_BACK_OUT, st->level - 1, in->now_ns, why);
	st->has_before = false;
	return true;
}

static uint64_t quiet_needed(const struct guard_state *st, const struct guard_config *g)
{
	return g->quiet_ns * (st->quiet_mult ? st->quiet_mult : 1);
}

static void maybe_relax(struct guard_state *st, const struct strategy_input *in,
			struct guard_report *rep)
{
	uint64_t q = quiet_needed(st, &in->cfg->guard);
	char why[96];

	if (!st->level || in->now_ns - st->last_breach_ns < q || in->now_ns - st->level_ns < q)
		return;
	snprintf(why, sizeof(why), "no LS wait past target for %llu ms",
		 (unsigned long long)(in->now_ns - st->last_breach_ns) / 1000000);
	move(st, rep, GUARD_RELAX, st->level - 1, in->now_ns, why);
	st->relaxed_ns = in->now_ns;
	st->has_before = false;
	if (!st->level) {
		cpumask_zero(&st->hot);
		/* long quiet at rest: forgive the relax backoff */
		if (in->now_ns - st->last_breach_ns >= 4 * q)
			st->quiet_mult = 1;
	}
}

static void on_tick(struct guard_state *st, const struct strategy_input *in,
		    struct guard_report *rep)
{
	double sev = ls_severity(in->snap, in->cfg);
	char why[96];

	if (!back_out(st, in, sev, rep)) {
		/* an LS tail with BE idle is not BE's doing: nothing to push back */
		if (sev > 1 && be_cores(in->snap) >= BE_ACTIVE_CORES) {
			snprintf(why, sizeof(why), "LS p99 wait %.2fx its target", sev);
			breach(st, in, rep, why);
		} else if (pmu_harm(st, in->snap, in->cfg, why, sizeof(why))) {
			breach(st, in, rep, why);
		}
	}
	/* a step taken at this tick is judged against this interval (it was not in force) */
	if (rep->nr_new && rep->new_moves[rep->nr_new - 1].move == GUARD_ESCALATE) {
		st->before = sev;
		st->before_be = be_cores(in->snap);
		st->has_before = true;
	}
	st->last_sev = sev;
	st->last_be = be_cores(in->snap);
	st->last_tick_ns = in->now_ns;
}

/* --- plan ------------------------------------------------------------------------------ */

static int plan_step(const struct guard_state *st, const struct strategy_input *in,
		     const struct be_targets *t, enum guard_step s, struct plan *p)
{
	const struct guard_config *g = &in->cfg->guard;
	struct plan_value v = { 0 };
	struct cpumask full, cpus;

	switch (s) {
	case GUARD_STEP_IDLE:
		v.idle = true;
		return strat_plan_top(p, t, PLAN_KNOB_IDLE, &v, "latency guard: BE SCHED_IDLE");
	case GUARD_STEP_WEIGHT:
		v.shares = in->cfg->be_shares;
		return strat_plan_top(p, t, PLAN_KNOB_SHARES, &v, "latency guard: low BE shares");
	case GUARD_STEP_CPUSET:
		strat_be_full(in, &full);
		cpumask_andnot(&cpus, &full, &st->hot);
		/* keep one CPU for BE where possible: the highest of its set */
		if (cpumask_empty(&cpus) && !cpumask_empty(&full))
			cpumask_set(&cpus, (unsigned int)cpumask_last(&full));
		if (cpumask_empty(&cpus))
			return 0;
		return strat_plan_be_cpusets(p, in, t, false, &cpus, &cpus,
					     "latency guard: BE off the CPUs LS waited on");
	case GUARD_STEP_QUOTA:
		v.quota_us = (int64_t)CFS_PERIOD_US * g->quota_pct / 100;
		if (v.quota_us < QUOTA_FLOOR_US)
			v.quota_us = QUOTA_FLOOR_US;
		v.period_us = CFS_PERIOD_US;
		return strat_plan_top(p, t, PLAN_KNOB_CFS_QUOTA, &v, "latency guard: BE quota cut");
	default:
		return -EINVAL;
	}
}

static int plan_level(const struct guard_state *st, const struct strategy_input *in, struct plan *p,
		      struct guard_report *rep)
{
	const struct guard_config *g = &in->cfg->guard;
	struct be_targets t;
	int err = 0;

	strat_be_targets(in, &t);
	for (unsigned int i = 0; i < st->level && i < g->nr_ladder && !err; i++) {
		if (banned(st, g->ladder[i], in->now_ns))
			continue;
		rep->steps |= 1U << g->ladder[i];
		if (strat_be_targets_any(&t))
			err = plan_step(st, in, &t, g->ladder[i], p);
	}
	return err;
}

static void fill_report(const struct guard_state *st, const struct guard_config *g,
			struct guard_report *rep)
{
	rep->enabled = true;
	rep->level = st->level;
	rep->breaches = st->breaches;
	memcpy(rep->moves, st->moves, sizeof(rep->moves));
	/* the next relax is due then, with no tick or event needed to notice */
	rep->next_ns = st->level ? (st->last_breach_ns > st->level_ns ? st->last_breach_ns :
									st->level_ns) +
					   quiet_needed(st, g) :
				   0;
}

/* Every knob of every step, on every BE dir: what a reaction may write before the next tick. */
static int plan_reserve(const struct strategy_input *in, struct plan *r)
{
	const struct guard_config *g = &in->cfg->guard;
	struct guard_state all = { .level = g->nr_ladder };
	struct be_targets t;
	int err = 0;

	strat_be_targets(in, &t);
	for (unsigned int i = 0; i < g->nr_ladder && strat_be_targets_any(&t) && !err; i++)
		err = plan_step(&all, in, &t, g->ladder[i], r);
	return err;
}

static int guard_decide(void *state, const struct strategy_input *in, struct plan *p,
			struct strategy_report *rep)
{
	struct guard_state *st = state;

	if (in->cfg->guard.nr_ladder == 0)
		return 0;
	if (rep->reserve && plan_reserve(in, rep->reserve))
		return -ENOMEM;
	if (in->is_tick)
		on_tick(st, in, &rep->guard);
	on_waits(st, in, &rep->guard);
	maybe_relax(st, in, &rep->guard);
	fill_report(st, &in->cfg->guard, &rep->guard);
	return plan_level(st, in, p, &rep->guard);
}

static bool guard_enabled(const struct slo_config *cfg)
{
	return cfg->guard.enable;
}

static int guard_init(const struct slo_config *cfg, void **ret)
{
	struct guard_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->quiet_mult = 1;
	*ret = st;
	return 0;
}

static void guard_fini(void *state)
{
	free(state);
}

const struct kqos_strategy latency_guard_strategy = {
	.name = "latency_guard",
	.desc = "LS run-queue waits past target push BE back at once, a step at a time",
	.prio = GUARD_PRIO,
	.tightens = true,
	.reacts = true,
	.enabled = guard_enabled,
	.init = guard_init,
	.decide = guard_decide,
	.fini = guard_fini,
};
