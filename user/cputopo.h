/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_CPUTOPO_H
#define KQOS_USER_CPUTOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cpulist.h"

/*
 * (Named cputopo, not topology: the Makefile links user/top*.c into kqos-top.)
 *
 * Node CPU topology read from sysfs (no lscpu): online CPUs, core, socket, NUMA node, SMT
 * siblings and L3 cache id per CPU. The sysfs root is configurable for tests ("/sys" when
 * NULL); paths below it are the kernel's devices/system/{cpu,node}/.
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

/*
 * Read the topology. -ENOENT when devices/system/cpu/online is missing; -EINVAL (logged with
 * the file) when a file holds garbage; a CPU without topology files keeps TOPO_ID_NONE ids.
 * Owned by the caller: topology__free(). Immutable after load.
 */
int topology__load(const char *sysfs_root, struct topology **ret);
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
#define CPUMGR_STATE_DEFAULT_PATH "/var/lib/kubelet/cpu_manager_state"

struct cpumgr_entry {
	char pod_uid[65];
	char container[254];
	struct cpumask cpus;
};

struct cpumgr_state {
	char policy[32]; /* "static", "none" */
	struct cpumask default_cpus;
	struct cpumgr_entry *entries; /* file order is lost: sorted by pod uid, container */
	size_t nr_entries;
	uint64_t checksum; /* not verified: kubelet's checksum covers Go's encoding */
	bool has_checksum;
};

/*
 * Load the checkpoint (path NULL -> CPUMGR_STATE_DEFAULT_PATH). A missing or empty file is
 * "no state": returns 0 with *ret = NULL. Malformed JSON or a bad field -> -EINVAL, logged with
 * the file and the field. Owned by the caller: cpumgr_state__free().
 */
int cpumgr_state__load(const char *path, struct cpumgr_state **ret);
void cpumgr_state__free(struct cpumgr_state *st);
/* Union of the CPUs assigned exclusively to containers. */
void cpumgr_state__exclusive_cpus(const struct cpumgr_state *st, struct cpumask *ret);

#endif
