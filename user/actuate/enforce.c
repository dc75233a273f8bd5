// SPDX-License-Identifier: GPL-2.0
/* The enforcement loop: config -> strategies (pure decide) -> plan -> actuator. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "actuator.h"
#include "cgroupfs.h"
#include "enforce.h"
#include "log.h"
#include "plan.h"
#include "rdtact.h"
#include "resctrl.h"
#include "slo.h"
#include "strategy.h"

#define MAX_STRATEGIES 16

struct strat_slot {
	const struct kqos_strategy *s;
	void *state;
};

struct enforcer {
	struct cgroupfs *cg;
	struct actuator *act;
	struct resctrl *r; /* NULL: no resctrl control */
	bool owns_r;
	char *rdt_root; /* where e->r was opened, to open it again after it vanished */
	struct rdtact *rdt;
	struct slo_config cfg;
	bool dry_run;
	__u64 decide_ns; /* the strategies' share of the last tick */
	struct strat_slot slots[MAX_STRATEGIES];
	size_t nr_slots;
	struct plan plan;
	struct plan base; /* the last tick's plan before any tightening: what reactions start from */
	/* the last resctrl plan applied: base lacks it (resctrl_qos runs after the tightening
	 * guard), and a reaction that edits it (resctrl_adapt) starts from it */
	struct plan_rdt last_rdt;
	struct plan reserve; /* knobs reactions may write, journaled ahead at each tick */
	struct strategy_report last; /* the last tick's or reaction's report */
	const struct window *win; /* the agent's metric history (enforcer__set_inputs) */
	const struct evict_pending *evicting;
	struct evict_list evict; /* the last tick's eviction requests */
};

int enforce_validate(const char *policy_json, const char *kqos_json, char *err, size_t err_len)
{
	struct slo_config cfg;

	return slo_config_parse(policy_json, kqos_json, &cfg, err, err_len);
}

static bool any_enabled(const struct enforcer *e)
{
	for (size_t i = 0; i < e->nr_slots; i++)
		if (e->slots[i].s->enabled(&e->cfg))
			return true;
	return false;
}

static void log_config(const struct enforcer *e)
{
	log_info(
		"enforcement configured",
		"cpu_suppress=%d policy=%s threshold=%d min=%d cpuset_rules=%d batch_resource=%d "
		"mid_resource=%d mid_ls_protected=%d eviction_features=0x%x cpu_burst=%s dry_run=%d",
		e->cfg.suppress_enable, suppress_policy_name(e->cfg.suppress_policy),
		e->cfg.suppress_threshold_pct, e->cfg.suppress_min_pct, e->cfg.cpuset_rules_enable,
		e->cfg.batch_resource_enable, e->cfg.mid_resource_enable, e->cfg.mid_ls_protected,
		e->cfg.evict.features, pod_burst_policy_name(e->cfg.burst.policy), e->dry_run);
}

static int init_strategies(struct enforcer *e)
{
	const struct kqos_strategy *s;
	size_t i;
	int err;

	strategy_for_each(s, i) {
		if (e->nr_slots == MAX_STRATEGIES)
			break;
		e->slots[e->nr_slots].s = s;
		if (s->init) {
			err = s->init(&e->cfg, &e->slots[e->nr_slots].state);
			if (err)
				return err;
		}
		e->nr_slots++;
	}
	return 0;
}

/* After a crash the journal holds what the previous run changed: put it back, or adopt it. */
static int recover(struct enforcer *e)
{
	size_t n = actuator__nr_journal(e->act);
	int err;

	if (!n)
		return 0;
	if (e->cfg.recovery == SLO_RECOVERY_ADOPT) {
		log_info("journal adopted from the previous run", "entries=%zu", n);
		return 0;
	}
	err = actuator__restore(e->act);
	log_msg(err ? LOG_WARN : LOG_INFO, "journal restored from the previous run",
		"entries=%zu left=%zu err=%d", n, actuator__nr_journal(e->act), err);
	return 0;
}

/*
 * resctrl control needs a mount; without one the strategy still decides (its plan is logged
 * nowhere) and nothing is written. A restart with resctrl control off removes what a killed
 * run left; with it on, the first pass adopts the kqos groups still planned and removes the
 * rest (pod groups after their grace).
 */
static int open_rdt(struct enforcer *e, const struct enforce_opts *opts)
{
	struct rdtact_opts o = { .dry_run = opts->dry_run,
				 .pod_grace_ns = opts->rdt_pod_grace_ns,
				 .no_reconcile = opts->rdt_no_reconcile };
	int err;

	e->r = opts->resctrl;
	if (!e->r && opts->resctrl_root) {
		err = resctrl_open(opts->resctrl_root, &e->r);
		if (err) {
			log_info("no resctrl control", "root=%s err=%d", opts->resctrl_root, err);
			return 0;
		}
		e->owns_r = true;
		e->rdt_root = strdup(opts->resctrl_root);
		if (!e->rdt_root)
			return -ENOMEM;
	}
	if (!e->r)
		return 0;
	err = rdtact__new(e->r, e->cg, &o, &e->rdt);
	if (err)
		return err;
	if (!slo_rdt_enabled(&e->cfg) && !e->cfg.rdt_pod_level && !opts->dry_run)
		rdtact__restore(e->rdt);
	return 0;
}

/*
 * A v1 controller missing under the cgroup root (not mounted, or not in this mount namespace):
 * said once here, since each of its knobs then fails for every cgroup with only a path.
 */
static void log_missing_ctrls(const struct cgroupfs *cg)
{
	static const struct {
		enum cg_ctrl ctrl;
		const char *name, *knobs;
	} ctrls[] = {
		{ CG_CTRL_CPU, "cpu", "quota, shares, idle, burst" },
		{ CG_CTRL_CPUSET, "cpuset", "cpusets" },
		{ CG_CTRL_MEMORY, "memory", "memory limits" },
	};

	for (size_t i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++)
		if (!cgroupfs__ctrl_root(cg, ctrls[i].ctrl))
			log_warn(
				"cgroup controller not mounted under the cgroup root: its knobs are "
				"not enforced",
				"controller=%s knobs=\"%s\" root=%s", ctrls[i].name, ctrls[i].knobs,
				cgroupfs__root(cg));
}

int enforcer__new(const struct enforce_opts *opts, struct enforcer **ret)
{
	struct actuator_opts aopts = { 0 };
	char msg[256];
	struct enforcer *e;
	int err;

	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	plan_init(&e->plan);
	plan_init(&e->base);
	plan_init(&e->reserve);
	err = slo_config_parse(opts->policy_json, opts->kqos_json, &e->cfg, msg, sizeof(msg));
	if (err) {
		log_err("invalid enforcement config", "err=\"%s\"", msg);
		goto err;
	}
	e->dry_run = opts->dry_run;
	err = cgroupfs__open(opts->cgroup_root, (enum cgfs_mode)opts->cgfs_mode, &e->cg);
	if (err) {
		log_err("cannot open cgroup mount for enforcement", "root=%s err=%d",
			opts->cgroup_root ? opts->cgroup_root : "/sys/fs/cgroup", err);
		goto err;
	}
	log_missing_ctrls(e->cg);
	aopts.state_dir = opts->state_dir ? opts->state_dir : ENFORCE_STATE_DIR_DEFAULT;
	aopts.dry_run = opts->dry_run;
	aopts.formula = e->cfg.weight_formula;
	err = actuator__new(e->cg, &aopts, &e->act);
	if (err)
		goto err;
	actuator__set_reserve(e->act, &e->reserve);
	err = init_strategies(e);
	if (err)
		goto err;
	err = recover(e);
	if (err)
		goto err;
	err = open_rdt(e, opts);
	if (err)
		goto err;
	log_config(e);
	*ret = e;
	return 0;
err:
	enforcer__free(e);
	return err;
}

int enforcer__reconfigure(struct enforcer *e, const char *policy_json, const char *kqos_json,
			  bool dry_run)
{
	struct slo_config cfg;
	char msg[256];
	int err;

	err = slo_config_parse(policy_json, kqos_json, &cfg, msg, sizeof(msg));
	if (err) {
		log_err("enforcement config rejected, keeping the last good one", "err=\"%s\"",
			msg);
		return err;
	}
	e->cfg = cfg;
	e->dry_run = dry_run;
	actuator__set_dry_run(e->act, dry_run);
	if (e->rdt)
		rdtact__set_dry_run(e->rdt, dry_run);
	actuator__set_formula(e->act, cfg.weight_formula);
	log_config(e);
	return 0;
}

static void decide_one(struct enforcer *e, size_t i, const struct strategy_input *in,
		       struct strategy_report *rep)
{
	const struct kqos_strategy *s = e->slots[i].s;
	int err;

	e->plan.strategy = s->name;
	e->plan.prio = s->prio;
	e->plan.tighten = s->tightens;
	err = s->decide(e->slots[i].state, in, &e->plan, rep);
	e->plan.tighten = false;
	if (err)
		log_warn("strategy failed; its plan is partial", "strategy=%s err=%d", s->name,
			 err);
}

/* Strategies that tighten come last (registry.c): the plan before them is the base. */
static void decide_all(struct enforcer *e, const struct strategy_input *in,
		       struct strategy_report *rep)
{
	bool based = false;

	for (size_t i = 0; i < e->nr_slots; i++) {
		if (!e->slots[i].s->enabled(&e->cfg))
			continue;
		if (e->slots[i].s->tightens && !based)
			based = !plan_copy(&e->base, &e->plan);
		decide_one(e, i, in, rep);
	}
	if (!based && plan_copy(&e->base, &e->plan))
		log_warn("no memory for the reaction plan; reactions wait for the next tick", NULL);
	if (e->plan.nr_overridden)
		log_dbg("plan requests overridden by precedence", "n=%zu", e->plan.nr_overridden);
}

static void log_moves(const struct guard_report *g)
{
	static const char *const names[GUARD_MOVE_NR] = { "escalate", "back_out", "relax" };

	for (size_t i = 0; i < g->nr_new; i++)
		log_info("latency guard", "move=%s level=%u->%u why=\"%s\"",
			 names[g->new_moves[i].move], g->new_moves[i].from, g->new_moves[i].to,
			 g->new_moves[i].why);
}

/* The kernel refuses a burst above the quota: say once per pod what was written instead. */
static void log_burst(const struct burst_report *b)
{
	for (size_t i = 0; i < b->nr_rows; i++)
		if (b->rows[i].clamp_new)
			log_info("cpu burst clamped to the quota",
				 "pod=%s/%s container=%s asked_us=%llu written_us=%llu",
				 b->rows[i].ns, b->rows[i].pod, b->rows[i].container,
				 (unsigned long long)b->rows[i].asked_us,
				 (unsigned long long)b->rows[i].burst_us);
}

static void fill_burst(const struct burst_report *b, struct snap_burst *ret)
{
	ret->enabled = b->enabled;
	ret->node_state = (int)b->node;
	ret->share_pool_used = b->share_pool_used;
	ret->share_pool_total = b->share_pool_total;
	for (size_t i = 0; i < b->nr_rows; i++) {
		const struct burst_row *r = &b->rows[i];
		struct snap_burst_row *o;

		if (ret->nr == SNAP_BURST_MAX) {
			ret->nr_dropped++;
			continue;
		}
		o = &ret->rows[ret->nr++];
		snprintf(o->pod, sizeof(o->pod), "%s", r->pod);
		snprintf(o->ns, sizeof(o->ns), "%s", r->ns);
		snprintf(o->container, sizeof(o->container), "%s", r->container);
		o->asked_us = r->asked_us;
		o->burst_us = r->burst_us;
		o->base_quota_us = r->base_quota_us;
		o->quota_us = r->quota_us;
	}
}

static void fill_state(struct enforcer *e, const struct strategy_report *rep,
		       struct snap_enforce *ret)
{
	if (!ret)
		return;
	*ret = (struct snap_enforce){ .enabled = any_enabled(e), .dry_run = e->dry_run };
	ret->has_be_cpus = rep->has_be_cpus;
	ret->be_cpus = rep->be_cpus;
	ret->has_be_quota = rep->has_be_quota;
	ret->be_quota_us = rep->be_quota_us;
	ret->guard.enabled = rep->guard.enabled;
	ret->guard.level = rep->guard.level;
	ret->guard.steps = rep->guard.steps;
	ret->guard.breaches = rep->guard.breaches;
	ret->guard.escalations = rep->guard.moves[GUARD_ESCALATE];
	ret->guard.back_outs = rep->guard.moves[GUARD_BACK_OUT];
	ret->guard.relaxes = rep->guard.moves[GUARD_RELAX];
	fill_burst(&rep->burst, &ret->burst);
	if (e->rdt)
		rdtact__fill(e->rdt, &ret->rdt);
	actuator__fill(e->act, ret);
}

/* The loop thread's CPU time: the strategies' cost, however long the thread waited. */
static __u64 cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

__u64 enforcer__decide_ns(const struct enforcer *e)
{
	return e ? e->decide_ns : 0;
}

/*
 * resctrl vanished under us (unmounted, its filesystem gone): each tick tries the root again,
 * and a new mount there takes over from the dead handle. Only a handle kqos opened itself.
 */
static void reopen_rdt(struct enforcer *e)
{
	struct resctrl *r;

	if (!e->rdt || !e->owns_r || !e->rdt_root || !rdtact__is_unreachable(e->rdt))
		return;
	if (resctrl_open(e->rdt_root, &r))
		return;
	rdtact__set_resctrl(e->rdt, r);
	resctrl_close(e->r);
	e->r = r;
	log_info("resctrl mounted again: control goes on on the new mount", "root=%s", e->rdt_root);
}

int enforcer__tick(struct enforcer *e, const struct snapshot *snap, struct snap_enforce *ret)
{
	struct strategy_input in = { .snap = snap,
				     .cfg = &e->cfg,
				     .now_ns = snap->mono_ns,
				     .is_tick = true,
				     .win = e->win,
				     .evicting = e->evicting };
	struct strategy_report rep = { 0 };
	__u64 t0;
	int err;

	plan_reset(&e->plan);
	plan_reset(&e->reserve);
	rep.reserve = &e->reserve;
	e->evict.nr = e->evict.nr_dropped = 0;
	e->evict.pressure = 0;
	rep.evict = &e->evict;
	t0 = cpu_ns();
	decide_all(e, &in, &rep);
	e->decide_ns = cpu_ns() - t0;
	log_moves(&rep.guard);
	log_burst(&rep.burst);
	actuator__set_reserve(e->act, &e->reserve);
	err = actuator__apply(e->act, &e->plan, snap->wall_ns);
	reopen_rdt(e);
	/* resctrl is planned or kqos groups remain to be released */
	if (e->rdt && (e->plan.rdt.is_on || rdtact__nr_groups(e->rdt)))
		rdtact__apply(e->rdt, &e->plan.rdt, snap->mono_ns);
	if (plan_rdt_copy(&e->last_rdt, &e->plan.rdt))
		log_warn("no memory for the resctrl reaction plan; resctrl reacts at ticks only",
			 NULL);
	e->last = rep;
	fill_state(e, &rep, ret);
	return err;
}

/* Whether an enabled strategy has the bool at @flag (offsetof in struct kqos_strategy) set. */
static bool any_enabled_with(const struct enforcer *e, size_t flag)
{
	for (size_t i = 0; e && i < e->nr_slots; i++)
		if (*(const bool *)((const char *)e->slots[i].s + flag) &&
		    e->slots[i].s->enabled(&e->cfg))
			return true;
	return false;
}

bool enforcer__needs_pod_memory(const struct enforcer *e)
{
	return any_enabled_with(e, offsetof(struct kqos_strategy, pod_memory));
}

bool enforcer__needs_history(const struct enforcer *e)
{
	return any_enabled_with(e, offsetof(struct kqos_strategy, history));
}

static bool any_reacts(const struct enforcer *e)
{
	return any_enabled_with(e, offsetof(struct kqos_strategy, reacts));
}

int enforcer__react(struct enforcer *e, const struct snapshot *snap, const struct enforcer_now *now,
		    struct snap_enforce *ret)
{
	struct strategy_input in = { .snap = snap,
				     .cfg = &e->cfg,
				     .now_ns = now->mono_ns,
				     .waits = now->waits,
				     .nr_waits = now->nr_waits };
	struct strategy_report rep = { 0 };
	int err;

	if (!snap || !any_reacts(e))
		return 0;
	/* the other strategies decided at the tick; only the reacting ones decide again */
	err = plan_copy(&e->plan, &e->base);
	if (!err)
		err = plan_rdt_copy(&e->plan.rdt, &e->last_rdt);
	if (err)
		return err;
	rep.has_be_cpus = e->last.has_be_cpus;
	rep.be_cpus = e->last.be_cpus;
	rep.has_be_quota = e->last.has_be_quota;
	rep.be_quota_us = e->last.be_quota_us;
	rep.burst = e->last.burst; /* decided at the tick; its rows live until the next */
	for (size_t i = 0; i < e->nr_slots; i++)
		if (e->slots[i].s->reacts && e->slots[i].s->enabled(&e->cfg))
			decide_one(e, i, &in, &rep);
	log_moves(&rep.guard);
	err = actuator__apply(e->act, &e->plan, now->wall_ns);
	/* resctrl_adapt stepped BE down on an LS latency event: the resctrl actuator writes it */
	if (rep.rdt_react && e->rdt) {
		rdtact__apply(e->rdt, &e->plan.rdt, now->mono_ns);
		if (plan_rdt_copy(&e->last_rdt, &e->plan.rdt))
			log_warn("no memory for the resctrl reaction plan", NULL);
	}
	e->last = rep;
	fill_state(e, &rep, ret);
	return err;
}

void enforcer__set_inputs(struct enforcer *e, const struct window *win,
			  const struct evict_pending *evicting)
{
	e->win = win;
	e->evicting = evicting;
}

const struct evict_list *enforcer__evictions(const struct enforcer *e)
{
	return &e->evict;
}

const struct slo_config *enforcer__config(const struct enforcer *e)
{
	return &e->cfg;
}

uint64_t enforcer__next_react_ns(const struct enforcer *e)
{
	return any_reacts(e) ? e->last.guard.next_ns : 0;
}

size_t enforcer__watches(const struct enforcer *e, const struct snapshot *snap,
			 struct wait_watch *out, size_t cap)
{
	return latency_guard_watches(snap, &e->cfg, out, cap);
}

uint64_t enforcer__nr_writes(const struct enforcer *e)
{
	return cgroupfs__nr_writes(e->cg);
}

int enforcer__place(struct enforcer *e, uint64_t cgid, int tid, uint64_t event_ns)
{
	return e->rdt ? rdtact__place(e->rdt, cgid, (pid_t)tid, event_ns) : 0;
}

bool enforcer__places(const struct enforcer *e)
{
	return e->rdt && e->plan.rdt.nr_members && !e->dry_run;
}

int enforcer__rdt_reconcile(struct enforcer *e, uint64_t mono_ns)
{
	return e->rdt ? rdtact__reconcile(e->rdt, mono_ns) : 0;
}

int enforcer__restore(struct enforcer *e)
{
	size_t n = actuator__nr_journal(e->act);
	int err = actuator__restore(e->act), rerr;

	rerr = e->rdt && !e->dry_run ? rdtact__restore(e->rdt) : 0;
	/* a vanished resctrl (unmounted, its server gone) took the groups with it */
	if (rerr)
		log_warn("some kqos resctrl groups could not be removed", "err=%d (%s)", rerr,
			 strerror(-rerr));
	log_msg(err ? LOG_WARN : LOG_INFO, "original cgroup values restored",
		"entries=%zu left=%zu err=%d", n, actuator__nr_journal(e->act), err);
	return err;
}

void enforcer__free(struct enforcer *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nr_slots; i++)
		if (e->slots[i].s->fini)
			e->slots[i].s->fini(e->slots[i].state);
	plan_fini(&e->plan);
	plan_fini(&e->base);
	plan_fini(&e->reserve);
	plan_rdt_fini(&e->last_rdt);
	actuator__free(e->act);
	rdtact__free(e->rdt);
	if (e->owns_r)
		resctrl_close(e->r);
	free(e->rdt_root);
	cgroupfs__free(e->cg);
	free(e);
}

struct actuator *enforcer__actuator(struct enforcer *e)
{
	return e->act;
}
