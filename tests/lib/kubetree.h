/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_KUBETREE_H
#define KQOS_TESTS_KUBETREE_H

#include <stddef.h>
#include <sys/types.h>

/*
 * A nested kubepods v1 tree, as kubelet lays it out, inside the test cgroup
 * kqos-test-<pid>-<tag>: every @rel is relative to that cgroup ("" for itself,
 * "/kubepods/besteffort/pod<uid>" for a pod), so a sweep of the test cgroup takes all of it.
 */

/* Pod uids that name this test process: "<@prefix>-0000-4000-8000-<pid, 12 digits>". */
void kubetree_uid(char *buf, size_t len, const char *prefix);

/*
 * The dirs every tree starts with, parents first, into @dirs[0..2]: /kubepods, a Guaranteed
 * pod dir /kubepods/pod<@g_uid> (it tells kqos where the nested kubepods root is) and
 * /kubepods/besteffort. The count written: the caller's pods follow from there.
 */
#define KUBETREE_DIR_LEN 256
size_t kubetree_dirs(char (*dirs)[KUBETREE_DIR_LEN], const char *g_uid);

/* "<test cgroup of @tag in @ctrl><@rel>[/@file]" into @buf. */
void kubetree_path(char *buf, size_t len, const char *tag, const char *ctrl, const char *rel,
		   const char *file);
/* mkdir the dir @rel; one that is already there is no error. 0 or -errno. */
int kubetree_mkdir(const char *tag, const char *ctrl, const char *rel);
/* rmdir @dirs[@n - 1] down to @dirs[0] (children first), then the test cgroup itself. */
void kubetree_remove(const char *tag, const char *ctrl, char (*dirs)[KUBETREE_DIR_LEN], size_t n);

/* One write() of @val to a file of the tree; 0 or -errno. */
int kubetree_write(const char *tag, const char *ctrl, const char *rel, const char *file,
		   const char *val);
/* A file of the tree into @buf, up to its first newline ("" when unreadable). */
void kubetree_read(const char *tag, const char *ctrl, const char *rel, const char *file, char *buf,
		   size_t n);

#endif
