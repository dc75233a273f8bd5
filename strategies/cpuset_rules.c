// SPDX-License-Identifier: GPL-2.0
/*
 * cpuset_rules: koordinator's cpuset hook in reconciler mode (koordinator.md §2.4), at
 * container level, with the LS/BE share pools computed locally from the snapshot and kubelet's
 * cpu_manager_state (§2.2). Pods bound by the scheduler also get quota -1 (issue #489).
 */
#include <string.h>

#include "common.h"
#include "cpuset_rules.h"

/* koordinator manages a pod if it is labelled LS or BE, or bound by the scheduler. */
static bool pod_is_managed(const struct pod *pod)
{
	struct cpumask m;

	return pod && (pod->qos_raw == POD_QOS_LS || pod->qos_raw == POD_QOS_BE ||
		       strat_pod_bound_cpus(pod, &m));
}

/* Step 2: kubelet static removes the exclusive CPUs of pods koordinator does not manage. */
static void remove_kubelet_cpus(const struct strategy_input *in, struct cpumask *cpus)
{
	if (in->cfg->kubelet_policy != KUBELET_CPU_STATIC || !in->snap->node.cpumgr)
		return;
	for (size_t i = 0; i < in->snap->node.cpumgr->nr_entries; i++) {
		const struct cpumgr_entry *ent = &in->snap->node.cpumgr->entries[i];
		const struct snap_pod *sp = snapshot__pod(in->snap, ent->pod_uid);

		if (!sp || !pod_is_managed(sp->pod))
			cpumask_andnot(cpus, cpus, &ent->cpus);
	}
}

void cpuset_share_pools(const struct strategy_input *in, struct share_pools *ret)
{
	struct cpumask rest, lse, lsr;

	strat_online(in->snap, &rest);
	remove_kubelet_cpus(in, &rest);
	strat_bound(in->snap, &lse, &lsr);
	cpumask_andnot(&ret->ls, &rest, &lse);
	cpumask_andnot(&ret->ls, &ret->ls, &lsr);
	cpumask_andnot(&ret->be, &rest, &lse);
	/* step 4: reserved CPUs and the exclusive SYSTEM cpuset leave both pools */
	cpumask_andnot(&ret->ls, &ret->ls, &in->cfg->reserved_cpus);
	cpumask_andnot(&ret->be, &ret->be, &in->cfg->reserved_cpus);
	if (in->cfg->has_system_cpus && in->cfg->system_exclusive) {
		cpumask_andnot(&ret->ls, &ret->ls, &in->cfg->system_cpus);
		cpumask_andnot(&ret->be, &ret->be, &in->cfg->system_cpus);
	}
}

/* NUMA nodes the scheduler assigned with a non-zero cpu or batch-cpu; false when none. */
static bool numa_cpus(const struct snapshot *snap, const struct pod *pod,
		      const struct cpumask *pool, struct cpumask *ret)
{
	bool any = false;

	cpumask_zero(ret);
	if (pod->res_status.state != POD_ANN_OK)
		return false;
	for (size_t i = 0; i < pod->res_status.nr_numa; i++) {
		const struct pod_numa_res *n = &pod->res_status.numa[i];
		struct cpumask node;

		if (n->resources.cpu_milli <= 0 && n->resources.batch_cpu_milli <= 0)
			continue;
		any = true;
		if (!snap->node.topo)
			continue;
		topology__node_cpus(snap->node.topo, n->node, &node);
		cpumask_and(&node, &node, pool);
		cpumask_or(ret, ret, &node);
	}
	return any;
}

enum rule {
	RULE_NONE = 0, /* leave the cpuset alone (inherit, or kubelet's) */
	RULE_BOUND,
	RULE_NUMA,
	RULE_SYSTEM,
	RULE_LS,
	RULE_NONE_POLICY,
};

static const char *const rule_why[] = {
	[RULE_BOUND] = "cpuset rule 1: resource-status cpuset",
	[RULE_NUMA] = "cpuset rule 2: share pool of assigned NUMA nodes",
	[RULE_SYSTEM] = "cpuset rule 3: SYSTEM cpuset",
	[RULE_LS] = "cpuset rule 4: LS share pool",
	[RULE_NONE_POLICY] = "cpuset rule 6: kubelet none, LS share pool",
};

/* The decision table of §2.4, in order. */
static enum rule pod_rule(const struct strategy_input *in, const struct pod *pod,
			  const struct share_pools *pools, struct cpumask *ret)
{
	bool be = pod->qos_raw == POD_QOS_BE;

	if (strat_pod_bound_cpus(pod, ret))
		return RULE_BOUND;
	if ((!be || in->cfg->be_cpu_manager) &&
	    numa_cpus(in->snap, pod, be ? &pools->be : &pools->ls, ret))
		return RULE_NUMA;
	if (pod->qos_raw == POD_QOS_SYSTEM && in->cfg->has_system_cpus) {
		*ret = in->cfg->system_cpus;
		return RULE_SYSTEM;
	}
	/* Mid+LS is LS although the webhook made it BestEffort; Mid+BE goes on as BE */
	if (pod->qos_raw == POD_QOS_LS || pod__is_mid_ls(pod)) {
		*ret = pools->ls;
		return RULE_LS;
	}
	if (pod->k8s_qos == POD_K8S_QOS_BESTEFFORT)
		return RULE_NONE; /* inherits the besteffort dir, which suppress controls */
	if (in->cfg->kubelet_policy == KUBELET_CPU_STATIC)
		return RULE_NONE;
	*ret = pools->ls;
	return RULE_NONE_POLICY;
}

static int plan_pod(struct plan *p, const struct strategy_input *in, const struct snap_pod *sp,
		    enum rule rule, const struct cpumask *cpus)
{
	bool unset_quota = rule == RULE_BOUND && in->cfg->unset_cpu_quota;
	int err = 0;

	/*
	 * bare-metal groups have no containers: the group's cgroup is the container, and a glob
	 * may match several, each its own (sp->cgroup is only the first, as cpu_suppress knows)
	 */
	if (!sp->nr_ctrs && sp->pod->is_static && sp->pod->nr_cgroups)
		for (size_t k = 0; k < sp->pod->nr_cgroups && !err; k++)
			err = plan_set_cpuset(p, sp->pod->cgroups[k], cpus, rule_why[rule]);
	else if (!sp->nr_ctrs)
		err = plan_set_cpuset(p, sp->cgroup, cpus, rule_why[rule]);
	for (size_t c = 0; c < sp->nr_ctrs && !err; c++) {
		if (!sp->ctrs[c].cgroup)
			continue;
		err = plan_set_cpuset(p, sp->ctrs[c].cgroup, cpus, rule_why[rule]);
		if (!err && unset_quota)
			err = plan_set_quota(p, sp->ctrs[c].cgroup, -1, "bound cpuset: no quota");
	}
	if (!err && unset_quota)
		err = plan_set_quota(p, sp->cgroup, -1, "bound cpuset: no quota");
	return err;
}

static int rules_decide(void *state, const struct strategy_input *in, struct plan *p,
			struct strategy_report *rep)
{
	struct share_pools pools;
	int err = 0;

	cpuset_share_pools(in, &pools);
	for (size_t i = 0; i < in->snap->nr_pods && !err; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];
		struct cpumask cpus;
		enum rule rule;

		if (!sp->pod || !sp->pod->is_active || !sp->cgroup)
			continue;
		rule = pod_rule(in, sp->pod, &pools, &cpus);
		/* an empty cpuset is never written (koordinator issue #1460) */
		if (rule == RULE_NONE || cpumask_empty(&cpus))
			continue;
		err = plan_pod(p, in, sp, rule, &cpus);
	}
	return err;
}

static bool rules_enabled(const struct slo_config *cfg)
{
	return cfg->cpuset_rules_enable;
}

const struct kqos_strategy cpuset_rules_strategy = {
	.name = "cpuset_rules",
	.desc = "per-class container cpusets and LS/BE share pools (koordinator cpuset hook)",
	.prio = 20,
	.enabled = rules_enabled,
	.decide = rules_decide,
};
