/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_CGFILES_H
#define KQOS_COLLECT_CGFILES_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroupfs.h"
#include "snapbuild.h"

/*
 * The cgroup files the snapshot shows per pod and container: throttling from cpu.stat, the
 * effective cpuset, memory used from memory.stat, and the cgroup id. Read for the cgroups of the walk's pods and containers
 * and of the pod list's static groups: the cgroups a pod can own.
 */
struct cgfiles {
	struct cg_file_stat *v; /* sorted by path, unique */
	size_t n, cap;
};

#define CGFILES_PATHS  1U /* the cgroups changed: list them again from @walk and @pods */
#define CGFILES_VALUES 2U /* the stat cadence: throttling where a quota ran */
#define CGFILES_ALL    4U /* the slow cadence: every file of every cgroup */
#define CGFILES_MEMORY 8U /* with CGFILES_VALUES: pods' memory.stat too (a strategy uses it) */

/*
 * Keep @f's cgroups those named by @walk and @pods (either may be NULL) below @mount, the
 * hierarchy the ids come from, and read their files through @cg (NULL: no cpu.stat or cpuset
 * figures). A cgroup's id is resolved once per list, and a cgroup new to the list is read in
 * full at once; the others' values stay until read again, and each throttling read keeps the
 * one before (has_prev). The caller picks the cadence with @what. -ENOMEM keeps the last list.
 */
int cgfiles_read(struct cgfiles *f, struct cgroupfs *cg, const char *mount,
		 const struct cgwalk_result *walk, const struct pod_list *pods, unsigned int what,
		 uint64_t now_ns);
void cgfiles_fini(struct cgfiles *f);

/*
 * memory.stat text -> koordinator's memory usage, anon + unevictable with page cache left
 * out: v1 total_active_anon + total_inactive_anon + total_unevictable (hierarchical), v2
 * anon + unevictable. 0, or -ENODATA when a key is missing.
 */
int cgfiles_parse_memory_stat(const char *buf, bool is_v2, __u64 *ret);

#endif
