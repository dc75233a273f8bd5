/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_CPU_SUPPRESS_H
#define KQOS_STRATEGIES_CPU_SUPPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "strategy.h"

/* The pure formulas of koordinator.md §4.1, exposed for the tests. */

/* Step 2-3: BE budget in milli-CPUs (may be negative without a min percent). */
int64_t suppress_be_budget_milli(const struct strategy_input *in);

/*
 * Step 4a: number of BE CPUs for a budget: ceil(budget/1000), at least 2, growth limited to
 * ceil(0.1 * nr_cpus) above @cur (cur 0 = unknown, no limit), at most @avail.
 */
unsigned int suppress_cpuset_count(int64_t budget_milli, unsigned int nr_cpus, unsigned int cur,
				   unsigned int avail);

/*
 * Step 4a: pick @n CPUs out of @allowed minus @lse, taking floor(n*|A|/(|A|+|B|)) from the
 * LSR-bound CPUs A and the rest from B; lowest-numbered HT pairs spread over NUMA nodes.
 */
void suppress_pick_cpuset(const struct topology *topo, const struct cpumask *allowed,
			  const struct cpumask *lse, const struct cpumask *lsr, unsigned int n,
			  struct cpumask *ret);

/*
 * kqos, the pod level of cfsQuota (a Mid+LS pod in the besteffort dir): a pod's part of
 * @total_us, in proportion @weight/@sum (equal parts of @nr when @sum is 0), at least 2000.
 */
int64_t suppress_split_quota(int64_t total_us, int64_t weight, int64_t sum, size_t nr);

/* Step 4b: new quota (us) from the budget and the current quota (-1 = unlimited/unknown). */
int64_t suppress_cfs_quota(int64_t budget_milli, unsigned int nr_cpus, int64_t cur_quota);

#endif
