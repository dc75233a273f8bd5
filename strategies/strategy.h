/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_STRATEGY_H
#define KQOS_STRATEGIES_STRATEGY_H

#include <stdbool.h>

#include "cputopo.h"
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
	/* kubelet's cpu_manager_state when the policy is static and the file exists, else NULL */
	const struct cpumgr_state *cpumgr;
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
	int (*decide)(void *state, const struct strategy_input *in, struct plan *plan);
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
