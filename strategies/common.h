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

/* The dirs BE suppression lives on, and the BE pods' own dirs below them. */
struct be_targets {
	char top[64][PLAN_CGROUP_MAX]; /* besteffort, or each BE group */
	size_t nr_top;
	bool k8s; /* a besteffort dir exists */
};

/* The besteffort dir when the snapshot has one, else every active BE bare-metal group. */
void strat_be_targets(const struct snapshot *snap, struct be_targets *t);
/* BE pod dirs below the besteffort dir (the level koordinator walks), or a BE group. */
bool strat_is_be_child(const struct be_targets *t, const struct snap_pod *sp);
/*
 * The cpuset on the whole BE tree, parents and children alike (v1 refuses a parent narrower
 * than its children). kubelet static: only containers get @cpus, the besteffort and pod dirs
 * keep @full (runc conflicts, koordinator issues #546/#556).
 */
int strat_plan_be_cpusets(struct plan *p, const struct snapshot *snap, const struct be_targets *t,
			  bool kubelet_static, const struct cpumask *cpus,
			  const struct cpumask *full, const char *why);
/* One knob value on every top dir. */
int strat_plan_top(struct plan *p, const struct be_targets *t, enum plan_knob knob,
		   const struct plan_value *v, const char *why);

#endif
