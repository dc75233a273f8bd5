// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "common.h"

bool strat_pod_is_be(const struct pod *pod)
{
	return pod && (pod->qos_raw == POD_QOS_BE || pod->k8s_qos == POD_K8S_QOS_BESTEFFORT);
}

bool strat_pod_suppressed(const struct slo_config *cfg, const struct pod *pod)
{
	return strat_pod_is_be(pod) && !(cfg->mid_ls_protected && pod__is_mid_ls(pod));
}

bool strat_pod_cfs_suppressed(const struct slo_config *cfg, const struct pod *pod)
{
	return cfg->suppress_enable && cfg->suppress_policy == SUPPRESS_CFS_QUOTA &&
	       strat_pod_suppressed(cfg, pod);
}

bool strat_pod_bound_cpus(const struct pod *pod, struct cpumask *ret)
{
	cpumask_zero(ret);
	if (!pod || pod->res_status.state != POD_ANN_OK || !pod->res_status.cpuset ||
	    !pod->res_status.cpuset[0])
		return false;
	if (cpulist_parse(pod->res_status.cpuset, ret))
		return false;
	return !cpumask_empty(ret);
}

void strat_online(const struct snapshot *snap, struct cpumask *ret)
{
	struct cpumask m;

	cpumask_zero(ret);
	if (snap->node.topo && !cpumask_empty(&snap->node.topo->online)) {
		*ret = snap->node.topo->online;
	} else {
		for (unsigned int c = 0; c < snap->node.nr_cpus; c++)
			cpumask_set(ret, c);
	}
	/* in a container whose cpuset root holds fewer CPUs, no child may be given more */
	if (snap->node.has_root_cpus) {
		cpumask_and(&m, ret, &snap->node.root_cpus);
		if (!cpumask_empty(&m))
			*ret = m;
	}
}

void strat_allowed(const struct strategy_input *in, struct cpumask *ret)
{
	strat_online(in->snap, ret);
	cpumask_andnot(ret, ret, &in->cfg->reserved_cpus);
	if (in->cfg->has_system_cpus && in->cfg->system_exclusive)
		cpumask_andnot(ret, ret, &in->cfg->system_cpus);
}

void strat_bound(const struct snapshot *snap, struct cpumask *lse, struct cpumask *lsr)
{
	struct cpumask m;

	cpumask_zero(lse);
	cpumask_zero(lsr);
	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct pod *pod = snap->pods[i].pod;

		if (!pod || !pod->is_active || !strat_pod_bound_cpus(pod, &m))
			continue;
		if (pod->qos_raw == POD_QOS_LSE)
			cpumask_or(lse, lse, &m);
		else
			cpumask_or(lsr, lsr, &m);
	}
}

void strat_be_full(const struct strategy_input *in, struct cpumask *ret)
{
	struct cpumask lse, lsr;

	strat_allowed(in, ret);
	strat_bound(in->snap, &lse, &lsr);
	cpumask_andnot(ret, ret, &lse);
}

bool strat_besteffort_dir(const struct snapshot *snap, char *buf, size_t size)
{
	const char *d = snap->node.besteffort;
	size_t n = strlen(d), lead = d[0] != '/';

	/* a dir too long for a plan path is no dir to plan on */
	if (!n || n + lead + 1 > size)
		return false;
	buf[0] = '/';
	memcpy(buf + lead, d, n + 1);
	return true;
}

void strat_be_targets(const struct snapshot *snap, struct be_targets *t)
{
	memset(t, 0, sizeof(*t));
	if (strat_besteffort_dir(snap, t->top[0], sizeof(t->top[0]))) {
		t->nr_top = 1;
		t->k8s = true;
		return;
	}
	/* a group's glob may match several cgroups: each is a top dir of its own */
	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];

		if (!sp->pod || !sp->pod->is_static || !sp->pod->is_active ||
		    !strat_pod_is_be(sp->pod))
			continue;
		for (size_t k = 0; k < sp->pod->nr_cgroups && t->nr_top < 64; k++)
			snprintf(t->top[t->nr_top++], PLAN_CGROUP_MAX, "%s", sp->pod->cgroups[k]);
		if (!sp->pod->nr_cgroups && sp->cgroup && t->nr_top < 64)
			snprintf(t->top[t->nr_top++], PLAN_CGROUP_MAX, "%s", sp->cgroup);
	}
}

bool strat_is_be_child(const struct be_targets *t, const struct snap_pod *sp)
{
	if (!sp->pod || !sp->pod->is_active || !sp->cgroup)
		return false;
	if (t->k8s)
		return sp->pod->k8s_qos == POD_K8S_QOS_BESTEFFORT;
	return sp->pod->is_static && strat_pod_is_be(sp->pod);
}

int strat_plan_be_cpusets(struct plan *p, const struct snapshot *snap, const struct be_targets *t,
			  bool kubelet_static, const struct cpumask *cpus,
			  const struct cpumask *full, const char *why)
{
	const struct cpumask *upper = kubelet_static && t->k8s ? full : cpus;
	int err = 0;

	for (size_t i = 0; i < t->nr_top && !err; i++)
		err = plan_set_cpuset(p, t->top[i], upper, why);
	for (size_t i = 0; i < snap->nr_pods && !err; i++) {
		const struct snap_pod *sp = &snap->pods[i];

		if (!strat_is_be_child(t, sp))
			continue;
		if (t->k8s)
			err = plan_set_cpuset(p, sp->cgroup, upper, why);
		for (size_t c = 0; c < sp->nr_ctrs && !err; c++)
			if (sp->ctrs[c].cgroup)
				err = plan_set_cpuset(p, sp->ctrs[c].cgroup, cpus, why);
	}
	return err;
}

int strat_plan_top(struct plan *p, const struct be_targets *t, enum plan_knob knob,
		   const struct plan_value *v, const char *why)
{
	int err = 0;

	for (size_t i = 0; i < t->nr_top && !err; i++)
		err = plan_set(p, t->top[i], knob, v, "%s", why);
	return err;
}
