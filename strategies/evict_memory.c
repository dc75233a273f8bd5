// SPDX-License-Identifier: GPL-2.0
/*
 * memory_evict: koordlet's BEMemoryEvict and MemoryEvict (koordinator.md §4.3), in that
 * order, one cool-down (4 s) for both. Node usage% = floor(used x 100 / capacity) from the
 * last sample; at or above memoryEvictThresholdPercent, release capacity x (usage% - lower%)
 * / 100 bytes, lower = memoryEvictLowerPercent or threshold - 2. Each victim releases the
 * memory it uses.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "strategy.h"

#define MEMORY_RELEASE_BUFFER_PCT 2
#define BIT(s)			  (1u << (s))

struct memory_state {
	bool has_last;
	uint64_t last_evict_ns;
};

static bool enabled(const struct slo_config *cfg)
{
	return cfg->suppress_enable &&
	       (cfg->evict.features & (BIT(POD_EVICT_BE_MEMORY) | BIT(POD_EVICT_MEMORY)));
}

static int init(const struct slo_config *cfg, void **ret_state)
{
	*ret_state = calloc(1, sizeof(struct memory_state));
	return *ret_state ? 0 : -ENOMEM;
}

static void fini(void *state)
{
	free(state);
}

static int lower_pct(const struct evict_config *ev)
{
	return ev->memory_lower_pct >= 0 ? ev->memory_lower_pct :
					   ev->memory_threshold_pct - MEMORY_RELEASE_BUFFER_PCT;
}

/* calculateReleaseByUsedThresholdPercent: bytes to release, 0 below the threshold. */
static double release_bytes(const struct strategy_input *in, char *why, size_t len)
{
	const struct evict_config *ev = &in->cfg->evict;
	int64_t cap = (int64_t)in->snap->node.mem_total_bytes, pct;
	double used;

	if (cap <= 0 || lower_pct(ev) >= ev->memory_threshold_pct ||
	    evict_last(in, NULL, WIN_MEM_USED, &used))
		return 0;
	pct = (int64_t)used * 100 / cap;
	if (pct < ev->memory_threshold_pct)
		return 0;
	snprintf(why, len, "node memory %lld%% >= %d%%, release to %d%%", (long long)pct,
		 ev->memory_threshold_pct, lower_pct(ev));
	return (double)(cap * (pct - lower_pct(ev)) / 100);
}

static size_t be_victims(const struct strategy_input *in, struct evict_victim *v)
{
	size_t n = 0;

	for (size_t i = 0; i < in->snap->nr_pods; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];
		double used = 0;

		if (sp->pod->qos_raw != POD_QOS_BE || !sp->pod->is_active ||
		    !pod__evict_allowed(sp->pod, POD_EVICT_BE_MEMORY))
			continue;
		evict_last(in, sp->pod->uid, WIN_MEM_USED, &used); /* none: 0, sorted last */
		v[n++] = (struct evict_victim){ .sp = sp, .usage = used, .release = { used, 0 } };
	}
	evict_sort_be_memory(v, n);
	return n;
}

/* getPodEvictInfoAndSortByPriority: active, allowed, priority <= threshold, eviction-enabled. */
static size_t prio_victims(const struct strategy_input *in, struct evict_victim *v)
{
	const struct evict_config *ev = &in->cfg->evict;
	size_t n = 0;

	for (size_t i = 0; i < in->snap->nr_pods; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];
		const struct pod *p = sp->pod;
		int32_t prio = pod__priority_value(p);
		double used;

		if (!p->is_active || !pod__evict_allowed(p, POD_EVICT_MEMORY) ||
		    prio > ev->priority_threshold || !p->evict.enabled)
			continue;
		if (evict_last(in, p->uid, WIN_MEM_USED, &used))
			continue; /* no metrics: koordlet skips the pod */
		v[n++] = (struct evict_victim){
			.sp = sp,
			.usage = used,
			.release = { used, 0 },
			.priority = prio,
			.label_priority = p->evict.has_label_priority ? p->evict.label_priority :
									prio,
		};
	}
	evict_sort_by_priority(v, n);
	return n;
}

static int decide(void *state, const struct strategy_input *in, struct plan *plan,
		  struct strategy_report *rep)
{
	const struct evict_config *ev = &in->cfg->evict;
	struct memory_state *st = state;
	struct evict_task tasks[2];
	struct evict_victim *buf;
	size_t nt = 0, used = 0;
	double amount;
	char why[96];

	if (!in->is_tick || !rep->evict)
		return 0;
	amount = release_bytes(in, why, sizeof(why));
	if (amount <= 0)
		return 0;
	buf = calloc(2 * (in->snap->nr_pods + 1), sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	if (ev->features & BIT(POD_EVICT_BE_MEMORY)) {
		tasks[nt] = (struct evict_task){ .strategy = POD_EVICT_BE_MEMORY,
						 .amount = amount,
						 .victims = buf };
		tasks[nt].nr_victims = be_victims(in, buf);
		used = tasks[nt++].nr_victims;
	}
	/* MemoryEvict needs evictEnabledPriorityThreshold (generateConfigCheck) */
	if ((ev->features & BIT(POD_EVICT_MEMORY)) && ev->has_priority_threshold) {
		tasks[nt] = (struct evict_task){ .strategy = POD_EVICT_MEMORY,
						 .amount = amount,
						 .victims = buf + used };
		tasks[nt].nr_victims = prio_victims(in, buf + used);
		nt++;
	}
	for (size_t i = 0; i < nt; i++) {
		snprintf(tasks[i].why, sizeof(tasks[i].why), "%s", why);
		rep->evict->pressure |= BIT(tasks[i].strategy);
	}
	/* the cool-down starts at an eviction and holds back the next, not the pressure */
	if (!st->has_last || in->now_ns >= st->last_evict_ns + ev->memory_cool_ns) {
		if (evict_run_tasks(tasks, nt, in->evicting, rep->evict)) {
			st->has_last = true;
			st->last_evict_ns = in->now_ns;
		}
	}
	free(buf);
	return 0;
}

const struct kqos_strategy memory_evict_strategy = {
	.name = "memory_evict",
	.desc = "BEMemoryEvict, MemoryEvict: evict pods when node memory passes the threshold",
	.prio = 7, /* plans nothing */
	.enabled = enabled,
	.history = true,
	.pod_memory = true,
	.init = init,
	.decide = decide,
	.fini = fini,
};
