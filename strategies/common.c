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

static bool under(const char *cg, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(cg, dir, n) && cg[n] == '/';
}

/* An active pod with a cgroup below the besteffort dir: koordinator's BE tree (depth <= 2). */
static bool in_be_tree(const struct be_targets *t, const struct snap_pod *sp)
{
	return sp->pod && sp->pod->is_active && sp->cgroup && under(sp->cgroup, t->dir) &&
	       sp->pod->k8s_qos == POD_K8S_QOS_BESTEFFORT;
}

static void add_pod(struct be_targets *t, const struct snap_pod *sp, const char *cgroup)
{
	if (t->nr_pods < STRAT_MAX_BE_PODS)
		t->pods[t->nr_pods++] = (struct be_target){ .sp = sp, .cgroup = cgroup };
	else
		t->overflow = true;
}

/* A group's glob may match several cgroups: each is a level of its own. */
static void static_targets(const struct strategy_input *in, struct be_targets *t)
{
	for (size_t i = 0; i < in->snap->nr_pods; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];

		if (!sp->pod || !sp->pod->is_static || !sp->pod->is_active ||
		    !strat_pod_suppressed(in->cfg, sp->pod))
			continue;
		for (size_t k = 0; k < sp->pod->nr_cgroups; k++)
			add_pod(t, sp, sp->pod->cgroups[k]);
		/* no list of matches: the one cgroup the snapshot found for it */
		if (!sp->pod->nr_cgroups && sp->cgroup)
			add_pod(t, sp, sp->cgroup);
	}
	t->at_pods = t->nr_pods > 0;
}

void strat_be_targets(const struct strategy_input *in, struct be_targets *t)
{
	bool protected = false;

	memset(t, 0, sizeof(*t));
	t->k8s = strat_besteffort_dir(in->snap, t->dir, sizeof(t->dir));
	if (!t->k8s) {
		static_targets(in, t);
		return;
	}
	for (size_t i = 0; i < in->snap->nr_pods; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];

		if (!in_be_tree(t, sp))
			continue;
		if (strat_pod_suppressed(in->cfg, sp->pod))
			add_pod(t, sp, sp->cgroup);
		else
		protected = true;
	}
	/* a BE pod left out would run free: then the dir is held, the protected pod with it */
	t->per_pod = protected && !t->overflow;
	t->at_dir = !t->per_pod;
	t->at_pods = t->per_pod;
}

bool strat_be_targets_any(const struct be_targets *t)
{
	return t->at_dir || t->at_pods;
}

/* Container dirs of a pod; a bare-metal group has none and its own cgroup is the container. */
static int plan_ctr_cpusets(struct plan *p, const struct snap_pod *sp, const struct cpumask *cpus,
			    const char *why)
{
	int err = 0;

	for (size_t c = 0; c < sp->nr_ctrs && !err; c++)
		if (sp->ctrs[c].cgroup)
			err = plan_set_cpuset(p, sp->ctrs[c].cgroup, cpus, why);
	return err;
}

int strat_plan_be_cpusets(struct plan *p, const struct strategy_input *in,
			  const struct be_targets *t, bool kubelet_static,
			  const struct cpumask *cpus, const struct cpumask *full, const char *why)
{
	const struct cpumask *upper = kubelet_static && t->k8s ? full : cpus;
	struct cpumask be_full;
	int err = 0;

	/* at the pod level the dir holds every BE CPU, whatever the caller narrows below it */
	strat_be_full(in, &be_full);
	if (t->k8s)
		err = plan_set_cpuset(p, t->dir, t->at_dir ? upper : &be_full, why);
	for (size_t i = 0; i < in->snap->nr_pods && t->at_dir && !err; i++) {
		const struct snap_pod *sp = &in->snap->pods[i];

		if (!in_be_tree(t, sp))
			continue;
		err = plan_set_cpuset(p, sp->cgroup, upper, why);
		if (!err)
			err = plan_ctr_cpusets(p, sp, cpus, why);
	}
	for (size_t i = 0; i < t->nr_pods && t->at_pods && !err; i++) {
		err = plan_set_cpuset(p, t->pods[i].cgroup, upper, why);
		if (!err)
			err = plan_ctr_cpusets(p, t->pods[i].sp, cpus, why);
	}
	return err;
}

int strat_plan_top(struct plan *p, const struct be_targets *t, enum plan_knob knob,
		   const struct plan_value *v, const char *why)
{
	int err = 0;

	if (t->at_dir)
		err = plan_set(p, t->dir, knob, v, "%s", why);
	for (size_t i = 0; i < t->nr_pods && t->at_pods && !err; i++)
		err = plan_set(p, t->pods[i].cgroup, knob, v, "%s", why);
	return err;
}
