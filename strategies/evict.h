/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_STRATEGIES_EVICT_H
#define KQOS_STRATEGIES_EVICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "window.h"

struct strategy_input;

/*
 * Eviction requests: what the eviction strategies (evict_cpu.c, evict_memory.c) decided, for
 * the evictor (user/actuate/evictor.c), the only place that evicts. A request names the pod
 * and why; it writes no cgroup file.
 */

#define EVICT_MAX 64 /* requests per tick; more wait for the next */

struct evict_request {
	char uid[POD_UID_MAX];
	char namespace[64];
	char name[128];
	enum pod_evictor strategy;
	bool is_bare_metal; /* a bare-metal group: killed or frozen, not evicted through the API */
	char reason[160]; /* "trigger by koordlet feature BEMemoryEvict: release 1.2GiB ..." */
};

struct evict_list {
	size_t nr;
	struct evict_request req[EVICT_MAX];
	/* bit per enum pod_evictor whose rule wants something released this tick, cool-down or
	 * not: while none does, frozen groups may thaw */
	unsigned int pressure;
	size_t nr_dropped; /* requests past EVICT_MAX */
};

/* A pod's eviction in flight, as the evictor reports it to the strategies. */
struct evict_pending {
	const char *const *uids; /* sorted */
	size_t nr;
};

bool evict_pending_has(const struct evict_pending *p, const char *uid);

/* One eviction candidate and the ordering keys koordinator sorts by. */
struct evict_victim {
	const struct snap_pod *sp;
	double release[2]; /* what evicting it releases, per release target */
	double usage; /* memory bytes or milli-CPUs used (sort key) */
	double usage_ratio; /* BE CPU: used / batch-cpu request (sort key) */
	int32_t priority; /* koordinator's priority with default */
	int64_t label_priority;
};

/* One rule's ask: release @amount of target @target from @victims, in order. */
struct evict_task {
	enum pod_evictor strategy;
	unsigned int target; /* index into evict_victim.release */
	double amount;
	struct evict_victim *victims;
	size_t nr_victims;
	char why[96];
};

/*
 * koordlet's KillAndEvictPods over @tasks in order: a victim counts once across them; one
 * already pending counts as released without a new request; a task stops when what was
 * released reaches its amount. Requests go to @out. Returns how many new requests.
 */
size_t evict_run_tasks(const struct evict_task *tasks, size_t nr, const struct evict_pending *pend,
		       struct evict_list *out);

/* The newest value of @m for pod @uid (NULL = node) within 2 intervals (koordlet's "last"). */
int evict_last(const struct strategy_input *in, const char *uid, enum win_metric m, double *ret);
/* The average over @window_ns, with the coverage rule; -ENODATA when not enough samples. */
int evict_avg(const struct strategy_input *in, const char *uid, enum win_metric m,
	      uint64_t window_ns, double *ret);
uint64_t evict_interval_ns(const struct strategy_input *in);

/* Sort orders (koordinator's): BE memory, BE CPU, and the priority order of CPU/MemoryEvict. */
void evict_sort_be_memory(struct evict_victim *v, size_t n);
void evict_sort_be_cpu(struct evict_victim *v, size_t n);
void evict_sort_by_priority(struct evict_victim *v, size_t n);

/* cpu_evict's formulas, for the tests (evict_cpu.c). */
struct evict_config;
bool cpu_evict_satisfaction_valid(const struct evict_config *ev);
int64_t cpu_evict_satisfaction_release(const struct evict_config *ev, double request, double limit);

#endif
