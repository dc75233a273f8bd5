/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_STAGES_H
#define KQOS_MODEL_STAGES_H

#include <linux/types.h>

/*
 * Where the agent's own time goes, per tick and per stage of the pipeline (design.md): a
 * histogram per stage, filled by the agent loop and shown by the status request, the textfile
 * and `kqos-top --status`. Stages count the loop thread's CPU time, which is the agent's cost
 * and does not grow when other work delays it; STAGE_WALL is a tick's elapsed time. The agent
 * keeps the clocks; this is plain arithmetic.
 */
enum stage {
	STAGE_COLLECT, /* the BPF maps, the host's files, resctrl's readings */
	STAGE_BUILD, /* the snapshot */
	STAGE_DECIDE, /* the metric window and the strategies */
	STAGE_APPLY, /* the actuator's writes, resctrl, the evictor */
	STAGE_EXPORT, /* the event path's watches, the socket and the textfile */
	STAGE_TICK, /* all of one tick */
	STAGE_WALL, /* one tick's elapsed time, waits for the CPU included */
	STAGE_NR,
};

/* Bucket i counts durations up to 2^i µs; the last one everything above 2^(STAGE_BUCKETS-2). */
#define STAGE_BUCKETS 22

struct stage_hist {
	__u64 count;
	__u64 sum_ns;
	__u64 max_ns;
	__u64 last_ns;
	__u64 bucket[STAGE_BUCKETS]; /* per bucket, not cumulative */
};

struct agent_stages {
	struct stage_hist s[STAGE_NR];
};

void stages_add(struct agent_stages *st, enum stage stage, __u64 ns);
const char *stage_name(enum stage stage); /* "collect", ..., "tick" */
/* The upper bound of bucket @i in µs; 0 for the last (+Inf). */
__u64 stage_bucket_le_us(int i);
/* An upper bound of quantile @q from the buckets (µs), capped at the largest value seen. */
double stage_quantile_us(const struct stage_hist *h, double q);

#endif
