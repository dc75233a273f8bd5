/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_FAKEFS_H
#define KQOS_TESTS_FAKEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Live tests of the FUSE resctrl fake (tests/fuse/resctrl_fs.c): trees written from a table,
 * the fake served in the foreground so the test owns its pid, and an unmount that cannot hang.
 */

/* $OUTPUT/tests/fuse/kqos-fake-resctrl-fs (or .output/...) into @buf. */
void fakefs_path(char *buf, size_t len);

/*
 * Write a tree under @dir from @files: pairs of relative path and content, NULL-terminated.
 * Parent directories are made; a path ending in '/' is a directory. 0 or -errno.
 */
int fakefs_tree_write(const char *dir, const char *const *files);

/*
 * Serve @src (a directory or a profile) at @mnt in the foreground (-f), with --faults @faults
 * when not NULL; waits until the mount answers. The fake's pid, or -1.
 */
pid_t fakefs_start(const char *src, const char *mnt, const char *faults);
/*
 * Unmount (lazily when busy), then kill @pid if it still runs and reap it, and remove the tree
 * the fake served from (@pid -1: the caller killed it already).
 */
void fakefs_stop(pid_t pid, const char *mnt);

/* A file under the mount into @buf ("" when unreadable); bytes read or -errno. */
int fakefs_read(const char *mnt, const char *rel, char *buf, size_t len);
/* One write() of @text to a file under the mount; 0 or -errno. */
int fakefs_write(const char *mnt, const char *rel, const char *text);
bool fakefs_exists(const char *mnt, const char *rel);
/* A tasks file under the mount lists @pid on a line of its own. */
bool fakefs_has_pid(const char *mnt, const char *rel, pid_t pid);

#endif
