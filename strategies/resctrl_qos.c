// SPDX-License-Identifier: GPL-2.0
/*
 * resctrl_qos: koordinator's resctrl reconcile (koordinator.md §4.5) and its pod-level
 * annotation (§7.1). Class groups kqos-LSR (LSE and LSR pods), kqos-LS and kqos-BE exist only
 * for enabled classes, each with its class's way range and bandwidth on every cache id. A pod
 * with a valid node.koordinator.sh/resctrl annotation gets kqos-pod-<uid>, whose per-cache
 * entries override its all-cache value; when that group cannot be had (out of CLOSIDs) the
 * actuator puts the pod's tasks in the fallback, its class group. Percentages become schemata
 * in the actuator, with the library's formulas (rdt_plan.h).
 */
#include <stdio.h>
#include <string.h>

#include "strategy.h"

static bool enabled(const struct slo_config *cfg)
{
	return slo_rdt_enabled(cfg) || cfg->rdt_pod_level;
}

/* koordinator's class group of a pod: LSR for LSE and LSR, else its defaulted class. */
static int class_of(enum pod_qos q)
{
	switch (q) {
	case POD_QOS_LSE:
	case POD_QOS_LSR:
		return RDT_CLASS_LSR;
	case POD_QOS_LS:
		return RDT_CLASS_LS;
	case POD_QOS_BE:
		return RDT_CLASS_BE;
	default:
		return -1;
	}
}

static int add_classes(const struct slo_config *cfg, struct plan *plan, int idx[RDT_CLASS_NR])
{
	for (int c = 0; c < RDT_CLASS_NR; c++) {
		const struct rdt_class_config *rc = &cfg->rdt[c];
		struct plan_rdt_group g = { .fallback = PLAN_RDT_NO_GROUP,
					    .strategy = plan->strategy };
		unsigned int i;
		int err;

		idx[c] = -1;
		if (!rc->enable)
			continue;
		snprintf(g.name, sizeof(g.name), "%s", rdt_class_name(c));
		g.has_l3 = true;
		g.nr_l3 = 1;
		g.l3[0] = (struct plan_rdt_l3){ -1, rc->cat_start_pct, rc->cat_end_pct };
		g.has_mb = true;
		g.nr_mb = 1;
		g.mb[0] = (struct plan_rdt_mb){ -1, rc->mba_pct };
		snprintf(g.why, sizeof(g.why), "class %.8s: L3 %u-%u%% MB %u%%", g.name,
			 rc->cat_start_pct, rc->cat_end_pct, rc->mba_pct);
		err = plan_rdt_add_group(&plan->rdt, &g, &i);
		if (err)
			return err;
		idx[c] = (int)i;
	}
	return 0;
}

/* The annotation as percent lines: the all-cache value first, then per-cache overrides. */
static void pod_alloc(const struct pod_resctrl *rc, struct plan_rdt_group *g)
{
	if (rc->has_llc)
		g->l3[g->nr_l3++] = (struct plan_rdt_l3){ -1, rc->llc.start_pct, rc->llc.end_pct };
	for (size_t i = 0; i < rc->nr_llc_per_cache && g->nr_l3 <= PLAN_RDT_PER_CACHE; i++)
		g->l3[g->nr_l3++] = (struct plan_rdt_l3){ rc->llc_per_cache[i].cache_id,
							  rc->llc_per_cache[i].start_pct,
							  rc->llc_per_cache[i].end_pct };
	if (rc->has_mb)
		g->mb[g->nr_mb++] = (struct plan_rdt_mb){ -1, rc->mb.pct };
	for (size_t i = 0; i < rc->nr_mb_per_cache && g->nr_mb <= PLAN_RDT_PER_CACHE; i++)
		g->mb[g->nr_mb++] = (struct plan_rdt_mb){ rc->mb_per_cache[i].cache_id,
							  rc->mb_per_cache[i].pct };
	g->has_l3 = g->nr_l3 > 0;
	g->has_mb = g->nr_mb > 0;
}

static int add_pod_group(const struct snap_pod *sp, int cls, const int idx[RDT_CLASS_NR],
			 struct plan *plan, unsigned int *ret)
{
	struct plan_rdt_group g = { .strategy = plan->strategy };

	snprintf(g.name, sizeof(g.name), "pod-%s", sp->pod->uid);
	snprintf(g.pod_uid, sizeof(g.pod_uid), "%s", sp->pod->uid);
	g.fallback = cls >= 0 ? idx[cls] : PLAN_RDT_NO_GROUP;
	pod_alloc(&sp->pod->resctrl, &g);
	snprintf(g.why, sizeof(g.why), "pod %.40s/%.40s: node.koordinator.sh/resctrl",
		 sp->pod->namespace ? sp->pod->namespace : "", sp->pod->name ? sp->pod->name : "");
	return plan_rdt_add_group(&plan->rdt, &g, ret);
}

static bool seen(const struct snap_pod *sp, uint64_t id)
{
	if (id == sp->cgid)
		return true;
	for (size_t c = 0; c < sp->nr_ctrs; c++)
		if (sp->ctrs[c].cgid == id)
			return true;
	return false;
}

/* Every cgroup of the pod: its own, its containers' (by path), and those charged to it (by id). */
static int add_members(const struct snap_pod *sp, unsigned int group, struct plan *plan)
{
	int err = 0;

	if (sp->cgroup)
		err = plan_rdt_add_member(&plan->rdt, sp->cgroup, sp->cgid, group);
	for (size_t c = 0; !err && c < sp->nr_ctrs; c++)
		if (sp->ctrs[c].cgroup)
			err = plan_rdt_add_member(&plan->rdt, sp->ctrs[c].cgroup, sp->ctrs[c].cgid,
						  group);
	for (size_t c = 0; !err && c < sp->nr_cgids; c++)
		if (!seen(sp, sp->cgids[c]))
			err = plan_rdt_add_member(&plan->rdt, NULL, sp->cgids[c], group);
	return err;
}

static int place_pod(const struct slo_config *cfg, const struct snap_pod *sp,
		     const int idx[RDT_CLASS_NR], struct plan *plan)
{
	int cls = class_of(sp->pod->qos);
	unsigned int g;
	size_t from;
	int err;

	/* koordinator: an annotated pod is left to its own group, never the class reconcile */
	if (cfg->rdt_pod_level && sp->pod->resctrl.state == POD_ANN_OK) {
		err = add_pod_group(sp, cls, idx, plan, &g);
		return err ? err : add_members(sp, g, plan);
	}
	if (cls < 0 || idx[cls] < 0)
		return 0;
	from = plan->rdt.nr_members;
	err = add_members(sp, (unsigned int)idx[cls], plan);
	/* LS pods sharing a class group: a monitoring group each, for per-pod figures */
	if (!err && cfg->rdt_pod_monitor && cls != RDT_CLASS_BE) {
		char mon[PLAN_RDT_NAME_MAX];

		snprintf(mon, sizeof(mon), "pod-%s", sp->pod->uid);
		plan_rdt_set_mon(&plan->rdt, from, mon);
	}
	return err;
}

static int decide(void *state, const struct strategy_input *in, struct plan *plan,
		  struct strategy_report *rep)
{
	const struct snapshot *s = in->snap;
	int idx[RDT_CLASS_NR];
	int err;

	(void)state;
	(void)rep;
	if (!in->is_tick || !s->rdt_enabled)
		return 0;
	plan->rdt.is_on = true;
	err = add_classes(in->cfg, plan, idx);
	for (size_t i = 0; !err && i < s->nr_pods; i++)
		if (s->pods[i].pod && s->pods[i].pod->is_active)
			err = place_pod(in->cfg, &s->pods[i], idx, plan);
	return err;
}

const struct kqos_strategy resctrl_qos_strategy = {
	.name = "resctrl_qos",
	.desc = "LLC ways and memory bandwidth per class (kqos-LSR/LS/BE) and per annotated pod",
	.prio = 4, /* no cgroup knob, so no contest: after the guard (5), which tightens knobs only */
	.enabled = enabled,
	.decide = decide,
};
