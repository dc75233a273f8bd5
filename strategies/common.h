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

#endif
