/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_SNAPSHOT_H
#define KQOS_MODEL_SNAPSHOT_H

#include <stdbool.h>
#include <limits.h>
#include <stddef.h>
#include <linux/types.h>

#include "counters.h"
#include "pod.h"
#include "topology.h"

/*
 * What kqos knows about the node at one tick: node, pods (or bare-metal groups), containers,
 * and per-entity rates from the BPF collector, the cgroup stat files and resctrl monitoring.
 * Built once per tick by snapbuild.c from plain inputs and never changed afterwards: strategies
 * and exporters read only this. What enforcement did in the tick (struct snap_enforce) is
 * published beside it, not in it. The JSON shape (kqosd --once --format json, the socket) is
 * documented in docs/snapshot.md.
 *
 * Lifetime: reference counted (snapshot__ref/snapshot__put). Strings and pod data are owned
 * by the snapshot or by the pod list and checkpoint it holds references to; the topology is the
 * agent's and outlives every snapshot.
 */

/* Cumulative run-queue wait histogram for export: bucket i holds waits < 2^(10+i) ns. */
#define SNAP_RQ_BUCKETS	  24
#define SNAP_RQ_FIRST_LOG 10 /* 2^10 ns = 1.024 us; the last bound 2^33 ns = 8.6 s */

/* Rates and counters of one entity (a cgroup with all its descendants). */
/* An entity's PMU figures: apart, so that a host without events carries none. */
struct snap_pmu_stats {
	double per_s[KQOS_PMU_MAX];
	double running_ratio[KQOS_PMU_MAX];
	__u64 total[KQOS_PMU_MAX];
};

struct snap_stats {
	/* BPF collector: absent (has_cpu false) when no cgroup of the entity ran yet */
	bool has_cpu;
	double cpu_cores; /* over the interval */
	double runs_per_s;
	__u64 rq_waits; /* waits that ended in the interval */
	double rq_wait_mean_ns;
	__u64 rq_p50_ns, rq_p99_ns, rq_max_ns;
	/* no histogram read this tick: the quantiles and max are the last read (collector.histInterval) */
	bool rq_hist_stale;
	/* counters since the model first saw the entity (for Prometheus; docs/snapshot.md) */
	__u64 cpu_ns_total;
	__u64 rq_wait_ns_total;
	__u64 rq_waits_total;
	/*
	 * [SNAP_RQ_BUCKETS] cumulative in le order, +Inf = rq_waits_total; NULL: none. Shared by
	 * the snapshots of the ticks between two histogram reads (snapshot->hist_totals).
	 */
	const __u64 *rq_hist_total;

	/* cpu.stat of the entity's own cgroup (hierarchical in the kernel) */
	bool has_throttle;
	__u64 nr_periods, nr_throttled, throttled_ns; /* counters */
	double throttled_ratio; /* delta nr_throttled / delta nr_periods, 0 when no periods */

	/* PMU, index = snapshot->pmu[] index; absent (pmu_n 0, pmu NULL) without events */
	int pmu_n;
	struct snap_pmu_stats *pmu; /* the snapshot's, set before the stats are made */
	bool has_cpi, has_mpki;
	double cpi, llc_mpki;

	/* memory.stat anon + unevictable (koordinator's pod memory usage); absent until read */
	bool has_memory;
	__u64 mem_used_bytes;
};

struct snap_container {
	const struct pod_container *spec; /* borrowed from the pod list; NULL for walk-only */
	/*
	 * Borrowed from snapshot->pods_list, never NULL: copied, these two were a fifth of the
	 * build at 1000 pods (two cold strings per container per tick).
	 */
	const char *name; /* spec name, or the id's first 12 chars when unknown */
	const char *id; /* "" when unknown */
	char *cgroup; /* relative to the mount, "/..."; NULL when not found; see paths */
	__u64 cgid;
	const char *cpuset; /* effective CPUs of the cgroup, "" when unknown; in cpusets */
	struct snap_stats st;
};

#define SNAP_CGIDS_INLINE 4 /* a pod and a few containers: no allocation per pod per tick */

struct snap_pod {
	const struct pod *pod; /* borrowed from snapshot->pods_list */
	char *cgroup; /* NULL when the pod has no cgroup on this node (yet); see paths */
	__u64 cgid;
	const char *cpuset; /* effective CPUs of the pod cgroup, "" when unknown; in cpusets */
	struct snap_stats st;
	struct snap_container *ctrs;
	size_t nr_ctrs;
	/* every cgroup the collector charged to the pod this tick (its own, its containers' and
	 * any below them), ascending: what the kernel-side watches and placement key on */
	__u64 *cgids; /* cgids_inline while they fit */
	size_t nr_cgids;
	__u64 cgids_inline[SNAP_CGIDS_INLINE];
};

/* Per koordinator class (defaulted class, enum pod_qos index). */
struct snap_class {
	unsigned int pods;
	double cpu_cores;
};

struct snap_node {
	const struct topology *topo; /* the agent's; NULL when sysfs could not be read */
	unsigned int nr_cpus; /* online */
	bool has_cpu_usage;
	double cpu_cores_used; /* /proc/stat user+nice+system+irq+softirq, koordinator's formula */
	bool has_memory;
	__u64 mem_total_bytes;
	__u64 mem_used_bytes; /* MemTotal - MemAvailable */
	/* the cpuset root's effective CPUs: all a cgroup below may hold (a container's share) */
	bool has_root_cpus;
	struct cpumask root_cpus;
	/* kubelet's CPU manager checkpoint (a reference); NULL when absent */
	struct cpumgr_state *cpumgr;
	/* the Kubernetes QoS parent dirs, relative to the mount; "" when there is no kubepods */
	char kubepods[128];
	char besteffort[320];
	char burstable[320];
};

/* resctrl monitoring of one group (class group kqos-LSR/LS/BE or a pod group), per L3 domain. */
#define SNAP_RDT_DOMAINS 16
struct snap_rdt_group {
	/* directory under the resctrl root: "kqos-BE", or a pod's monitoring group in its class
	 * group, "kqos-LS/mon_groups/kqos-pod-<uid>" */
	char name[128];
	char class_name[16]; /* "LSR", "LS", "BE", or "" for a pod group */
	char pod_uid[POD_UID_MAX]; /* pod groups (control or monitoring) only */
	bool is_mon; /* a monitoring group: its figures are part of its class group's */
	char schemata[256]; /* current schemata, lines joined with ';' */
	unsigned int nr_domains;
	__u32 cache_id[SNAP_RDT_DOMAINS];
	bool has_llc[SNAP_RDT_DOMAINS]; /* false for Unavailable/Error/Unassigned or no CMT */
	__u64 llc_bytes[SNAP_RDT_DOMAINS];
	bool has_mbm_total[SNAP_RDT_DOMAINS];
	__u64 mbm_total_bytes[SNAP_RDT_DOMAINS]; /* counter as read */
	double mbm_total_bps[SNAP_RDT_DOMAINS]; /* rate since the previous read */
	bool has_mbm_total_bps[SNAP_RDT_DOMAINS]; /* false: first read, reset or no value */
	bool has_mbm_local[SNAP_RDT_DOMAINS];
	__u64 mbm_local_bytes[SNAP_RDT_DOMAINS];
	double mbm_local_bps[SNAP_RDT_DOMAINS];
	bool has_mbm_local_bps[SNAP_RDT_DOMAINS];
};

/*
 * What is left of the node's CLOSIDs and RMIDs: every group counts, kqos's or not, since they
 * share one pool. Zero capacity means the resource is absent (no allocation, no monitoring).
 */
struct snap_rdt_ids {
	bool has; /* counted this tick */
	unsigned int closids; /* usable CLOSIDs (info/<res>/num_closids, minimum) */
	unsigned int ctrl_groups; /* CTRL_MON groups, the root's included: one CLOSID each */
	unsigned int rmids; /* info/L3_MON/num_rmids */
	unsigned int rmids_used; /* CTRL_MON and MON groups: one RMID each */
};

/* Enforcement state and what the actuator did in a tick: published beside the snapshot. */
#define SNAP_ACTION_KINDS 64
#define SNAP_RECENT	  16
struct snap_action_count {
	char strategy[24];
	char knob[16]; /* "cpuset", "cfs_quota", "shares", "idle", "memory_max", "schemata", ... */
	char result[16]; /* "ok", "skipped", "error", "dry_run" */
	__u64 count; /* since start */
};

struct snap_action {
	__u64 wall_ns;
	char strategy[24];
	char cgroup[128];
	char knob[16];
	char value[64];
	char result[16];
	char why[96];
};

/* The latency guard's state, and how fast the event path reacted. */
#define SNAP_REACT_BUCKETS 12 /* le 50us 100us 200us 500us 1ms 2ms 5ms 10ms 20ms 50ms 100ms 1s */
struct snap_guard {
	bool enabled;
	unsigned int level; /* ladder steps in force */
	unsigned int steps; /* bit per enum guard_step in force */
	__u64 breaches, escalations, back_outs, relaxes; /* since start */
	/* kernel event -> decide -> cgroup write done, of reactions that wrote something */
	__u64 react_count;
	double react_sum_s;
	__u64 react_hist[SNAP_REACT_BUCKETS]; /* cumulative, le order */
	/* the user-space part: ring buffer wakeup handled -> cgroup write done */
	double react_user_sum_s, react_user_max_s;
};

/* cpu_burst: the share pool and each container's burst as asked and as written. */
#define SNAP_BURST_MAX 64
struct snap_burst {
	bool enabled;
	int node_state; /* enum burst_node_state: 0 unknown, 1 idle, 2 cooling, 3 overload */
	double share_pool_used, share_pool_total; /* cores */
	size_t nr; /* rows kept; nr_dropped past SNAP_BURST_MAX */
	size_t nr_dropped;
	struct snap_burst_row {
		char pod[64], ns[64], container[64];
		__u64 asked_us, burst_us;
		__s64 base_quota_us, quota_us; /* quota_us -1: the quota burst is off for it */
	} rows[SNAP_BURST_MAX];
};

/* resctrl control (resctrl_qos and the rdt actuator): groups, failures, task placement. */
#define SNAP_RDT_NO_CLOSID_PODS 16
struct snap_rdt_enforce {
	bool on; /* resctrl control planned this tick */
	unsigned int groups; /* kqos control groups in place */
	unsigned int pod_groups; /* of which kqos-pod-<uid> */
	unsigned int pods_no_closid; /* annotated pods left in their class group (out of CLOSIDs) */
	char no_closid_uid[SNAP_RDT_NO_CLOSID_PODS][64]; /* the first of them */
	__u64 no_closid; /* since start: pod groups refused for want of a CLOSID */
	__u64 schemata_writes, errors; /* since start */
	__u64 groups_created, groups_removed; /* since start */
	unsigned int mon_groups; /* pods' monitoring groups in their class groups */
	__u64 mon_groups_created, no_rmid; /* since start; no_rmid: refused for want of an RMID */
	/* tasks placed: at once on attach events, and by the reconcile (misses of the events) */
	__u64 placed_events, placed_reconcile, misses;
	/* attach event in the kernel -> tid written to the group's tasks */
	__u64 place_count;
	double place_sum_s, place_max_s;
	__u64 place_hist[SNAP_REACT_BUCKETS]; /* cumulative, le order as react_hist */
};

struct snap_enforce {
	bool enabled; /* some strategy is on */
	bool dry_run;
	bool has_be_cpus; /* cpu_suppress cpuset policy: the BE cpuset */
	struct cpumask be_cpus;
	bool has_be_quota; /* cpu_suppress cfsQuota policy: besteffort quota, -1 unlimited */
	int64_t be_quota_us;
	__u64 write_errors;
	size_t nr_counts;
	struct snap_action_count counts[SNAP_ACTION_KINDS];
	size_t nr_recent; /* newest first */
	struct snap_action recent[SNAP_RECENT];
	struct snap_guard guard;
	struct snap_burst burst;
	/* nodeSLO.source "apiserver": where the spec in force comes from */
	struct snap_nodeslo {
		bool apiserver;
		bool stale; /* the last fetch failed; the last good spec stays */
		bool has_spec; /* false: none read yet, the file's nodeSLO is in force */
		char node[64];
		__u64 updates, failures; /* since start */
	} nodeslo;
	struct snap_rdt_enforce rdt;
};

/* Where the collector read the cgroups' counters from this tick (docs/collector.md). */
struct snap_counter_src {
	__u32 slots; /* counter slots in the mapped array (collector.counterSlots) */
	__u32 slotted; /* cgroups read from a slot */
	__u32 hashed; /* cgroups read from the per-CPU hash: past the slots */
	__u64 slot_push_failures; /* freed slots the free stack refused, since start */
	__u32 slots_pending; /* of those, still waiting to be pushed again */
};

/* The kernel's event path: ring buffer figures since start. */
struct snap_events {
	__u64 emitted; /* records submitted */
	__u64 dropped; /* lost to a full ring buffer */
	__u64 suppressed; /* LS waits past target left out by the per-CPU rate limit */
	__u64 queue_lost; /* records user space had no room for between two drains */
	__u64 watches; /* LS cgroups watched */
};

/*
 * Strings that live as long as the last snapshot holding them: the cgroup paths of a layout
 * (snapbuild), made once per pod list or walk, which every snapshot built on it borrows.
 */
struct snap_strings {
	unsigned int refs;
	size_t n, cap;
	char *v[];
};

/* Room for @cap strings, one reference; NULL on -ENOMEM. */
struct snap_strings *snap_strings__new(size_t cap);
struct snap_strings *snap_strings__ref(struct snap_strings *ss);
/* Frees each string with the last reference. NULL-safe. */
void snap_strings__put(struct snap_strings *ss);

/*
 * Entities' wait buckets since start (rq_hist_total), made on a histogram tick and shared by
 * the snapshots until the next: they do not move in between.
 */
struct snap_hist_totals {
	unsigned int refs;
	size_t n; /* entities */
	__u64 v[]; /* n * SNAP_RQ_BUCKETS */
};

/* Room for @n entities' buckets (not zeroed: the maker writes them all), one reference. */
struct snap_hist_totals *snap_hist_totals__new(size_t n);
struct snap_hist_totals *snap_hist_totals__ref(struct snap_hist_totals *t);
void snap_hist_totals__put(struct snap_hist_totals *t);

struct snapshot {
	unsigned int refs;
	/*
	 * snapbuild's one block for pods and containers; NULL: each its own, and their cgroup
	 * strings too (a snapshot made by hand)
	 */
	void *arena;
	/* where pods' and containers' cgroup point (with pods_list): a reference, or NULL */
	struct snap_strings *paths;
	/* the distinct cpuset lists pods and containers point to (snapbuild), or NULL */
	struct snap_strings *cpusets;
	/* where rq_hist_total points: the shared buckets (a reference) and this tick's own */
	struct snap_hist_totals *hist_totals;
	__u64 *hist_own;
	__u64 seq; /* 1, 2, ... per agent run */
	__u64 mono_ns; /* CLOCK_MONOTONIC at the sample */
	__u64 wall_ns; /* CLOCK_REALTIME at the sample */
	double interval_s;
	char hierarchy[16]; /* "v1-cpu" | "v2" */
	char mount[PATH_MAX];

	char pod_source[16]; /* "kubelet" | "file" | "static" | "cgroup" | "none" */
	bool pods_stale; /* the source failed; pods are its last good list */
	struct pod_list *pods_list; /* a reference; NULL when there is no pod source */

	struct snap_node node;
	struct snap_pod *pods;
	size_t nr_pods;
	struct snap_class classes[POD_QOS_SYSTEM + 1];

	/* cgroups that ran but belong to no pod (system services, the root) */
	struct snap_other {
		char *cgroup;
		__u64 cgid;
		struct snap_stats st;
		__u64 hist_total[SNAP_RQ_BUCKETS]; /* where st.rq_hist_total points */
		struct snap_pmu_stats pmu; /* where st.pmu points */
	} * others;
	size_t nr_others;

	int pmu_n;
	struct pmu_event_cfg pmu[KQOS_PMU_MAX];
	unsigned long long dropped_switches;
	struct snap_counter_src counters;
	struct snap_events events;

	bool rdt_enabled; /* resctrl mounted and usable */
	struct snap_rdt_group *rdt;
	size_t nr_rdt;
	struct snap_rdt_ids rdt_ids;
};

struct snapshot *snapshot__new(void);
struct snapshot *snapshot__ref(struct snapshot *s);
/* Drop a reference; frees on the last. NULL-safe. */
void snapshot__put(struct snapshot *s);

/* Borrowed lookup by pod UID; NULL when absent. */
const struct snap_pod *snapshot__pod(const struct snapshot *s, const char *uid);

#endif
