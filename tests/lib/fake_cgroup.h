/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_FAKE_CGROUP_H
#define KQOS_TESTS_FAKE_CGROUP_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Fake cgroup mounts in a fresh temp dir, built from the kernel's documented file formats
 * (ecosystem.md §2.1). Plain files, so writes simply replace the content.
 */
enum fake_cg_layout {
	FAKE_CG_V2, /* unified, controllers cpuset cpu io memory pids */
	FAKE_CG_V1, /* "cpu,cpuacct" plus cpu and cpuacct symlinks, cpuset, memory */
	FAKE_CG_V1_SPLIT, /* cpu, cpuacct, cpuset, memory as separate mounts (this host) */
	FAKE_CG_HYBRID, /* FAKE_CG_V1_SPLIT plus a controller-less cgroup2 at unified/ */
};

struct fake_cg;

int fake_cg__new(enum fake_cg_layout layout, struct fake_cg **ret);
/* Removes the whole tree. NULL-safe. */
void fake_cg__free(struct fake_cg *fc);
const char *fake_cg__root(const struct fake_cg *fc);
/* Create cgroup rel and any missing parents in every hierarchy, each with default files. */
int fake_cg__mkcg(struct fake_cg *fc, const char *rel);
/*
 * Path of file in cgroup rel of the hierarchy holding ctrl ("cpu", "cpuacct", "cpuset",
 * "memory"; ignored on v2). file may be NULL for the directory itself.
 */
int fake_cg__path(const struct fake_cg *fc, const char *ctrl, const char *rel, const char *file,
		  char *buf, size_t size);
int fake_cg__write(const struct fake_cg *fc, const char *ctrl, const char *rel, const char *file,
		   const char *content);
/* Whole file into buf (NUL-terminated). */
int fake_cg__read(const struct fake_cg *fc, const char *ctrl, const char *rel, const char *file,
		  char *buf, size_t size);

/* Recursive removal of a temp tree (no symlink following); shared with the sysfs fakes. */
int fake_rmtree(const char *path);
/* Write content to path, creating missing parent directories. */
int fake_write_file(const char *path, const char *content);

#endif
