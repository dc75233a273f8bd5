/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_WINDOW_H
#define KQOS_MODEL_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/*
 * Metric windows: a bounded history of per-pod and node values, fed once per snapshot, so
 * that strategies can ask for a value over a window instead of the last sample (koordlet's
 * metrics query, koordinator.md §4.0). Pure: time comes from the snapshots fed in.
 *
 * Each series is a ring of WINDOW_SAMPLE_BYTES-byte samples sized by the longest window
 * configured (window_capacity()); a pod's ring goes with the pod. Memory per pod is
 * window__entity_bytes() (docs/snapshot.md).
 */

enum win_metric {
	WIN_CPU_CORES = 0, /* cores used over the interval */
	WIN_MEM_USED, /* bytes; node: MemTotal - MemAvailable */
	WIN_THROTTLED, /* cpu.stat throttled ratio */
	WIN_RQ_P50, /* run-queue wait quantiles, ns */
	WIN_RQ_P99,
	WIN_LLC, /* resctrl llc_occupancy, bytes, summed over L3 domains (pod groups) */
	WIN_MBM, /* resctrl mbm_total, bytes/s, summed over L3 domains (pod groups) */
	/* node only: the BE aggregate BECPUEvict reads (koordinator's BE collector) */
	WIN_BE_CPU_USED, /* milli-CPUs used by BE-labelled pods */
	WIN_BE_CPU_REQUEST, /* milli-CPUs: sum of batch-cpu requests of BE-labelled pods */
	WIN_BE_CPU_LIMIT, /* milli-CPUs BE may use: min(BE cpuset x 1000, BE quota) */
	WIN_METRIC_NR,
};

enum win_agg {
	WIN_LAST = 0,
	WIN_AVG,
	WIN_MAX,
	WIN_P95, /* nearest rank */
};

#define WINDOW_MAX_SAMPLES 1024 /* per series: 17 min at 1 s */

struct win_sample {
	uint64_t t_ns; /* the snapshot's CLOCK_MONOTONIC */
	uint32_t has; /* bit per enum win_metric present */
	double v[WIN_METRIC_NR];
};

#define WINDOW_SAMPLE_BYTES sizeof(struct win_sample)

/* The BE limit inputs from the last tick's enforcement (cpu_suppress); NULL = none. */
struct window_be {
	bool has_be_cpus;
	unsigned int be_cpus; /* CPUs in the BE cpuset */
	bool has_be_quota;
	int64_t be_quota_us; /* per 100 ms period; -1 unlimited */
};

struct window;

/* Samples per series for windows up to @longest_ns at @interval_ns: ceil(W / I) + 1, >= 2. */
unsigned int window_capacity(uint64_t longest_ns, uint64_t interval_ns);
/* Bytes one pod's history takes at @cap samples (the ring and its bookkeeping). */
size_t window__entity_bytes(unsigned int cap);

/* 0, -EINVAL (cap 0 or above WINDOW_MAX_SAMPLES) or -ENOMEM. */
int window__new(unsigned int cap, struct window **ret);
/* NULL-safe. */
void window__free(struct window *w);
/* A new capacity (a reload): histories are kept, trimmed to the newest samples. */
int window__set_capacity(struct window *w, unsigned int cap);
unsigned int window__capacity(const struct window *w);
size_t window__nr_entities(const struct window *w);

/*
 * Append one sample per pod of @snap and one for the node; pods gone from @snap lose their
 * history. @be may be NULL. 0 or -ENOMEM (the history of a new pod could not be allocated;
 * the others are fed).
 */
int window__feed(struct window *w, const struct snapshot *snap, const struct window_be *be);

/*
 * @agg of metric @m over the samples with now - window < t <= now, for pod @uid (NULL = the
 * node). 0 with *ret; -ENODATA when samples x interval < window / 3 (koordinator's rule: not
 * enough samples), -ENOENT when the pod has no history. WIN_LAST is the newest sample in
 * the window.
 */
int window__query(const struct window *w, const char *uid, enum win_metric m, enum win_agg agg,
		  uint64_t window_ns, uint64_t now_ns, double *ret);

const char *win_metric_name(enum win_metric m);

#endif
