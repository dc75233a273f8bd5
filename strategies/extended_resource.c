// SPDX-License-Identifier: GPL-2.0
/*
 * extended_resource: koordinator's batchresource hook (koordinator.md §3.2) in reconciler
 * mode, for every tier of extended resources koordinator's webhook writes in place of a pod's
 * native cpu/memory. A tier is a row of the table below: which pods it takes and which
 * resource names it reads. One code path turns a tier's requests and limits into cpu.shares
 * (v2 weight), cfs quota and memory limit at pod and container level:
 *   batch: kubernetes.io/batch-cpu, batch-memory of BE-labelled pods (koordinator's hook);
 *   mid:   kubernetes.io/mid-cpu, mid-memory of koord-mid pods (proposal PR #1762's intent,
 *          which koordinator never implemented: its Mid pods keep kubelet's BestEffort
 *          defaults).
 */
#include <math.h>
#include <stdio.h>

#include "common.h"
#include "extended_resource.h"

#define SHARES_MIN 2
#define SHARES_MAX 262144
#define QUOTA_MIN  1000

uint64_t ext_milli_to_shares(int64_t milli)
{
	int64_t s;

	if (milli <= 0)
		return SHARES_MIN;
	s = milli * 1024 / 1000;
	return s < SHARES_MIN ? SHARES_MIN : s > SHARES_MAX ? SHARES_MAX : (uint64_t)s;
}

int64_t ext_milli_to_quota(int64_t milli)
{
	int64_t q = milli > 0 ? milli * 100000 / 1000 : 0;

	if (q <= 0)
		return -1;
	return q < QUOTA_MIN ? QUOTA_MIN : q;
}

struct tier {
	const char *why_pod, *why_ctr;
	enum pod_tier res; /* which names it reads */
	bool (*takes)(const struct pod *pod);
	bool (*enabled)(const struct slo_config *cfg);
};

static bool takes_batch(const struct pod *pod)
{
	/* koordinator's hook: only pods labelled BE, whatever their priority */
	return pod->qos_raw == POD_QOS_BE;
}

static bool takes_mid(const struct pod *pod)
{
	struct pod_pq pq = pod__pq(pod);

	return pq.is_valid && pq.prio == POD_PRIO_MID;
}

static bool batch_on(const struct slo_config *cfg)
{
	return cfg->batch_resource_enable;
}

static bool mid_on(const struct slo_config *cfg)
{
	return cfg->mid_resource_enable;
}

/*
 * Mid first: a koord-mid/BE pod is also labelled BE, and if it carries both names its own
 * tier's values win the tie (the first writer keeps a knob).
 */
static const struct tier tiers[] = {
	{ "mid resources: pod", "mid resources: container", POD_TIER_MID, takes_mid, mid_on },
	{ "batch resources: pod", "batch resources: container", POD_TIER_BATCH, takes_batch,
	  batch_on },
};

static int64_t quota_of(const struct strategy_input *in, const struct pod *pod, int64_t milli)
{
	int64_t q = ext_milli_to_quota(milli);
	double r = in->cfg->cpu_normalization_ratio;

	/* the besteffort parent's (or the pod's own) suppress quota limits a suppressed pod */
	if (strat_pod_cfs_suppressed(in->cfg, pod))
		return -1;
	if (q > 0 && r > 1.0)
		q = (int64_t)ceil((double)q / r);
	return q;
}

static int plan_level(struct plan *p, const struct strategy_input *in, const struct pod *pod,
		      const char *cg, uint64_t shares, int64_t quota_milli, int64_t mem,
		      const char *why)
{
	int err;

	err = plan_set_shares(p, cg, shares, why);
	if (!err)
		err = plan_set_quota(p, cg, quota_of(in, pod, quota_milli), why);
	if (!err)
		err = plan_set_memory(p, cg, mem > 0 ? (uint64_t)mem : UINT64_MAX, why);
	return err;
}

/* The pod level from koordinator's sums (-1 where a container has no limit), then each container. */
static int plan_pod(const struct tier *t, struct plan *p, const struct strategy_input *in,
		    const struct snap_pod *sp)
{
	const struct pod *pod = sp->pod;
	struct pod_tier_res r;
	int err = 0;

	if (!pod__tier_sum(pod, t->res, &r))
		return 0; /* nothing happens without the tier's resources */
	err = plan_level(p, in, pod, sp->cgroup, ext_milli_to_shares(r.req_cpu_milli),
			 r.lim_cpu_milli, r.lim_memory_bytes, t->why_pod);
	for (size_t c = 0; c < sp->nr_ctrs && !err; c++) {
		const struct snap_container *sc = &sp->ctrs[c];

		if (!sc->cgroup || !sc->spec)
			continue;
		pod__ctr_tier(pod, sc->spec, t->res, &r);
		err = plan_level(p, in, pod, sc->cgroup, ext_milli_to_shares(r.req_cpu_milli),
				 r.lim_cpu_milli, r.lim_memory_bytes, t->why_ctr);
	}
	return err;
}

static int ext_decide(void *state, const struct strategy_input *in, struct plan *p,
		      struct strategy_report *rep)
{
	int err = 0;

	for (size_t k = 0; k < sizeof(tiers) / sizeof(tiers[0]) && !err; k++) {
		const struct tier *t = &tiers[k];

		if (!t->enabled(in->cfg))
			continue;
		for (size_t i = 0; i < in->snap->nr_pods && !err; i++) {
			const struct snap_pod *sp = &in->snap->pods[i];

			if (sp->pod && sp->pod->is_active && sp->cgroup && t->takes(sp->pod))
				err = plan_pod(t, p, in, sp);
		}
	}
	return err;
}

static bool ext_enabled(const struct slo_config *cfg)
{
	return cfg->batch_resource_enable || cfg->mid_resource_enable;
}

const struct kqos_strategy extended_resource_strategy = {
	.name = "extended_resource",
	.desc = "batch-* of BE pods and mid-* of Mid pods -> shares, cfs quota, memory limit",
	.prio = 10,
	.enabled = ext_enabled,
	.decide = ext_decide,
};
