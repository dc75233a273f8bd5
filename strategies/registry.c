// SPDX-License-Identifier: GPL-2.0
/* The strategy table: adding a strategy is one file, one line here and one test file. */
#include <string.h>

#include "strategy.h"

const struct kqos_strategy *const kqos_strategies[] = {
	&cpu_suppress_strategy,
	&cpuset_rules_strategy,
	&extended_resource_strategy,
	&cpu_burst_strategy,
	/* plan nothing: eviction requests for the evictor */
	&cpu_evict_strategy,
	&memory_evict_strategy,
	/* last of those with cgroup knobs: it only tightens what the others planned */
	&latency_guard_strategy,
	/* resctrl groups only (the plan's resctrl section): no cgroup knob, so no contest */
	&resctrl_qos_strategy,
	/* edits the BE group resctrl_qos planned */
	&resctrl_adapt_strategy,
	NULL,
};

const struct kqos_strategy *strategy_find(const char *name)
{
	const struct kqos_strategy *s;
	size_t i;

	strategy_for_each(s, i)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}
