// SPDX-License-Identifier: GPL-2.0
/*
 * batch_resource: koordinator's batchresource hook (koordinator.md §3.2) in reconciler mode.
 * BE-labelled pods' kubernetes.io/batch-cpu and batch-memory become cpu.shares (v2 weight),
 * cfs quota and memory limit at pod and container level. Mid resources are not translated,
 * as in koordinator: they only matter for eviction accounting.
 */
#include <math.h>
#include <stdio.h>

#include "batch_resource.h"
#include "common.h"

#define SHARES_MIN 2
#define SHARES_MAX 262144
#define QUOTA_MIN  1000

uint64_t batch_milli_to_shares(int64_t milli)
{
	int64_t s;

	if (milli <= 0)
		return SHARES_MIN;
	s = milli * 1024 / 1000;
	return s < SHARES_MIN ? SHARES_MIN : s > SHARES_MAX ? SHARES_MAX : (uint64_t)s;
}

int64_t batch_milli_to_quota(int64_t milli)
{
	int64_t q = milli > 0 ? milli * 100000 / 1000 : 0;

	if (q <= 0)
		return -1;
	return q < QUOTA_MIN ? QUOTA_MIN : q;
}

/* A container's batch request/limit: the pod spec, else the extended-resource-spec annotation. */
struct batch_res {
	int64_t req_cpu, lim_cpu, lim_mem;
	bool any;
};

static void container_batch(const struct pod *pod, const struct pod_container *c,
			    struct batch_res *r)
{
	const struct pod_ext_spec_ctr *ext = pod__ext_spec(pod, c->name);

	r->req_cpu = c->requests.batch_cpu_milli;
	r->lim_cpu = c->limits.batch_cpu_milli;
	r->lim_mem = c->limits.batch_memory_bytes;
	if (ext) {
		if (r->req_cpu == POD_RES_UNSET)
			r->req_cpu = ext->requests.batch_cpu_milli;
		if (r->lim_cpu == POD_RES_UNSET)
			r->lim_cpu = ext->limits.batch_cpu_milli;
		if (r->lim_mem == POD_RES_UNSET)
			r->lim_mem = ext->limits.batch_memory_bytes;
	}
	r->any = r->req_cpu != POD_RES_UNSET || r->lim_cpu != POD_RES_UNSET ||
		 r->lim_mem != POD_RES_UNSET || c->requests.batch_memory_bytes != POD_RES_UNSET;
}

static int64_t quota_of(const struct strategy_input *in, int64_t milli)
{
	int64_t q = batch_milli_to_quota(milli);
	double r = in->cfg->cpu_normalization_ratio;

	/* the besteffort parent's quota limits all BE when suppress uses cfsQuota */
	if (in->cfg->suppress_enable && in->cfg->suppress_policy == SUPPRESS_CFS_QUOTA)
		return -1;
	if (q > 0 && r > 1.0)
		q = (int64_t)ceil((double)q / r);
	return q;
}

static int plan_level(struct plan *p, const struct strategy_input *in, const char *cg,
		      uint64_t shares, int64_t quota_milli, int64_t mem, const char *why)
{
	int err;

	err = plan_set_shares(p, cg, shares, why);
	if (!err)
		err = plan_set_quota(p, cg, quota_of(in, quota_milli), why);
	if (!err)
		err = plan_set_memory(p, cg, mem > 0 ? (uint64_t)mem : UINT64_MAX, why);
	return err;
}

static int plan_batch_pod(struct plan *p, const struct strategy_input *in,
			  const struct snap_pod *sp)
{
	const struct pod *pod = sp->pod;
	int64_t req = 0, lim = 0, mem = 0;
	bool any = false, lim_all = true, mem_all = true;
	struct batch_res r;
	int err = 0;

	for (size_t i = 0; i < pod->nr_containers; i++) {
		container_batch(pod, &pod->containers[i], &r);
		any = any || r.any;
		req += r.req_cpu > 0 ? r.req_cpu : 0;
		lim_all = lim_all && r.lim_cpu > 0;
		lim += r.lim_cpu > 0 ? r.lim_cpu : 0;
		mem_all = mem_all && r.lim_mem > 0;
		mem += r.lim_mem > 0 ? r.lim_mem : 0;
	}
	if (!any)
		return 0; /* nothing happens without the extended spec */
	/* -1 (unlimited) if any container has no positive limit */
	err = plan_level(p, in, sp->cgroup, batch_milli_to_shares(req), lim_all ? lim : -1,
			 mem_all ? mem : -1, "batch resources: pod");
	for (size_t c = 0; c < sp->nr_ctrs && !err; c++) {
		const struct snap_container *sc = &sp->ctrs[c];

		if (!sc->cgroup || !sc->spec)
			continue;
		container_batch(pod, sc->spec, &r);
		err = plan_level(p, in, sc->cgroup, batch_milli_to_shares(r.req_cpu), r.lim_cpu,
				 r.lim_mem, "batch resources: container");
	}
	return err;
}

static int batch_decide(void *state, const struct strategy_input *in, struct plan *p,
			struct strategy_report *rep)
{
	int err = 0;

	for (size_t i = 0; i < in->snap->nr_pods && !err; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];

		/* only pods labelled BE */
		if (sp->pod && sp->pod->is_active && sp->cgroup && sp->pod->qos_raw == POD_QOS_BE)
			err = plan_batch_pod(p, in, sp);
	}
	return err;
}

static bool batch_enabled(const struct slo_config *cfg)
{
	return cfg->batch_resource_enable;
}

const struct kqos_strategy batch_resource_strategy = {
	.name = "batch_resource",
	.desc = "BE pods' batch-cpu/batch-memory -> shares, cfs quota, memory limit",
	.prio = 10,
	.enabled = batch_enabled,
	.decide = batch_decide,
};
