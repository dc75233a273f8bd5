// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <string.h>

#include "common.h"

bool strat_pod_is_be(const struct pod *pod)
{
	return pod && (pod->qos_raw == POD_QOS_BE || pod->k8s_qos == POD_K8S_QOS_BESTEFFORT);
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
	cpumask_zero(ret);
	if (snap->node.topo && !cpumask_empty(&snap->node.topo->online)) {
		*ret = snap->node.topo->online;
		return;
	}
	for (unsigned int c = 0; c < snap->node.nr_cpus; c++)
		cpumask_set(ret, c);
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

	if (!d[0])
		return false;
	snprintf(buf, size, "%s%s", d[0] == '/' ? "" : "/", d);
	return true;
}
