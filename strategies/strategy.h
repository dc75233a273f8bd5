/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_STRATEGY_H
#define KQOS_STRATEGIES_STRATEGY_H

#include <stdbool.h>

#include "plan.h"
#include "slo.h"
#include "snapshot.h"

/*
 * A strategy turns a snapshot into plan entries. decide() is pure: no file, BPF or clock;
 * time comes in the snapshot and whatever must persist between ticks lives in the strategy's
 * own state (from init). Optional hooks are NULL, never empty stubs.
 */

/* Everything decide() may read. */
struct strategy_input {
	const struct snapshot *snap;
	const struct slo_config *cfg;
};

/*
 * What a strategy decided beyond plan entries, for the published enforcement state: so far
 * cpu_suppress's BE cpuset or quota. Zeroed by the caller before a tick.
 */
struct strategy_report {
	bool has_be_cpus; /* cpu_suppress cpuset policy: the BE cpuset */
	struct cpumask be_cpus;
	bool has_be_quota; /* cpu_suppress cfsQuota policy: besteffort quota, -1 unlimited */
	int64_t be_quota_us;
};

struct kqos_strategy {
	const char *name;
	const char *desc;
	int prio; /* plan precedence: higher wins a contested knob (plan.h) */
	/* required: whether the config turns this strategy on */
	bool (*enabled)(const struct slo_config *cfg);
	/* optional: private state; *ret_state may stay NULL */
	int (*init)(const struct slo_config *cfg, void **ret_state);
	/* required, pure: add entries to plan (plan->strategy/prio set by the caller) */
	int (*decide)(void *state, const struct strategy_input *in, struct plan *plan,
		      struct strategy_report *rep);
	/* optional */
	void (*fini)(void *state);
};

extern const struct kqos_strategy cpu_suppress_strategy;
extern const struct kqos_strategy cpuset_rules_strategy;
extern const struct kqos_strategy batch_resource_strategy;

/* NULL-terminated, in precedence order (highest first). */
extern const struct kqos_strategy *const kqos_strategies[];

#define strategy_for_each(s, i) for ((i) = 0; ((s) = kqos_strategies[i]); (i)++)

const struct kqos_strategy *strategy_find(const char *name);

#endif
