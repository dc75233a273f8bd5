/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_CGROUP_CGID_H
#define KQOS_CGROUP_CGID_H

#include <stddef.h>
#include <linux/types.h>

/*
 * cgroup id <-> path for one hierarchy (the v1 cpu mount or the v2 unified mount).
 *
 * The id is the directory's kernfs id, the same value the BPF collector reads from
 * kernfs_node::id: name_to_handle_at() returns it as an 8-byte handle. The reverse direction
 * uses open_by_handle_at() on the mount, so a path is found without walking the tree and a
 * removed cgroup is recognised exactly (ESTALE) rather than guessed.
 */
struct cgid_index;

/* @mount_dir is the hierarchy's mount point, e.g. /sys/fs/cgroup/cpu. */
int cgid_index__new(const char *mount_dir, struct cgid_index **ret);
void cgid_index__free(struct cgid_index *idx);

/*
 * Path of @id relative to the mount ("/" for its root, "/kubepods/pod1" below). The string is
 * owned by the index and valid until cgid_index__free or cgid_index__forget of that id.
 * -ESTALE: the cgroup is gone. -ENOENT: the id belongs to no cgroup visible from this mount.
 */
int cgid_index__path(struct cgid_index *idx, __u64 id, const char **ret_path);

/*
 * The same for ids asked in ascending order, as a tick's sorted cgroups are: *@cursor (0 at
 * the first) carries the place of the last, so the index is walked once rather than searched
 * per id.
 */
int cgid_index__path_next(struct cgid_index *idx, __u64 id, size_t *cursor, const char **ret_path);

/* 0 if the cgroup still exists; -ESTALE (and the id is forgotten) if it is gone. */
int cgid_index__check(struct cgid_index *idx, __u64 id);

/* Drop a cached id (its cgroup vanished). */
void cgid_index__forget(struct cgid_index *idx, __u64 id);

size_t cgid_index__size(const struct cgid_index *idx);

/* kernfs id of the cgroup directory at @path (absolute, or relative to the cwd). */
int cgid_of_path(const char *path, __u64 *ret_id);

#endif
