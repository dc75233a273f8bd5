/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_CPUTOPO_H
#define KQOS_COLLECT_CPUTOPO_H

#include <stdint.h>

#include "topology.h"

/*
 * Readers of the node's CPU facts: sysfs (no lscpu) below a configurable root ("/sys" when
 * NULL; paths below it are the kernel's devices/system/{cpu,node}/), and kubelet's CPU manager
 * checkpoint.
 */

/* devices/system/cpu/online below @sysfs_root: the one place kqos learns which CPUs are up. */
int cputopo_read_online(const char *sysfs_root, struct cpumask *ret);

/*
 * Read the topology. -ENOENT when devices/system/cpu/online is missing; -EINVAL (logged with
 * the file) when a file holds garbage; a CPU without topology files keeps TOPO_ID_NONE ids.
 * Owned by the caller: topology__free(). Immutable after load.
 */
int topology__load(const char *sysfs_root, struct topology **ret);

#define CPUMGR_STATE_DEFAULT_PATH "/var/lib/kubelet/cpu_manager_state"

/*
 * Load the checkpoint (path NULL -> CPUMGR_STATE_DEFAULT_PATH). A missing or empty file is
 * "no state": returns 0 with *ret = NULL. Malformed JSON or a bad field -> -EINVAL, logged with
 * the file and the field. One reference, owned by the caller: cpumgr_state__put().
 */
int cpumgr_state__load(const char *path, struct cpumgr_state **ret);

/*
 * The checkpoint as the agent sees it: re-read when its mtime changes, checked at most every
 * @check_ns. A file that turns malformed keeps the last good state (logged once by the loader).
 */
struct cpumgr_watch;
int cpumgr_watch__new(const char *path, uint64_t check_ns, struct cpumgr_watch **ret);
void cpumgr_watch__free(struct cpumgr_watch *w);
/* Borrowed; NULL when there is no state. Take a reference to keep it past the next poll. */
struct cpumgr_state *cpumgr_watch__poll(struct cpumgr_watch *w, uint64_t now_ns);

#endif
