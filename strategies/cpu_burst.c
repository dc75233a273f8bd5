// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_burst: koordlet's CPUBurst plugin (koordinator.md §4.4). For LS and unlabelled pods with
 * a CPU limit: cpu.cfs_burst_us (v2 cpu.max.burst) from cpuBurstPercent, and the CFS quota
 * burst, which raises a throttled container's quota x1.2 per round up to cfsQuotaBurstPercent
 * of its limit and lowers it x0.8 while the share pool is overloaded or its token bucket is
 * empty. The kernel refuses a burst above the quota, so the burst is clamped to the limit's
 * quota (the floor of the quota burst), and the row keeps both values.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_burst.h"
#include "window.h"

#define PERIOD_US	   100000 /* kubelet's CFS period: koordlet's base quota assumes it */
#define SCALE_UP	   1.2
#define SCALE_DOWN	   0.8
#define COOLING_RATIO	   0.9
#define CONSUME_FROM	   100.0 /* usage % from which a bucket is spent */
#define REFILL_BELOW	   60.0 /* usage % under which a bucket refills */
#define POOL_WINDOW_MAX_NS (10ULL * 1000000000ULL)

/* What persists per container between ticks: the scaled quota and its bucket. */
struct burst_ctr {
	char cgroup[PLAN_CGROUP_MAX];
	int64_t quota_us;
	struct burst_bucket bucket;
	bool seen; /* in this tick's snapshot */
};

struct burst_state {
	struct burst_ctr *ctrs;
	size_t nr_ctrs, cap_ctrs;
	struct burst_row *rows;
	size_t nr_rows, cap_rows;
	char (*logged)[POD_UID_MAX]; /* pods whose clamp was logged */
	size_t nr_logged, cap_logged;
};

/* --- the pure formulas --------------------------------------------------------------------- */

void burst_config_merge(const struct burst_config *node, const struct pod_cpu_burst *ann,
			struct burst_config *ret)
{
	*ret = *node;
	/* an invalid annotation was logged by the pod parser; koordlet then uses the node's */
	if (!ann || ann->state != POD_ANN_OK)
		return;
	if (ann->policy != POD_BURST_UNSET)
		ret->policy = (int)ann->policy;
	if (ann->cpu_burst_pct != POD_BURST_UNSET)
		ret->cpu_burst_pct = ann->cpu_burst_pct;
	if (ann->cfs_quota_burst_pct != POD_BURST_UNSET)
		ret->cfs_quota_burst_pct = ann->cfs_quota_burst_pct;
	if (ann->cfs_quota_burst_period_s != POD_BURST_UNSET)
		ret->cfs_quota_burst_period_s = ann->cfs_quota_burst_period_s;
}

bool burst_cpu_enabled(int policy)
{
	return policy == POD_BURST_CPU_ONLY || policy == POD_BURST_AUTO;
}

bool burst_quota_enabled(int policy)
{
	return policy == POD_BURST_CFS_QUOTA_ONLY || policy == POD_BURST_AUTO;
}

uint64_t burst_asked_us(int64_t limit_milli, int64_t cpu_burst_pct)
{
	/* (milli / 1000) x (pct / 100) x 100000 us = milli x pct */
	if (limit_milli <= 0 || cpu_burst_pct <= 0)
		return 0;
	if (cpu_burst_pct > INT64_MAX / limit_milli)
		return UINT64_MAX;
	return (uint64_t)(limit_milli * cpu_burst_pct);
}

uint64_t burst_clamp_us(uint64_t asked_us, int64_t quota_us)
{
	if (quota_us < 0)
		return asked_us; /* no quota: the kernel has nothing to compare with */
	return asked_us > (uint64_t)quota_us ? (uint64_t)quota_us : asked_us;
}

enum burst_node_state burst_node_state(double used_cores, double total_cores, int64_t threshold_pct)
{
	double ratio = 1.0, thr = (double)threshold_pct / 100.0;

	/* no share pool left (LSE/LSR requests take every CPU) counts as full, as in koordlet */
	if (total_cores > 0)
		ratio = used_cores / total_cores;
	if (ratio >= thr)
		return BURST_NODE_OVERLOAD;
	if (ratio >= COOLING_RATIO * thr)
		return BURST_NODE_COOLING;
	return BURST_NODE_IDLE;
}

/* By the raw label, as koordlet: what may burst is what shares the pool. */
static bool shares_pool(const struct pod *pod)
{
	return pod->qos_raw != POD_QOS_LSE && pod->qos_raw != POD_QOS_LSR &&
	       pod->qos_raw != POD_QOS_BE;
}

static double requests_cores(const struct pod *pod)
{
	int64_t m = 0;

	for (size_t i = 0; i < pod->nr_containers; i++)
		if (pod->containers[i].requests.cpu_milli > 0)
			m += pod->containers[i].requests.cpu_milli;
	return (double)m / 1000.0;
}

/* koordlet's share-pool window: min(5 x interval, 10 s). */
static uint64_t pool_window_ns(const struct snapshot *snap)
{
	uint64_t w = (uint64_t)(5.0 * snap->interval_s * 1e9);

	return w && w < POOL_WINDOW_MAX_NS ? w : POOL_WINDOW_MAX_NS;
}

/*
 * The CPU of a pod, or of the node (@sp NULL), averaged over the share-pool window; without a
 * window (unit tests, --once), the snapshot's last interval. False when there is no figure.
 */
static bool usage_of(const struct strategy_input *in, const struct snap_pod *sp, double *ret)
{
	const struct snapshot *snap = in->snap;

	if (in->win)
		return !window__query(in->win, sp ? sp->pod->uid : NULL, WIN_CPU_CORES, WIN_AVG,
				      pool_window_ns(snap), snap->mono_ns, ret);
	*ret = sp ? sp->st.cpu_cores : snap->node.cpu_cores_used;
	return sp ? sp->st.has_cpu : snap->node.has_cpu_usage;
}

/*
 * total = CPUs - LSE/LSR requests, used = node used - LSE/LSR/BE usage, usages averaged over
 * the window as koordlet's metric cache query. Node usage with too few samples (under a third
 * of the window) is no figure: the state is unknown; a pod without one counts 0, as koordlet.
 */
bool burst_share_pool(const struct strategy_input *in, double *used, double *total)
{
	const struct snapshot *snap = in->snap;
	double excl_used = 0, excl_req = 0, node, u;

	if (!snap->node.nr_cpus || !usage_of(in, NULL, &node))
		return false;
	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];

		/* every pod the source lists, finished ones too, as koordlet's pod list */
		if (!sp->pod || shares_pool(sp->pod))
			continue;
		if (sp->pod->qos_raw != POD_QOS_BE)
			excl_req += requests_cores(sp->pod);
		if (usage_of(in, sp, &u))
			excl_used += u;
	}
	*total = (double)snap->node.nr_cpus - excl_req;
	*used = node - excl_used;
	if (*used < 0)
		*used = 0;
	return true;
}

int64_t burst_scale(int64_t cur_us, enum burst_op op, int64_t base_us, int64_t ceil_pct)
{
	double ceil = (double)base_us * (double)ceil_pct / 100.0, v = (double)cur_us;

	if (op == BURST_OP_UP)
		v *= SCALE_UP;
	else if (op == BURST_OP_DOWN)
		v *= SCALE_DOWN;
	if (v > ceil)
		v = ceil;
	if (v < (double)base_us)
		v = (double)base_us;
	return (int64_t)v;
}

enum burst_op burst_op_for(bool throttled, enum burst_node_state node, bool tokens_left)
{
	enum burst_op op = throttled ? BURST_OP_UP : BURST_OP_REMAIN;

	if (node == BURST_NODE_OVERLOAD)
		op = BURST_OP_DOWN;
	else if (op == BURST_OP_UP && node != BURST_NODE_IDLE)
		op = BURST_OP_REMAIN; /* cooling or unknown: hold */
	if (!tokens_left)
		op = BURST_OP_DOWN;
	return op;
}

bool burst_bucket_update(struct burst_bucket *b, int64_t period_s, int64_t quota_pct,
			 double usage_pct, uint64_t now_ns, double init_ratio)
{
	double cap = (double)period_s * (double)(quota_pct - 100), dt = 0;
	uint64_t expire_ns = 2ULL * (uint64_t)(period_s > 0 ? period_s : 0) * 1000000000ULL;

	/* a new limiter, a changed capacity or one idle for 2 periods starts part full */
	if (!b->started || b->capacity != cap || now_ns - b->last_ns > expire_ns)
		*b = (struct burst_bucket){ .started = true,
					    .tokens = cap * init_ratio,
					    .capacity = cap,
					    .last_ns = now_ns };
	dt = (double)(now_ns - b->last_ns) / 1e9;
	b->last_ns = now_ns;
	usage_pct = (double)(int64_t)usage_pct; /* koordlet passes a whole percent */
	if (usage_pct >= CONSUME_FROM)
		b->tokens -= (usage_pct - 100.0) * dt;
	else if (usage_pct < REFILL_BELOW)
		b->tokens += (100.0 - usage_pct) * dt;
	if (b->tokens > cap)
		b->tokens = cap;
	if (b->tokens < -cap)
		b->tokens = -cap;
	return b->tokens > 0;
}

/*
 * koordlet starts a bucket at a random [0, 0.5) of its capacity so that containers do not
 * drain in step; a hash of the cgroup gives the same spread and keeps decide() pure.
 */
double burst_bucket_init_ratio(const char *cgroup)
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *c = cgroup; *c; c++)
		h = (h ^ (unsigned char)*c) * 1099511628211ULL;
	return (double)(h % 1000) / 2000.0;
}

/* --- state --------------------------------------------------------------------------------- */

static int grow(void **arr, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap * 2 : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	p = realloc(*arr, n * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = n;
	return 0;
}

static struct burst_ctr *ctr_get(struct burst_state *s, const char *cgroup, int64_t base_us)
{
	struct burst_ctr *c;

	for (size_t i = 0; i < s->nr_ctrs; i++)
		if (!strcmp(s->ctrs[i].cgroup, cgroup))
			return &s->ctrs[i];
	if (grow((void **)&s->ctrs, &s->cap_ctrs, s->nr_ctrs + 1, sizeof(*s->ctrs)))
		return NULL;
	c = &s->ctrs[s->nr_ctrs++];
	memset(c, 0, sizeof(*c));
	snprintf(c->cgroup, sizeof(c->cgroup), "%s", cgroup);
	c->quota_us = base_us;
	return c;
}

/* Containers gone from the snapshot (or out of the quota burst) lose their quota and bucket. */
static void ctr_prune(struct burst_state *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nr_ctrs; i++) {
		if (!s->ctrs[i].seen)
			continue;
		s->ctrs[k] = s->ctrs[i];
		s->ctrs[k++].seen = false;
	}
	s->nr_ctrs = k;
}

static bool logged_has(const struct burst_state *s, const char *uid)
{
	for (size_t i = 0; i < s->nr_logged; i++)
		if (!strcmp(s->logged[i], uid))
			return true;
	return false;
}

/* Log once per pod: true the first time this pod's burst is clamped. */
static bool logged_add(struct burst_state *s, const char *uid)
{
	if (logged_has(s, uid))
		return false;
	if (grow((void **)&s->logged, &s->cap_logged, s->nr_logged + 1, sizeof(*s->logged)))
		return false;
	snprintf(s->logged[s->nr_logged++], POD_UID_MAX, "%s", uid);
	return true;
}

/* Pods gone from the snapshot are forgotten, so one that comes back is logged again. */
static void logged_prune(struct burst_state *s, const struct snapshot *snap)
{
	size_t k = 0;

	for (size_t i = 0; i < s->nr_logged; i++)
		if (snapshot__pod(snap, s->logged[i]))
			memmove(s->logged[k++], s->logged[i], POD_UID_MAX);
	s->nr_logged = k;
}

static struct burst_row *row_new(struct burst_state *s)
{
	if (grow((void **)&s->rows, &s->cap_rows, s->nr_rows + 1, sizeof(*s->rows)))
		return NULL;
	memset(&s->rows[s->nr_rows], 0, sizeof(s->rows[0]));
	return &s->rows[s->nr_rows++];
}

/* --- decide -------------------------------------------------------------------------------- */

/* Not labelled LSE, LSR or BE (so LS, SYSTEM, unlabelled), Pending or Running, a cgroup. */
static bool eligible(const struct snap_pod *sp)
{
	const struct pod *pod = sp->pod;

	if (!pod || !sp->cgroup || pod->is_static)
		return false;
	if (pod->phase != POD_PHASE_PENDING && pod->phase != POD_PHASE_RUNNING)
		return false;
	return shares_pool(pod);
}

struct pod_sums {
	uint64_t burst_us;
	int64_t base_us, delta_us; /* base -1: some container has no limit, pod quota untouched */
	bool quota;
};

static int plan_quota(struct burst_state *s, const struct strategy_input *in,
		      const struct burst_config *bc, const struct snap_container *sc,
		      int64_t base_us, enum burst_node_state node, struct plan *p, int64_t *ret)
{
	const struct snap_stats *st = &sc->st;
	struct burst_ctr *c = ctr_get(s, sc->cgroup, base_us);
	/* no usage figure counts as using the limit, as in koordlet */
	double usage_pct = st->has_cpu ? st->cpu_cores * PERIOD_US * 100.0 / (double)base_us : 100;
	bool tokens = true;
	char why[PLAN_WHY_MAX];
	enum burst_op op;

	if (!c)
		return -ENOMEM;
	c->seen = true;
	if (bc->cfs_quota_burst_period_s >= 0)
		tokens = burst_bucket_update(&c->bucket, bc->cfs_quota_burst_period_s,
					     bc->cfs_quota_burst_pct, usage_pct, in->now_ns,
					     burst_bucket_init_ratio(sc->cgroup));
	else
		c->bucket.started = false;
	op = burst_op_for(st->has_throttle && st->throttled_ratio > 0, node, tokens);
	c->quota_us = burst_scale(c->quota_us, op, base_us, bc->cfs_quota_burst_pct);
	*ret = c->quota_us;
	snprintf(why, sizeof(why), "cpu burst: quota %s, base %lld x%lld%%",
		 op == BURST_OP_UP   ? "up" :
		 op == BURST_OP_DOWN ? "down" :
				       "held",
		 (long long)base_us, (long long)bc->cfs_quota_burst_pct);
	return plan_set_quota(p, sc->cgroup, c->quota_us, why);
}

static int plan_container(struct burst_state *s, const struct strategy_input *in,
			  const struct snap_pod *sp, const struct snap_container *sc,
			  const struct burst_config *bc, enum burst_node_state node, struct plan *p,
			  struct pod_sums *sum)
{
	int64_t limit = sc->spec->limits.cpu_milli, base = limit * (PERIOD_US / 1000);
	struct burst_row *r = row_new(s);
	char why[PLAN_WHY_MAX];
	int err = 0;

	if (!r)
		return -ENOMEM;
	snprintf(r->pod_uid, sizeof(r->pod_uid), "%s", sp->pod->uid);
	snprintf(r->pod, sizeof(r->pod), "%s", sp->pod->name ? sp->pod->name : "");
	snprintf(r->ns, sizeof(r->ns), "%s", sp->pod->namespace ? sp->pod->namespace : "");
	snprintf(r->container, sizeof(r->container), "%s", sc->name);
	r->base_quota_us = base;
	r->quota_us = -1;
	if (burst_cpu_enabled(bc->policy))
		r->asked_us = burst_asked_us(limit, bc->cpu_burst_pct);
	/* the quota burst never goes below the base, so a burst within it always fits */
	r->burst_us = burst_clamp_us(r->asked_us, base);
	if (r->burst_us < r->asked_us && logged_add(s, sp->pod->uid))
		r->clamp_new = true;
	snprintf(why, sizeof(why), "cpu burst: %lld%% of %lldm, at most the quota",
		 (long long)bc->cpu_burst_pct, (long long)limit);
	err = plan_set_burst(p, sc->cgroup, r->burst_us, why);
	sum->burst_us += r->burst_us;
	if (!err && burst_quota_enabled(bc->policy)) {
		err = plan_quota(s, in, bc, sc, base, node, p, &r->quota_us);
		sum->quota = true;
		sum->delta_us += r->quota_us - base;
	}
	if (sum->base_us >= 0)
		sum->base_us += base;
	return err;
}

/* The pod dir carries the sum of its containers' bursts and their quota deltas. */
static int plan_pod_level(const struct snap_pod *sp, const struct pod_sums *sum, struct plan *p)
{
	int err;

	err = plan_set_burst(p, sp->cgroup, burst_clamp_us(sum->burst_us, sum->base_us),
			     "cpu burst: sum of the containers");
	if (err || !sum->quota || sum->base_us < 0)
		return err;
	return plan_set_quota(p, sp->cgroup, sum->base_us + sum->delta_us,
			      "cpu burst: pod quota by the containers' delta");
}

static int plan_pod(struct burst_state *s, const struct strategy_input *in,
		    const struct snap_pod *sp, enum burst_node_state node, struct plan *p)
{
	struct pod_sums sum = { 0 };
	struct burst_config bc;
	size_t planned = 0;
	int err = 0;

	burst_config_merge(&in->cfg->burst, &sp->pod->cpu_burst, &bc);
	if (!burst_cpu_enabled(bc.policy) && !burst_quota_enabled(bc.policy))
		return 0; /* unplanned knobs go back to kubelet's values: koordlet's reset */
	for (size_t i = 0; i < sp->pod->nr_containers; i++)
		if (sp->pod->containers[i].limits.cpu_milli <= 0)
			sum.base_us = -1;
	for (size_t c = 0; c < sp->nr_ctrs && !err; c++) {
		const struct snap_container *sc = &sp->ctrs[c];

		if (!sc->cgroup || !sc->spec || sc->spec->limits.cpu_milli <= 0)
			continue;
		err = plan_container(s, in, sp, sc, &bc, node, p, &sum);
		planned++;
	}
	if (err || !planned)
		return err;
	return plan_pod_level(sp, &sum, p);
}

static int burst_decide(void *state, const struct strategy_input *in, struct plan *p,
			struct strategy_report *rep)
{
	struct burst_state *s = state;
	struct burst_report *br = &rep->burst;
	int err = 0;

	s->nr_rows = 0;
	*br = (struct burst_report){ .enabled = true };
	if (burst_share_pool(in, &br->share_pool_used, &br->share_pool_total))
		br->node = burst_node_state(br->share_pool_used, br->share_pool_total,
					    in->cfg->burst.share_pool_threshold_pct);
	for (size_t i = 0; i < in->snap->nr_pods && !err; i++)
		if (eligible(&in->snap->pods[i]))
			err = plan_pod(s, in, &in->snap->pods[i], br->node, p);
	ctr_prune(s);
	logged_prune(s, in->snap);
	br->rows = s->rows;
	br->nr_rows = s->nr_rows;
	return err;
}

static int burst_init(const struct slo_config *cfg, void **ret_state)
{
	*ret_state = calloc(1, sizeof(struct burst_state));
	return *ret_state ? 0 : -ENOMEM;
}

static void burst_fini(void *state)
{
	struct burst_state *s = state;

	if (!s)
		return;
	free(s->ctrs);
	free(s->rows);
	free(s->logged);
	free(s);
}

/*
 * As koordlet: on whenever the spec has a cpuBurstStrategy (koord-manager's NodeSLO always
 * does), so that a pod's koordinator.sh/cpuBurst can turn burst on under a node policy none;
 * without one, nothing is read, annotations included.
 */
static bool burst_enabled(const struct slo_config *cfg)
{
	return cfg->burst.configured;
}

const struct kqos_strategy cpu_burst_strategy = {
	.name = "cpu_burst",
	.desc = "LS pods' cfs burst from the limit, and their quota scaled while throttled",
	.prio = 9, /* below extended_resource (a Mid+LS pod's mid quota is its), above the rest */
	.enabled = burst_enabled,
	.history = true,
	.init = burst_init,
	.decide = burst_decide,
	.fini = burst_fini,
};
