/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_STRATEGY_H
#define KQOS_STRATEGIES_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evict.h"
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
	/* CLOCK_MONOTONIC: the snapshot's time on a tick, the caller's between ticks */
	uint64_t now_ns;
	bool is_tick; /* false: between ticks (kernel events, a strategy's own deadline) */
	const struct wait_event *waits; /* between ticks: LS waits past their targets */
	size_t nr_waits;
	const struct window *win; /* metric history up to this snapshot; NULL when none */
	const struct evict_pending *evicting; /* evictions in flight (the evictor's) */
};

/* The guard's transitions of one call, for the enforcer to log and count. */
enum guard_move { GUARD_ESCALATE = 0, GUARD_BACK_OUT, GUARD_RELAX, GUARD_MOVE_NR };

#define GUARD_MOVES_MAX 4

struct guard_report {
	bool enabled;
	unsigned int level; /* ladder steps in force */
	unsigned int steps; /* bit GUARD_STEP_*: the steps in force */
	uint64_t next_ns; /* when it wants to be asked again without events; 0 = no need */
	uint64_t breaches; /* since start: waits past target seen (events and ticks) */
	uint64_t moves[GUARD_MOVE_NR]; /* since start */
	size_t nr_new;
	struct guard_transition {
		enum guard_move move;
		unsigned int from, to; /* levels */
		char why[96];
	} new_moves[GUARD_MOVES_MAX]; /* this call's */
};

/* cpu_burst: the share pool's state (koordinator's nodeBurstState). */
enum burst_node_state {
	BURST_NODE_UNKNOWN = 0, /* no node usage this tick */
	BURST_NODE_IDLE,
	BURST_NODE_COOLING, /* at 90 % of the threshold: no scaling up */
	BURST_NODE_OVERLOAD, /* at the threshold: scale down */
};

/* cpu_burst: one container's burst and quota, as asked and as written. */
struct burst_row {
	char pod_uid[POD_UID_MAX];
	char pod[64], ns[64], container[64];
	uint64_t asked_us; /* cpuBurstPercent of the limit */
	uint64_t burst_us; /* what is written: at most the quota */
	int64_t base_quota_us; /* the limit's quota */
	int64_t quota_us; /* the scaled quota; -1 when the quota burst is off for it */
	bool clamp_new; /* clamped, and the first time for this pod: the enforcer logs it */
};

struct burst_report {
	bool enabled;
	enum burst_node_state node;
	double share_pool_used, share_pool_total; /* cores */
	const struct burst_row *rows; /* borrowed from the strategy until its next decide */
	size_t nr_rows;
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
	struct guard_report guard; /* the latency guard */
	struct burst_report burst; /* cpu_burst */
	/* on a tick: knobs a reacting strategy may write before the next (values ignored), so
	 * their originals are journaled ahead; NULL between ticks */
	struct plan *reserve;
	/* on a tick: the eviction strategies' requests for the evictor; NULL between ticks */
	struct evict_list *evict;
	/* between ticks: the plan's resctrl section changed (resctrl_adapt on an LS latency
	 * event), so the resctrl actuator applies it now */
	bool rdt_react;
};

struct kqos_strategy {
	const char *name;
	const char *desc;
	int prio; /* plan precedence: higher wins a contested knob (plan.h) */
	bool tightens; /* its entries only tighten what the others planned (plan.h) */
	bool reacts; /* asked between ticks too (in->is_tick false), on the last tick's plan */
	/* reads pods' pasts from the metric window, not only the last two ticks: the agent keeps
	 * the long history (10 s or the eviction window, per pod) only while such a one is on */
	bool history;
	/* reads pods' memory use: the agent reads memory.stat every collector.statInterval only
	 * while such a one is on (else on the slow pass: v1 memory.stat is costly to generate) */
	bool pod_memory;
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
extern const struct kqos_strategy extended_resource_strategy;
extern const struct kqos_strategy latency_guard_strategy;
extern const struct kqos_strategy cpu_evict_strategy;
extern const struct kqos_strategy memory_evict_strategy;
extern const struct kqos_strategy cpu_burst_strategy;
extern const struct kqos_strategy resctrl_qos_strategy;
extern const struct kqos_strategy resctrl_adapt_strategy;

/*
 * The latency guard's attribution of an LS wait: the cgroup that ran before the late
 * switch-in (wait_event.prev_cgid) belongs to a BE pod kqos suppresses. A wait behind LS
 * itself or a system service is nothing BE can be pushed back for.
 */
bool latency_guard_blames_be(const struct snapshot *snap, const struct slo_config *cfg,
			     uint64_t prev_cgid);

/*
 * The LS cgroups the kernel should watch and their wait targets: every cgroup of an active
 * LSE, LSR or LS pod (its own, its containers', those charged to it), with the pod's target
 * (annotation or group key) or its class's. At most @cap into @out; returns how many.
 */
size_t latency_guard_watches(const struct snapshot *snap, const struct slo_config *cfg,
			     struct wait_watch *out, size_t cap);

/* NULL-terminated, in precedence order (highest first). */
extern const struct kqos_strategy *const kqos_strategies[];

#define strategy_for_each(s, i) for ((i) = 0; ((s) = kqos_strategies[i]); (i)++)

const struct kqos_strategy *strategy_find(const char *name);

#endif
