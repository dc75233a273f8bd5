/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_CPU_BURST_H
#define KQOS_STRATEGIES_CPU_BURST_H

#include <stdbool.h>
#include <stdint.h>

#include "pod.h"
#include "slo.h"
#include "strategy.h"

/* The pure pieces of cpu_burst (koordinator.md §4.4), exposed for the unit tests. */

/* The node's cpuBurstStrategy with a pod's koordinator.sh/cpuBurst fields over it. */
void burst_config_merge(const struct burst_config *node, const struct pod_cpu_burst *ann,
			struct burst_config *ret);

bool burst_cpu_enabled(int policy); /* cpuBurstOnly, auto */
bool burst_quota_enabled(int policy); /* cfsQuotaBurstOnly, auto */

/* cpu.cfs_burst_us koordinator asks for: limit cores x pct/100 x 100000 us. */
uint64_t burst_asked_us(int64_t limit_milli, int64_t cpu_burst_pct);
/* What the kernel accepts: at most the quota in force (50000 takes 50000, refuses 50001). */
uint64_t burst_clamp_us(uint64_t asked_us, int64_t quota_us);

/* The share pool (non-LSE/LSR/BE pods' CPUs) against sharePoolThresholdPercent; no pool
 * left (total <= 0) is overloaded. */
enum burst_node_state burst_node_state(double used_cores, double total_cores,
				       int64_t threshold_pct);
/* Share-pool usage (the metric window's average) and capacity; false without node usage. */
bool burst_share_pool(const struct strategy_input *in, double *used, double *total);

/* One step of a container's quota: x1.2 up, x0.8 down, within [base, base x pct/100]. */
enum burst_op { BURST_OP_REMAIN = 0, BURST_OP_UP, BURST_OP_DOWN };
int64_t burst_scale(int64_t cur_us, enum burst_op op, int64_t base_us, int64_t ceil_pct);
/* The operation for a container: throttled -> up, then the node state and the bucket. */
enum burst_op burst_op_for(bool throttled, enum burst_node_state node, bool tokens_left);

/*
 * The token bucket of one container (cfsQuotaBurstPeriodSeconds >= 0), in percent-seconds of
 * its limit: capacity period x (pct - 100), tokens within [-capacity, capacity]; each round at
 * usage >= 100 % consumes (usage - 100) x dt, below 60 % refills (100 - usage) x dt. New, or
 * idle for 2 x period, or with a changed capacity, it starts at @init_ratio of the capacity.
 */
struct burst_bucket {
	bool started;
	double tokens, capacity;
	uint64_t last_ns;
};

/* Update with @usage_pct over the time since the last call; true while tokens are left. */
bool burst_bucket_update(struct burst_bucket *b, int64_t period_s, int64_t quota_pct,
			 double usage_pct, uint64_t now_ns, double init_ratio);
/* A container's start fill in [0, 0.5): koordlet's random spread, from the cgroup path. */
double burst_bucket_init_ratio(const char *cgroup);

#endif
