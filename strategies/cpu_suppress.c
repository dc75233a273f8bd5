// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_suppress: koordinator's BE CPU suppression (koordinator.md §4.1) from NodeSLO
 * resourceUsedThresholdWithBE, plus kqos's weight and idle policies.
 *
 * The level suppressed is the besteffort QoS dir; without one (bare-metal groups) it is each
 * BE group's own cgroup. Every policy also writes the other mechanisms' neutral values (quota
 * -1, the full BE cpuset), so switching policy restores what the previous one had tightened.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "cpu_suppress.h"

#define CFS_PERIOD_US	 100000
#define CFS_MIN_QUOTA_US 2000
#define CPUSET_MIN_CPUS	 2

struct suppress_state {
	enum suppress_policy policy;
	unsigned int cur_cpus; /* last decided BE cpuset size, 0 = none yet */
	struct cpumask last_cpus;
	int64_t cur_quota; /* last decided quota (the total at the pod level), -1 = none yet */
	bool per_pod; /* the last tick suppressed BE pods one by one (a Mid+LS pod was there) */
	struct be_targets *t; /* this tick's, kept here so that decide() needs no large stack */
};

static int64_t max3(int64_t a, int64_t b, int64_t c)
{
	int64_t m = a > b ? a : b;

	return m > c ? m : c;
}

int64_t suppress_be_budget_milli(const struct strategy_input *in)
{
	const struct snapshot *snap = in->snap;
	int64_t cap = (int64_t)snap->node.nr_cpus * 1000, non_be = 0, all = 0, sys, reserved;
	int64_t budget;

	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];
		int64_t used = sp->st.has_cpu ? (int64_t)(sp->st.cpu_cores * 1000.0 + 0.5) : 0;

		all += used;
		/*
		 * pods with metrics but no pod object count as non-BE, like koordinator; so does
		 * a protected Mid+LS pod, which suppress never touches
		 */
		if (!sp->pod || !strat_pod_suppressed(in->cfg, sp->pod))
			non_be += used;
	}
	reserved = (int64_t)in->cfg->node_reserved_milli;
	if ((int64_t)cpumask_count(&in->cfg->reserved_cpus) * 1000 > reserved)
		reserved = (int64_t)cpumask_count(&in->cfg->reserved_cpus) * 1000;
	sys = max3((int64_t)(snap->node.cpu_cores_used * 1000.0 + 0.5) - all, 0, reserved);
	budget = cap * in->cfg->suppress_threshold_pct / 100 - non_be - sys;
	if (in->cfg->suppress_min_pct >= 0 && budget < cap * in->cfg->suppress_min_pct / 100)
		budget = cap * in->cfg->suppress_min_pct / 100;
	return budget;
}

unsigned int suppress_cpuset_count(int64_t budget_milli, unsigned int nr_cpus, unsigned int cur,
				   unsigned int avail)
{
	int64_t n = budget_milli > 0 ? (budget_milli + 999) / 1000 : 0;
	unsigned int step = (nr_cpus + 9) / 10; /* ceil(0.1 * #logical CPUs) */

	if (n < CPUSET_MIN_CPUS)
		n = CPUSET_MIN_CPUS;
	if (cur && n > (int64_t)(cur + step))
		n = cur + step;
	if (n > avail)
		n = avail;
	return (unsigned int)n;
}

struct cpu_ent {
	int cpu, core, socket, node;
};

static int ent_cmp(const void *a, const void *b)
{
	const struct cpu_ent *x = a, *y = b;

	if (x->node != y->node)
		return x->node - y->node;
	if (x->socket != y->socket)
		return x->socket - y->socket;
	if (x->core != y->core)
		return x->core - y->core;
	return x->cpu - y->cpu;
}

struct bucket {
	size_t start, len;
};

static int bucket_cmp_ents(const struct bucket *a, const struct bucket *b, const struct cpu_ent *e)
{
	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return e[a->start].cpu - e[b->start].cpu;
}

/* Buckets by (node, socket), largest first, then by first CPU (insertion sort: few buckets). */
static size_t make_buckets(const struct cpu_ent *e, size_t n, struct bucket *b)
{
	size_t nb = 0;

	for (size_t i = 0; i < n; i++) {
		if (!i || e[i].node != e[i - 1].node || e[i].socket != e[i - 1].socket)
			b[nb++] = (struct bucket){ .start = i };
		b[nb - 1].len++;
	}
	for (size_t i = 1; i < nb; i++)
		for (size_t j = i; j > 0 && bucket_cmp_ents(&b[j], &b[j - 1], e) < 0; j--) {
			struct bucket t = b[j];

			b[j] = b[j - 1];
			b[j - 1] = t;
		}
	return nb;
}

/* Take the first two adjacent remaining entries of a bucket that are HT siblings. */
static bool take_pair(const struct cpu_ent *e, const struct bucket *b, bool *taken,
		      struct cpumask *ret)
{
	size_t prev = SIZE_MAX;

	for (size_t i = b->start; i < b->start + b->len; i++) {
		if (taken[i])
			continue;
		if (prev != SIZE_MAX && e[prev].core == e[i].core) {
			taken[prev] = taken[i] = true;
			cpumask_set(ret, (unsigned int)e[prev].cpu);
			cpumask_set(ret, (unsigned int)e[i].cpu);
			return true;
		}
		prev = i;
	}
	return false;
}

static bool take_single(const struct cpu_ent *e, const struct bucket *b, bool *taken,
			struct cpumask *ret)
{
	for (size_t i = b->start; i < b->start + b->len; i++) {
		if (!taken[i]) {
			taken[i] = true;
			cpumask_set(ret, (unsigned int)e[i].cpu);
			return true;
		}
	}
	return false;
}

static void fill_ent(const struct topology *topo, int cpu, struct cpu_ent *e)
{
	const struct topo_cpu *tc = topo ? topology__cpu(topo, (unsigned int)cpu) : NULL;

	e->cpu = cpu;
	e->core = tc ? tc->core_id : cpu;
	e->socket = tc ? tc->socket_id : 0;
	e->node = tc ? tc->node_id : 0;
}

/* koordinator calculateBESuppressCPUSetPolicy over one list. */
static void pick_from(const struct topology *topo, const struct cpumask *list, unsigned int need,
		      struct cpumask *ret)
{
	struct cpu_ent e[CPUMASK_MAX_CPUS];
	struct bucket b[CPUMASK_MAX_CPUS];
	bool taken[CPUMASK_MAX_CPUS] = { false };
	size_t n = 0, nb;
	int cpu;
	bool progress;

	cpumask_for_each(cpu, list)
		fill_ent(topo, cpu, &e[n++]);
	qsort(e, n, sizeof(e[0]), ent_cmp);
	nb = make_buckets(e, n, b);
	for (progress = true; need >= 2 && progress;) {
		progress = false;
		for (size_t i = 0; i < nb && need >= 2; i++)
			if (take_pair(e, &b[i], taken, ret)) {
				need -= 2;
				progress = true;
			}
	}
	for (progress = true; need > 0 && progress;) {
		progress = false;
		for (size_t i = 0; i < nb && need > 0; i++)
			if (take_single(e, &b[i], taken, ret)) {
				need--;
				progress = true;
			}
	}
}

void suppress_pick_cpuset(const struct topology *topo, const struct cpumask *allowed,
			  const struct cpumask *lse, const struct cpumask *lsr, unsigned int n,
			  struct cpumask *ret)
{
	struct cpumask a, bl;
	unsigned int na, nbl, take_a;

	cpumask_zero(ret);
	cpumask_andnot(&a, allowed, lse);
	cpumask_andnot(&bl, &a, lsr);
	cpumask_and(&a, &a, lsr);
	na = cpumask_count(&a);
	nbl = cpumask_count(&bl);
	if (!na && !nbl)
		return;
	take_a = (unsigned int)((uint64_t)n * na / (na + nbl));
	pick_from(topo, &a, take_a, ret);
	pick_from(topo, &bl, n - take_a, ret);
}

int64_t suppress_cfs_quota(int64_t budget_milli, unsigned int nr_cpus, int64_t cur)
{
	int64_t q = budget_milli * CFS_PERIOD_US / 1000; /* budget_milli x 100 */
	int64_t full = (int64_t)nr_cpus * CFS_PERIOD_US;

	if (q < CFS_MIN_QUOTA_US)
		q = CFS_MIN_QUOTA_US;
	if (cur > 0) {
		/* 1 % dead band, except that the floor is always written */
		if (llabs(q - cur) < full / 100 && q != CFS_MIN_QUOTA_US)
			return cur;
		/* growth capped at 10 % of the node per round; shrinking is immediate */
		if (q > cur + full / 10)
			q = cur + full / 10;
	}
	return q;
}

/*
 * The levels of this tick. Going back to the dir (the Mid+LS pod left), one tick suppresses at
 * both: the actuator tightens children before parents, so the dir takes its quota while the
 * pods still hold theirs (each below it, as v1 requires), and the pods are let go only on the
 * next tick. Coming in, the dir is let go at once: its quota would refuse the Mid+LS pod's own
 * mid-cpu limit, and the pods' limits are written in the same pass.
 */
static void set_levels(struct suppress_state *st, struct be_targets *t)
{
	if (!t->k8s)
		return;
	t->at_pods = t->per_pod || st->per_pod;
	st->per_pod = t->per_pod;
}

/*
 * Quota -1 on the level a policy without quota suppresses: the besteffort dir (also when the
 * pods are the level: a BE pod's own quota stays extended_resource's), else each BE group.
 */
static int plan_no_quota(struct plan *p, const struct be_targets *t, const char *why)
{
	struct plan_value unlimited = { .quota_us = -1 };

	if (t->k8s)
		return plan_set(p, t->dir, PLAN_KNOB_CFS_QUOTA, &unlimited, "%s", why);
	return strat_plan_top(p, t, PLAN_KNOB_CFS_QUOTA, &unlimited, why);
}

/* @hold: no usage this tick, keep the last decision rather than let the knob be released */
static int decide_cpuset(struct suppress_state *st, const struct strategy_input *in,
			 const struct be_targets *t, int64_t budget, bool hold, struct plan *p,
			 struct strategy_report *rep)
{
	struct cpumask allowed, lse, lsr, full, cpus;
	char why[PLAN_WHY_MAX];
	unsigned int n;
	int err;

	strat_allowed(in, &allowed);
	strat_bound(in->snap, &lse, &lsr);
	cpumask_andnot(&full, &allowed, &lse);
	if (hold) {
		cpus = st->last_cpus;
		snprintf(why, sizeof(why), "suppress cpuset: no usage, hold %u cpus", st->cur_cpus);
	} else {
		n = suppress_cpuset_count(budget, in->snap->node.nr_cpus, st->cur_cpus,
					  cpumask_count(&full));
		suppress_pick_cpuset(in->snap->node.topo, &allowed, &lse, &lsr, n, &cpus);
		st->cur_cpus = cpumask_count(&cpus);
		st->last_cpus = cpus;
		snprintf(why, sizeof(why), "suppress cpuset: budget %lldm -> %u cpus",
			 (long long)budget, st->cur_cpus);
	}
	err = strat_plan_be_cpusets(p, in, t, in->cfg->kubelet_policy == KUBELET_CPU_STATIC, &cpus,
				    &full, why);
	if (!err)
		err = plan_no_quota(p, t, "suppress cpuset: no quota");
	rep->has_be_cpus = true;
	rep->be_cpus = cpus;
	return err;
}

/* Neutral cpusets (the full BE set) for every policy but cpuset. */
static int restore_cpusets(const struct strategy_input *in, const struct be_targets *t,
			   struct plan *p, const char *why)
{
	struct cpumask full;

	strat_be_full(in, &full);
	return strat_plan_be_cpusets(p, in, t, false, &full, &full, why);
}

/* A pod's weight in the quota split: its extended cpu request, else its usage (milli). */
static int64_t split_weight(const struct snap_pod *sp)
{
	int64_t w = pod__ext_cpu_request(sp->pod);

	if (w <= 0 && sp->st.has_cpu)
		w = (int64_t)(sp->st.cpu_cores * 1000.0 + 0.5);
	return w > 0 ? w : 0;
}

int64_t suppress_split_quota(int64_t total_us, int64_t weight, int64_t sum, size_t nr)
{
	int64_t q;

	if (!nr)
		return total_us;
	/* nothing to weigh by: equal shares */
	q = sum > 0 ? (int64_t)((double)total_us * (double)weight / (double)sum) :
		      total_us / (int64_t)nr;
	return q < CFS_MIN_QUOTA_US ? CFS_MIN_QUOTA_US : q;
}

/* The pod level of cfsQuota: each pod's part of the budget (bare-metal: all of it). */
static int plan_pod_quotas(const struct be_targets *t, int64_t total_us, struct plan *p)
{
	struct plan_value v = { .period_us = CFS_PERIOD_US };
	int64_t w[STRAT_MAX_BE_PODS], sum = 0;
	int err = 0;

	for (size_t i = 0; i < t->nr_pods; i++)
		sum += w[i] = split_weight(t->pods[i].sp);
	for (size_t i = 0; i < t->nr_pods && !err; i++) {
		v.quota_us = t->k8s ? suppress_split_quota(total_us, w[i], sum, t->nr_pods) :
				      total_us;
		err = plan_set(p, t->pods[i].cgroup, PLAN_KNOB_CFS_QUOTA, &v,
			       "suppress cfsQuota: %lld of %lld us", (long long)v.quota_us,
			       (long long)total_us);
	}
	return err;
}

static int decide_quota(struct suppress_state *st, const struct strategy_input *in,
			const struct be_targets *t, int64_t budget, bool hold, struct plan *p,
			struct strategy_report *rep)
{
	struct plan_value v = { .period_us = CFS_PERIOD_US };
	struct plan_value unlimited = { .quota_us = -1 };
	char why[PLAN_WHY_MAX];
	int err = 0;

	v.quota_us = hold ? st->cur_quota :
			    suppress_cfs_quota(budget, in->snap->node.nr_cpus, st->cur_quota);
	st->cur_quota = v.quota_us;
	snprintf(why, sizeof(why), "suppress cfsQuota: budget %lldm", (long long)budget);
	if (t->at_dir)
		err = plan_set(p, t->dir, PLAN_KNOB_CFS_QUOTA, &v, "%s", why);
	else if (t->k8s)
		err = plan_set(p, t->dir, PLAN_KNOB_CFS_QUOTA, &unlimited, "%s",
			       "suppress cfsQuota: per BE pod, dir unlimited");
	if (!err && t->at_pods)
		err = plan_pod_quotas(t, v.quota_us, p);
	if (!err)
		err = restore_cpusets(in, t, p, "suppress cfsQuota: full BE cpuset");
	rep->has_be_quota = true;
	rep->be_quota_us = v.quota_us;
	return err;
}

static int decide_weight_idle(const struct strategy_input *in, const struct be_targets *t,
			      struct plan *p)
{
	struct plan_value v = { .shares = in->cfg->be_shares, .idle = true };
	bool weight = in->cfg->suppress_policy == SUPPRESS_WEIGHT;
	int err;

	err = strat_plan_top(p, t, weight ? PLAN_KNOB_SHARES : PLAN_KNOB_IDLE, &v,
			     weight ? "suppress weight: low BE shares" :
				      "suppress idle: SCHED_IDLE");
	if (!err)
		err = plan_no_quota(p, t, "suppress: no quota");
	if (!err)
		err = restore_cpusets(in, t, p, "suppress: full BE cpuset");
	return err;
}

static int suppress_decide(void *state, const struct strategy_input *in, struct plan *p,
			   struct strategy_report *rep)
{
	struct suppress_state *st = state;
	struct be_targets *t = st->t;
	int64_t budget = 0;
	bool hold;

	if (st->policy != in->cfg->suppress_policy) {
		/* a new mechanism starts from scratch: no growth cap against the old one */
		st->policy = in->cfg->suppress_policy;
		st->cur_cpus = 0;
		st->cur_quota = -1;
	}
	strat_be_targets(in, t);
	set_levels(st, t);
	if (!strat_be_targets_any(t))
		return 0;
	if (st->policy == SUPPRESS_WEIGHT || st->policy == SUPPRESS_IDLE)
		return decide_weight_idle(in, t, p);
	/* without node usage there is no budget: hold the last decision, if any */
	hold = !in->snap->node.has_cpu_usage || !in->snap->node.nr_cpus;
	if (!hold)
		budget = suppress_be_budget_milli(in);
	if (st->policy == SUPPRESS_CFS_QUOTA)
		return hold && st->cur_quota <= 0 ? 0 :
						    decide_quota(st, in, t, budget, hold, p, rep);
	return hold && !st->cur_cpus ? 0 : decide_cpuset(st, in, t, budget, hold, p, rep);
}

static bool suppress_enabled(const struct slo_config *cfg)
{
	return cfg->suppress_enable;
}

static int suppress_init(const struct slo_config *cfg, void **ret)
{
	struct suppress_state *st = calloc(1, sizeof(*st));

	if (!st)
		return -ENOMEM;
	st->t = calloc(1, sizeof(*st->t));
	if (!st->t) {
		free(st);
		return -ENOMEM;
	}
	st->policy = cfg->suppress_policy;
	st->cur_quota = -1;
	*ret = st;
	return 0;
}

static void suppress_fini(void *state)
{
	struct suppress_state *st = state;

	if (!st)
		return;
	free(st->t);
	free(st);
}

const struct kqos_strategy cpu_suppress_strategy = {
	.name = "cpu_suppress",
	.desc = "BE CPU suppression from resourceUsedThresholdWithBE (cpuset, cfsQuota, weight, idle)",
	.prio = 30,
	.enabled = suppress_enabled,
	.init = suppress_init,
	.decide = suppress_decide,
	.fini = suppress_fini,
};
