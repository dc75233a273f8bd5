/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_CPUSET_RULES_H
#define KQOS_STRATEGIES_CPUSET_RULES_H

#include "strategy.h"

/* Share pools computed locally (koordinator.md §2.2); exposed for the tests. */
struct share_pools {
	struct cpumask ls; /* union over NUMA nodes */
	struct cpumask be;
};

void cpuset_share_pools(const struct strategy_input *in, struct share_pools *ret);

#endif
