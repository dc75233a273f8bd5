/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_COMMON_H
#define KQOS_STRATEGIES_COMMON_H

#include <stdbool.h>

#include "strategy.h"

/*
 * Helpers the strategies share: pod classes as koordinator's strategies see them, bound CPUs,
 * and the CPU sets every strategy starts from. Pure functions of the snapshot and config.
 */

/* BE for suppress and budget purposes: label BE or Kubernetes BestEffort (koordinator §4.1). */
bool strat_pod_is_be(const struct pod *pod);
/*
 * What cpu_suppress suppresses and counts as BE in its budget: strat_pod_is_be, minus Mid+LS
 * pods when strategies.cpuSuppress.midLsProtected (default) is on. A Mid+LS pod is Kubernetes
 * BestEffort only because koordinator's webhook moved its resources to mid-cpu/mid-memory.
 */
bool strat_pod_suppressed(const struct slo_config *cfg, const struct pod *pod);
/* Suppressed, with suppress on and the cfsQuota policy: its own quota must stay -1. */
bool strat_pod_cfs_suppressed(const struct slo_config *cfg, const struct pod *pod);
/* The resource-status cpuset of a pod; false when absent, empty or unparsable. */
bool strat_pod_bound_cpus(const struct pod *pod, struct cpumask *ret);
/* All online CPUs (topology, else 0..nr_cpus-1). */
void strat_online(const struct snapshot *snap, struct cpumask *ret);
/* Online minus node-reservation reservedCPUs minus the exclusive SYSTEM cpuset. */
void strat_allowed(const struct strategy_input *in, struct cpumask *ret);
/* CPUs bound to LSE pods and to every other bound pod (LSR and unlabelled bound pods). */
void strat_bound(const struct snapshot *snap, struct cpumask *lse, struct cpumask *lsr);
/* The full BE set: allowed minus LSE-bound CPUs (koordinator's restore value). */
void strat_be_full(const struct strategy_input *in, struct cpumask *ret);
/* "/kubepods/besteffort" with a leading '/' into buf; false when the snapshot has none. */
bool strat_besteffort_dir(const struct snapshot *snap, char *buf, size_t size);

/* BE pods the pod level holds one by one; with more, the besteffort dir is the level. */
#define STRAT_MAX_BE_PODS 512

/*
 * Where BE is held back this tick, for every strategy that tightens BE (cpu_suppress, the
 * latency guard). koordinator's level is the besteffort dir as a whole. A protected Mid+LS
 * pod (strat_pod_suppressed false) sits in that dir too, its native resources moved to
 * mid-*, so while one is there the level is each BE pod's own cgroup and the dir is left
 * neutral. Bare-metal groups have no dir: each BE group is its own level.
 */
struct be_targets {
	char dir[PLAN_CGROUP_MAX]; /* the besteffort dir, "" without one */
	bool k8s; /* a besteffort dir exists */
	bool per_pod; /* a protected pod is in the dir: the pods are koordinator's level */
	bool at_dir; /* hold the dir (koordinator's level) */
	bool at_pods; /* hold each pod in pods[] on its own cgroup */
	struct be_target {
		const struct snap_pod *sp; /* borrowed: this tick */
		const char *cgroup; /* its cgroup; one per cgroup a bare-metal group's glob matched */
	} pods[STRAT_MAX_BE_PODS];
	size_t nr_pods;
	bool overflow; /* more than STRAT_MAX_BE_PODS: pods[] is not all of them */
};

/* This tick's targets: the besteffort dir or, with a protected pod in it, the BE pods. */
void strat_be_targets(const struct strategy_input *in, struct be_targets *t);
/* Some level to hold back. */
bool strat_be_targets_any(const struct be_targets *t);
/*
 * The cpuset on the held-back tree (v1 refuses a parent narrower than its children). At the
 * dir level every pod of the BE tree is below @cpus; at the pod level only the BE pods are,
 * and the dir keeps the full BE set (strat_be_full) so a protected pod can have more. kubelet static: only containers
 * get @cpus, the besteffort and pod dirs keep @full (runc conflicts, koordinator #546/#556).
 */
int strat_plan_be_cpusets(struct plan *p, const struct strategy_input *in,
			  const struct be_targets *t, bool kubelet_static,
			  const struct cpumask *cpus, const struct cpumask *full, const char *why);
/* One knob value on the held levels: the dir (at_dir) and each BE pod (at_pods). */
int strat_plan_top(struct plan *p, const struct be_targets *t, enum plan_knob knob,
		   const struct plan_value *v, const char *why);

#endif
