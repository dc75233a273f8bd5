/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_ACTUATE_EVICTOR_H
#define KQOS_ACTUATE_EVICTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "evict.h"
#include "snapshot.h"

/*
 * The evictor: the only place that evicts. It takes the eviction strategies' requests of a
 * tick (struct evict_list) and acts on each once while it is pending:
 *  - a Kubernetes pod: the policy/v1 Eviction API through the API server, POST
 *    /api/v1/namespaces/NS/pods/NAME/eviction with the pod's UID as a precondition, the
 *    service-account token re-read on every call; 2xx = pending until the pod leaves the
 *    pod list, 404 = gone, 429 (a PodDisruptionBudget) retried after the strategy's cool-down,
 *    any other answer, garbage or a timeout logged and retried after retry_ns. The API calls
 *    of one tick share one timeout: the loop never waits longer than that.
 *  - a bare-metal group: its action, kill (SIGTERM to every task of its cgroups, SIGKILL to
 *    what is left after the grace period) or freeze (v1 freezer.state or v2 cgroup.freeze,
 *    thawed once no eviction rule wants anything released), or none (logged only).
 * Every decision is logged with its reason and appended to the journal file; dry_run logs
 * and touches nothing.
 */

enum evict_action {
	EVICT_ACTION_NONE = 0,
	EVICT_ACTION_KILL,
	EVICT_ACTION_FREEZE,
};

/* Results counted per strategy (exported as action counters, knob "evict"). */
enum evict_result {
	EVICT_RES_OK = 0, /* the API accepted, or the group was killed or frozen */
	EVICT_RES_GONE, /* 404: the pod was already gone */
	EVICT_RES_RETRY, /* 429, 5xx, garbage or timeout: asked again later */
	EVICT_RES_ERROR, /* kill/freeze failed, no API server */
	EVICT_RES_SKIPPED, /* a group without an action */
	EVICT_RES_DRY_RUN,
	EVICT_RES_NR,
};

struct evictor_group {
	const char *name; /* the bare-metal group's name (its pod name) */
	enum evict_action action;
};

struct evictor_opts {
	bool dry_run;
	/* API server base URL, e.g. "https://10.0.0.1:443"; NULL: from KUBERNETES_SERVICE_HOST
	 * and KUBERNETES_SERVICE_PORT, and without those no API evictions (logged) */
	const char *api_url;
	const char *token_path; /* NULL: the in-cluster service-account token */
	const char *ca_path; /* NULL: the in-cluster CA file */
	bool insecure_skip_verify;
	uint64_t timeout_ns; /* API time per tick, all calls together; 0: 2 s */
	uint64_t retry_ns; /* after 5xx, garbage or a timeout; 0: 10 s */
	uint64_t cpu_cool_ns, memory_cool_ns; /* 429 retry delays; 0: 20 s and 4 s */
	uint64_t kill_grace_ns; /* SIGTERM -> SIGKILL; 0: 10 s */
	const char *cgroup_mount; /* the hierarchy the groups' cgroup paths are relative to */
	const char *freezer_mount; /* v1 freezer hierarchy; NULL: v2 cgroup.freeze in the mount */
	const struct evictor_group *groups;
	size_t nr_groups;
	const char *journal_path; /* requests and results appended, one line each; NULL none */
};

struct evictor;

/* 0, -EINVAL or -ENOMEM. */
int evictor__new(const struct evictor_opts *opts, struct evictor **ret);
/* Thaws what it froze. NULL-safe. */
void evictor__free(struct evictor *e);

/*
 * One tick: forget pods gone from @snap, thaw frozen groups when @list has no pressure,
 * SIGKILL groups past their grace, then act on @list's new requests and the retries due.
 * @list may be NULL (no strategy ran). @now_ns is CLOCK_MONOTONIC, @wall_ns for the journal.
 */
void evictor__tick(struct evictor *e, const struct snapshot *snap, const struct evict_list *list,
		   uint64_t now_ns, uint64_t wall_ns);

/* A reload's dryRun (the top-level key; eviction.dryRun applies after a restart). */
void evictor__set_dry_run(struct evictor *e, bool dry_run);

/* The UIDs whose eviction is pending (accepted, being killed, frozen); valid until the next
 * evictor__tick. */
const struct evict_pending *evictor__pending(const struct evictor *e);

/* Since start. */
uint64_t evictor__count(const struct evictor *e, enum pod_evictor s, enum evict_result r);
const char *evict_result_name(enum evict_result r); /* "ok", "gone", ... */
const char *evict_action_name(enum evict_action a); /* "none", "kill", "freeze" */

/* Add the counters (knob "evict") and this tick's decisions to @ret's actions. */
void evictor__fill(const struct evictor *e, struct snap_enforce *ret);

#endif
