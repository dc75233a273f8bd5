/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_ACTUATE_ENFORCE_H
#define KQOS_ACTUATE_ENFORCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"

/*
 * The enforcement half of kqosd: every enabled strategy decides a plan from the snapshot
 * (pure), then the actuator applies it (the only writer of cgroup files), journals originals
 * and restores them on stop. docs/strategies.md and docs/actuator.md describe both halves.
 *
 * Configuration is two JSON objects of the config file:
 *   "nodeSLO":    koordinator NodeSLO `spec` (fields used: resourceUsedThresholdWithBE.enable,
 *                 cpuSuppressThresholdPercent, cpuSuppressMinPercent, cpuSuppressPolicy);
 *                 NULL or {} = koordinator defaults (suppress disabled);
 *   "strategies": kqos keys (docs/strategies.md), e.g.
 *                 {"cpuSuppress": {"policy": "weight"}, "weightFormula": "log",
 *                  "kubeletCpuManagerPolicy": "none", "reservedCpus": "0",
 *                  "cpusetRules": {"enable": true}, "batchResource": {"enable": true}}.
 */

struct enforce_opts {
	const char *cgroup_root; /* cgroupfs__open root; NULL -> /sys/fs/cgroup */
	int cgfs_mode; /* enum cgfs_mode, CGFS_MODE_AUTO by default */
	const char *state_dir; /* journal dir; NULL -> ENFORCE_STATE_DIR_DEFAULT */
	bool dry_run; /* log the plan, write nothing */
	const char *policy_json; /* "nodeSLO" object as JSON text, NULL = defaults */
	const char *kqos_json; /* "strategies" object as JSON text, NULL = defaults */
	/* resctrl control: a mount root (NULL = none), or a handle (borrowed; tests hand in the
	 * fake's), which wins */
	const char *resctrl_root;
	struct resctrl *resctrl;
	uint64_t rdt_pod_grace_ns; /* 0 = 10 s */
	bool rdt_no_reconcile; /* place tasks on attach events only (tests of the event path) */
};

#define ENFORCE_STATE_DIR_DEFAULT "/var/lib/kqos"

struct enforcer;

/*
 * Validate policy/kqos JSON without side effects: 0, or -EINVAL with a message naming the
 * field in @err (e.g. "nodeSLO.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: 140
 * out of range [0, 100]"). Either JSON may be NULL.
 */
int enforce_validate(const char *policy_json, const char *kqos_json, char *err, size_t err_len);

/* Opens cgroupfs and recovers from the journal (restore, or adopt with "recovery": "adopt"). */
int enforcer__new(const struct enforce_opts *opts, struct enforcer **ret);

/* SIGHUP with a validated config: -EINVAL keeps the previous config (logged). */
int enforcer__reconfigure(struct enforcer *e, const char *policy_json, const char *kqos_json,
			  bool dry_run);

/*
 * decide (every enabled strategy, pure) + apply (actuator); fills @ret with the enforcement
 * state, action counters and recent actions. A failed write (vanished cgroup, EINVAL, EBUSY)
 * is logged with path and errno and counted; it never stops the tick. Returns 0, or -errno
 * only when no plan could be built (-ENOMEM) or the journal cannot be written.
 */
int enforcer__tick(struct enforcer *e, const struct snapshot *snap, struct snap_enforce *ret);
/* Whether an enabled strategy reads pods' memory use (memory eviction). */
bool enforcer__needs_pod_memory(const struct enforcer *e);
/* Whether an enabled strategy reads the metric window further back than the last ticks. */
bool enforcer__needs_history(const struct enforcer *e);
/* How long the strategies took in the last enforcer__tick(): the rest of it was applying. */
__u64 enforcer__decide_ns(const struct enforcer *e);

/* Between ticks: the time (CLOCK_MONOTONIC and CLOCK_REALTIME) and the LS waits that came. */
struct enforcer_now {
	uint64_t mono_ns, wall_ns;
	const struct wait_event *waits;
	size_t nr_waits;
};

/*
 * The event path: the strategies that react (the latency guard) decide again on the last
 * snapshot and @now, over the last tick's plan of the others, and the actuator applies the
 * result at once. A no-op (0) when none reacts. Fills @ret like enforcer__tick.
 */
int enforcer__react(struct enforcer *e, const struct snapshot *snap, const struct enforcer_now *now,
		    struct snap_enforce *ret);
/* When the reacting strategies want to be asked again without events (a relax); 0 = never. */
uint64_t enforcer__next_react_ns(const struct enforcer *e);
/* The LS cgroups for the kernel to watch, with their wait targets (latency_guard_watches). */
size_t enforcer__watches(const struct enforcer *e, const struct snapshot *snap,
			 struct wait_watch *out, size_t cap);
/* Files written through the enforcer's cgroupfs since start: did a reaction write anything? */
uint64_t enforcer__nr_writes(const struct enforcer *e);

/*
 * What the strategies read beside the snapshot: the metric history (fed by the caller before
 * each tick) and the evictions in flight (the evictor's). Borrowed; either may be NULL.
 */
struct window;
struct evict_pending;
struct evict_list;
struct slo_config;
void enforcer__set_inputs(struct enforcer *e, const struct window *win,
			  const struct evict_pending *evicting);
/* The last tick's eviction requests, for the evictor; valid until the next tick. */
const struct evict_list *enforcer__evictions(const struct enforcer *e);
/* The configuration in force (borrowed; changes on reconfigure). */
const struct slo_config *enforcer__config(const struct enforcer *e);

/*
 * The event path for resctrl: thread @tid joined managed cgroup @cgid at @event_ns (kernel
 * CLOCK_MONOTONIC). Written to its resctrl group at once; 1 placed, 0 not ours, -errno.
 */
int enforcer__place(struct enforcer *e, uint64_t cgid, int tid, uint64_t event_ns);
/* Tasks are being placed in resctrl groups: the kernel should report forks too. */
bool enforcer__places(const struct enforcer *e);

/* The resctrl reconcile between ticks (resctrl.interval): the last plan applied again. */
int enforcer__rdt_reconcile(struct enforcer *e, uint64_t mono_ns);

/*
 * Restore every original value from the journal (byte-identical), then clear it, and remove
 * every kqos resctrl group (their tasks go back to the root group).
 */
int enforcer__restore(struct enforcer *e);

/* The enforcer's actuator (borrowed), for tests and counters. */
struct actuator;
struct actuator *enforcer__actuator(struct enforcer *e);

/* NULL-safe; does NOT restore. */
void enforcer__free(struct enforcer *e);

#endif
