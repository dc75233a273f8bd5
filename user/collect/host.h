/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_HOST_H
#define KQOS_COLLECT_HOST_H

#include <stdint.h>

#include "cgid.h"
#include "podsrc.h"
#include "snapbuild.h"

/*
 * Everything one tick reads from the host besides the BPF maps and resctrl: the pod source,
 * the cgroup walk, the cgroup stat files, /proc, sysfs topology and kubelet's CPU manager
 * checkpoint. It hands the model plain inputs (struct snapbuild_input) and keeps the readers
 * that live across ticks.
 */
struct host;

struct host_opts {
	const char *cgroup_root; /* for the stat files (cgroupfs) */
	const char *mount; /* the hierarchy the collector keys on */
	const char *sys_root;
	const char *proc_root;
	const char *cpu_manager_state; /* the checkpoint's path */
	struct podsrc *src; /* ownership passes to the host; NULL: walk or none */
	bool pods_from_walk; /* the cgroup source */
	uint64_t walk_interval_ns; /* full rescan of the tree (0: HOST_WALK_DEFAULT_NS) */
	uint64_t stat_interval_ns; /* pods' cgroup stat files (0: HOST_STAT_DEFAULT_NS) */
};

#define HOST_WALK_DEFAULT_NS 60000000000ULL
#define HOST_STAT_DEFAULT_NS 1000000000ULL

int host__new(const struct host_opts *opts, struct host **ret);
void host__free(struct host *h);

/* How often the tree is walked without an event, and the stat files read (a reload). */
void host__set_cadence(struct host *h, uint64_t walk_ns, uint64_t stat_ns);

/* Whether pods' memory.stat is read every stat interval (a strategy uses it) or slowly. */
void host__set_pod_memory(struct host *h, bool on);

/* Poll the pod source when due (it keeps its last good list on failure). */
void host__poll_pods(struct host *h, uint64_t now_ns);

/*
 * Fill @in's host fields (pods, walk, files, node, topology, checkpoint, kubepods) for a tick
 * at @now_ns, and resolve the paths of @in->cgs (which the caller filled). What it points to
 * stays valid until the next call.
 */
void host__read(struct host *h, uint64_t now_ns, struct snapbuild_input *in, struct cg_delta *cgs,
		size_t nr_cgs);

/* Cgroups came or went: the next read walks the tree and re-expands the pod source now. */
void host__invalidate(struct host *h);
/* Some cgroup went away unannounced: the next read walks the tree (the pod source stays). */
void host__rewalk(struct host *h);

/* /proc's node CPU and memory now: the baseline of the first interval. */
void host__read_node(struct host *h, struct node_stat *ret);

/* The id of the cgroup at @rel (relative to the mount, "/..."). */
int host__cgid_of(const struct host *h, const char *rel, uint64_t *ret);

/* The id <-> path index of the hierarchy, for reaping vanished cgroups. */
struct cgid_index *host__ids(struct host *h);

#endif
