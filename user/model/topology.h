/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_TOPOLOGY_H
#define KQOS_MODEL_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpulist.h"

/*
 * Node CPU topology (online CPUs, core, socket, NUMA node, SMT siblings and L3 cache id per
 * CPU) and kubelet's CPU manager checkpoint, as values. collect/cputopo.c reads them from sysfs
 * and the kubelet's state dir; everything here is pure.
 */

#define TOPO_ID_NONE (-1)

struct topo_cpu {
	int cpu;
	int core_id; /* topology/core_id: unique only within its socket */
	int socket_id; /* topology/physical_package_id */
	int node_id; /* NUMA node; 0 on kernels without NUMA sysfs */
	int l3_id; /* cache/index<N>/id of the level-3 cache, TOPO_ID_NONE if not exposed */
	struct cpumask siblings; /* topology/thread_siblings_list (includes cpu itself) */
};

struct topology {
	struct cpumask online;
	struct topo_cpu *cpus; /* one per online CPU, ascending cpu number */
	size_t nr_cpus;
	unsigned int nr_sockets;
	unsigned int nr_nodes;
	unsigned int nr_cores; /* distinct (socket, core) pairs */
	unsigned int nr_l3; /* distinct L3 ids, 0 when not exposed */
	bool has_smt; /* some core runs more than one online thread */
};

/* Immutable once loaded. */
void topology__free(struct topology *topo);
/* Borrowed entry of an online CPU, NULL otherwise. Valid until topology__free(). */
const struct topo_cpu *topology__cpu(const struct topology *topo, unsigned int cpu);
/* Online CPUs of one NUMA node / socket / L3 domain (empty mask when the id is unknown). */
void topology__node_cpus(const struct topology *topo, int node, struct cpumask *ret);
void topology__socket_cpus(const struct topology *topo, int socket, struct cpumask *ret);
void topology__l3_cpus(const struct topology *topo, int l3, struct cpumask *ret);

/*
 * kubelet's CPU manager checkpoint (/var/lib/kubelet/cpu_manager_state, koordinator.md §2.3):
 * {"policyName":"static","defaultCpuSet":"0,2-7",
 *  "entries":{"<podUID>":{"<container>":"1"}},"checksum":N}
 */
struct cpumgr_entry {
	char pod_uid[65];
	char container[254];
	struct cpumask cpus;
};

struct cpumgr_state {
	unsigned int refs;
	char policy[32]; /* "static", "none" */
	struct cpumask default_cpus;
	struct cpumgr_entry *entries; /* file order is lost: sorted by pod uid, container */
	size_t nr_entries;
	uint64_t checksum; /* not verified: kubelet's checksum covers Go's encoding */
	bool has_checksum;
};

/*
 * Parse a checkpoint from @buf (@len bytes; 0 = empty file = no state: 0 with *ret NULL).
 * -EINVAL with the field and reason in @err ("entries.<pod>: pod uid not [0-9a-f-]"),
 * -ENOMEM. One reference, owned by the caller.
 */
int cpumgr_state_parse(const char *buf, size_t len, struct cpumgr_state **ret, char *err,
		       size_t err_len);
struct cpumgr_state *cpumgr_state__ref(struct cpumgr_state *st);
/* Drop a reference; frees on the last. NULL-safe. */
void cpumgr_state__put(struct cpumgr_state *st);
/* Union of the CPUs assigned exclusively to containers. */
void cpumgr_state__exclusive_cpus(const struct cpumgr_state *st, struct cpumask *ret);

#endif
