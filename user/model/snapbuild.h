/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_SNAPBUILD_H
#define KQOS_MODEL_SNAPBUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cgtree.h"
#include "sample.h"
#include "snapshot.h"

/*
 * Assembles the per-tick snapshot from plain inputs, and does nothing else: the collectors
 * (collect/) read the host and hand it what they found. It maps pods and containers to their
 * cgroups, folds the per-cgroup deltas into per-entity stats, and turns counters into rates.
 * It keeps what must survive ticks: 64-bit cumulative counters per cgroup, the previous
 * throttling and /proc/stat readings, and the pods made from the walk.
 */
struct snapbuild;

struct snapbuild_opts {
	const char *hierarchy; /* "v1-cpu" | "v2", for the snapshot */
	const char *mount; /* the hierarchy's mount point */
	const char *pod_source; /* "kubelet" | "file" | "static" | "cgroup" | "none" */
};

int snapbuild__new(const struct snapbuild_opts *opts, struct snapbuild **ret);
void snapbuild__free(struct snapbuild *sb);

/* The cgroup stat files of one pod or container cgroup (collect/cgfiles.c). */
struct cg_file_stat {
	const char *path; /* "/kubepods/...", relative to the mount */
	bool is_pod; /* a pod's (or bare-metal group's) own cgroup, not a container's */
	__u64 read_ns; /* when the files were last read (CLOCK_MONOTONIC); 0: not yet */
	__u64 cgid; /* 0 when unknown */
	bool has_cpu_stat;
	__u64 nr_periods, nr_throttled, throttled_ns; /* cpu.stat counters */
	bool has_prev; /* the read before this one had cpu.stat too: */
	__u64 prev_periods, prev_throttled; /* its counters, for the throttled ratio */
	char cpuset[128]; /* effective CPUs, "" when unknown */
	bool has_memory;
	__u64 mem_used_bytes; /* memory.stat anon + unevictable (koordinator's pod usage) */
};

/* /proc/stat and /proc/meminfo (collect/nodestat.c). */
struct node_stat {
	bool has_cpu;
	__u64 busy_ticks; /* user+nice+system+irq+softirq, koordinator's formula */
	long clk_tck;
	bool has_memory;
	__u64 mem_total_kb, mem_available_kb;
};

/* One tick's inputs. Arrays are borrowed for the call unless said otherwise. */
struct snapbuild_input {
	__u64 dt_ns, mono_ns, wall_ns;
	const struct cg_delta *cgs; /* sorted by cgid, paths resolved where known */
	size_t nr_cgs;
	/* the pod source's list (a reference is taken), or NULL: see pods_from_walk */
	struct pod_list *pods;
	bool pods_from_walk; /* the cgroup source: pods are what the walk found */
	bool pods_stale;
	const struct cgwalk_result *walk; /* the last rescan, or NULL */
	unsigned long walk_gen; /* changes with every rescan */
	const struct cg_file_stat *files; /* sorted by path (strcmp) */
	size_t nr_files;
	unsigned long files_gen; /* changes whenever the list of files (not their values) does */
	struct node_stat node;
	const struct topology *topo; /* the agent's, outlives every snapshot; may be NULL */
	unsigned int nr_online; /* online CPUs, for a node without topology */
	struct cpumgr_state *cpumgr; /* a reference is taken; NULL when absent */
	const char *kubepods; /* the Kubernetes QoS root dir, "" when there is none */
	bool has_root_cpus; /* the cpuset root's effective CPUs */
	struct cpumask root_cpus;
	const struct pmu_event_cfg *pmu;
	int pmu_n;
	unsigned long long dropped;
	struct snap_counter_src counters;
	struct snap_events events;
	bool rdt_enabled;
	struct snap_rdt_group *rdt; /* malloc'd; owned by the snapshot once built */
	size_t nr_rdt;
	struct snap_rdt_ids rdt_ids;
};

/* The readings an interval starts from (taken with the collector's baseline read at start). */
void snapbuild__baseline(struct snapbuild *sb, const struct node_stat *node);

/* A new snapshot (one reference) or NULL on -ENOMEM. In both cases @in->rdt is consumed. */
struct snapshot *snapbuild__build(struct snapbuild *sb, struct snapbuild_input *in);

#endif
