// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_evict: koordlet's BECPUEvict (BE satisfaction) and CPUEvict (node usage), in that
 * order (koordinator.md §4.2), one cool-down (20 s) for both. Both read averages over
 * W = max(interval, cpuEvictTimeWindowSeconds) from the metric window, valid only when the
 * window is a third covered. BECPUEvict releases batch-cpu requests, CPUEvict CPU used; a
 * victim counts for both.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "strategy.h"

#define CPU_RELEASE_BUFFER_PCT 2
#define BE_USAGE_THRESHOLD_PCT 90
#define BE_SAT_LOWER_MAX_PCT   60
#define BE_SAT_UPPER_MAX_PCT   100
#define BIT(s)		       (1u << (s))
#define SEC_NS		       1000000000ULL

enum { TARGET_BATCH_REQUEST = 0, TARGET_CPU_USED = 1 };

struct cpu_state {
	bool has_last;
	uint64_t last_evict_ns;
};

static bool enabled(const struct slo_config *cfg)
{
	return cfg->suppress_enable &&
	       (cfg->evict.features & (BIT(POD_EVICT_BE_CPU) | BIT(POD_EVICT_CPU)));
}

static int init(const struct slo_config *cfg, void **ret_state)
{
	*ret_state = calloc(1, sizeof(struct cpu_state));
	return *ret_state ? 0 : -ENOMEM;
}

static void fini(void *state)
{
	free(state);
}

/* isSatisfactionConfigValid: both set, lower in (0, 60], upper in (0, 100), upper >= lower. */
bool cpu_evict_satisfaction_valid(const struct evict_config *ev)
{
	int lo = ev->be_sat_lower_pct, up = ev->be_sat_upper_pct;

	if (lo < 0 || up < 0)
		return false;
	return lo > 0 && lo <= BE_SAT_LOWER_MAX_PCT && up > 0 && up < BE_SAT_UPPER_MAX_PCT &&
	       up >= lo;
}

static uint64_t window_ns(const struct strategy_input *in)
{
	uint64_t iv = evict_interval_ns(in) / SEC_NS * SEC_NS; /* koordlet: whole seconds */
	uint64_t w = in->cfg->evict.window_s > 0 ? (uint64_t)in->cfg->evict.window_s * SEC_NS : 0;

	if (!iv)
		iv = SEC_NS;
	return w > iv ? w : iv;
}

/* isBECPUUsageHighEnough */
static bool be_usage_high(const struct evict_config *ev, double used, double limit)
{
	int thr = ev->be_usage_threshold_pct >= 0 ? ev->be_usage_threshold_pct :
						    BE_USAGE_THRESHOLD_PCT;

	if (limit <= 0)
		return false;
	if (limit < 1000)
		return true;
	return used / limit >= thr / 100.0;
}

/* calculateResourceMilliToReleaseBySatisfaction: request x (upper - limit/request). */
int64_t cpu_evict_satisfaction_release(const struct evict_config *ev, double request, double limit)
{
	double sat, gap;

	if (request <= 0)
		return 0;
	sat = limit / request;
	if (sat > ev->be_sat_lower_pct / 100.0)
		return 0;
	gap = ev->be_sat_upper_pct / 100.0 - sat;
	return gap > 0 ? (int64_t)(request * gap) : 0;
}

static int be_metrics(const struct strategy_input *in, bool avg, double *u, double *r, double *l)
{
	uint64_t w = window_ns(in);

	if (avg)
		return evict_avg(in, NULL, WIN_BE_CPU_USED, w, u)	     ?:
			       evict_avg(in, NULL, WIN_BE_CPU_REQUEST, w, r) ?:
			       evict_avg(in, NULL, WIN_BE_CPU_LIMIT, w, l);
	return evict_last(in, NULL, WIN_BE_CPU_USED, u)		   ?:
		       evict_last(in, NULL, WIN_BE_CPU_REQUEST, r) ?:
		       evict_last(in, NULL, WIN_BE_CPU_LIMIT, l);
}

/* calculateMilliReleaseByBESatisfaction: the smaller of the average's and the latest's. */
static double be_release(const struct strategy_input *in, char *why, size_t len)
{
	const struct evict_config *ev = &in->cfg->evict;
	double u, r, l, cu, cr, cl;
	int64_t rel, cur;

	/* evictByAllocatable needs the node's batch-cpu allocatable, which kqos does not have */
	if (!cpu_evict_satisfaction_valid(ev) || ev->cpu_policy != CPU_EVICT_BY_REAL_LIMIT)
		return 0;
	if (be_metrics(in, true, &u, &r, &l) || !be_usage_high(ev, u, l))
		return 0;
	rel = cpu_evict_satisfaction_release(ev, r, l);
	if (rel <= 0 || be_metrics(in, false, &cu, &cr, &cl) || !be_usage_high(ev, cu, cl))
		return 0;
	if (cr != r || cl != l) {
		cur = cpu_evict_satisfaction_release(ev, cr, cl);
		if (cur <= 0)
			return 0;
		rel = cur < rel ? cur : rel;
	}
	snprintf(why, len, "BE satisfaction %.0f%% <= %d%% (limit %.0fm, request %.0fm)",
		 r > 0 ? 100.0 * l / r : 0, ev->be_sat_lower_pct, l, r);
	return (double)rel;
}

/* calculateMilliReleaseByUsedThresholdPercent; isUsedThresholdConfigValid first. */
static double node_release(const struct strategy_input *in, char *why, size_t len)
{
	const struct evict_config *ev = &in->cfg->evict;
	int64_t cap = (int64_t)in->snap->node.nr_cpus * 1000, pct;
	int lower = ev->cpu_lower_pct >= 0 ? ev->cpu_lower_pct :
					     ev->cpu_threshold_pct - CPU_RELEASE_BUFFER_PCT;
	double used;

	if (ev->cpu_threshold_pct < 0 || lower >= ev->cpu_threshold_pct ||
	    !ev->has_priority_threshold || cap <= 0)
		return 0;
	if (evict_avg(in, NULL, WIN_CPU_CORES, window_ns(in), &used))
		return 0;
	pct = (int64_t)(used * 1000) * 100 / cap;
	if (pct < ev->cpu_threshold_pct)
		return 0;
	snprintf(why, len, "node cpu %lld%% >= %d%%, release to %d%%", (long long)pct,
		 ev->cpu_threshold_pct, lower);
	return (double)(cap * (pct - lower) / 100);
}

static int64_t batch_request(const struct pod *p)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_containers; i++)
		if (p->containers[i].requests.batch_cpu_milli > 0)
			sum += p->containers[i].requests.batch_cpu_milli;
	return sum;
}

static void fill(const struct strategy_input *in, const struct snap_pod *sp, double cores,
		 struct evict_victim *v)
{
	int64_t req = batch_request(sp->pod);
	double milli = (double)(int64_t)(cores * 1000);

	*v = (struct evict_victim){ .sp = sp,
				    .usage = milli,
				    .usage_ratio = req > 0 ? milli / (double)req : 0,
				    .release = { (double)req, milli },
				    .priority = pod__priority_value(sp->pod) };
	v->label_priority = sp->pod->evict.has_label_priority ? sp->pod->evict.label_priority :
								v->priority;
}

static size_t be_victims(const struct strategy_input *in, struct evict_victim *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->snap->nr_pods; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];
		double cores = 0;

		if (sp->pod->qos_raw != POD_QOS_BE || !sp->pod->is_active ||
		    !pod__evict_allowed(sp->pod, POD_EVICT_BE_CPU))
			continue;
		evict_last(in, sp->pod->uid, WIN_CPU_CORES, &cores);
		fill(in, sp, cores, &v[n++]);
	}
	evict_sort_be_cpu(v, n);
	return n;
}

static size_t prio_victims(const struct strategy_input *in, struct evict_victim *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->snap->nr_pods; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];
		const struct pod *p = sp->pod;
		double cores;

		if (!p->is_active || !pod__evict_allowed(p, POD_EVICT_CPU) ||
		    pod__priority_value(p) > in->cfg->evict.priority_threshold || !p->evict.enabled)
			continue;
		if (evict_last(in, p->uid, WIN_CPU_CORES, &cores))
			continue;
		fill(in, sp, cores, &v[n++]);
	}
	evict_sort_by_priority(v, n);
	return n;
}

static int decide(void *state, const struct strategy_input *in, struct plan *plan,
		  struct strategy_report *rep)
{
	const struct evict_config *ev = &in->cfg->evict;
	struct cpu_state *st = state;
	struct evict_task tasks[2];
	struct evict_victim *buf;
	size_t nt = 0, used = 0;

	if (!in->is_tick || !rep->evict)
		return 0;
	buf = calloc(2 * (in->snap->nr_pods + 1), sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	if (ev->features & BIT(POD_EVICT_BE_CPU)) {
		struct evict_task *t = &tasks[nt];

		*t = (struct evict_task){ .strategy = POD_EVICT_BE_CPU,
					  .target = TARGET_BATCH_REQUEST,
					  .victims = buf };
		t->amount = be_release(in, t->why, sizeof(t->why));
		if (t->amount > 0) {
			t->nr_victims = be_victims(in, buf);
			used = t->nr_victims;
			nt++;
		}
	}
	if (ev->features & BIT(POD_EVICT_CPU)) {
		struct evict_task *t = &tasks[nt];

		*t = (struct evict_task){ .strategy = POD_EVICT_CPU,
					  .target = TARGET_CPU_USED,
					  .victims = buf + used };
		t->amount = node_release(in, t->why, sizeof(t->why));
		if (t->amount > 0) {
			t->nr_victims = prio_victims(in, buf + used);
			nt++;
		}
	}
	for (size_t i = 0; i < nt; i++)
		rep->evict->pressure |= BIT(tasks[i].strategy);
	if (nt && (!st->has_last || in->now_ns >= st->last_evict_ns + ev->cpu_cool_ns)) {
		if (evict_run_tasks(tasks, nt, in->evicting, rep->evict)) {
			st->has_last = true;
			st->last_evict_ns = in->now_ns;
		}
	}
	free(buf);
	return 0;
}

const struct kqos_strategy cpu_evict_strategy = {
	.name = "cpu_evict",
	.desc = "BECPUEvict, CPUEvict: evict pods when BE is starved or node CPU is high",
	.prio = 8, /* plans nothing: between extended_resource and the guard in the table */
	.enabled = enabled,
	.history = true,
	.init = init,
	.decide = decide,
	.fini = fini,
};
