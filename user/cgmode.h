/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_CGMODE_H
#define KQOS_USER_CGMODE_H

#include <limits.h>
#include <linux/types.h>

/*
 * Which hierarchy the BPF collector keys on, resolved once at start from the host:
 * a unified v2 host -> the v2 tree at the root; a v1 or hybrid host -> the v1 cpu controller's
 * mount (cpu or cpu,cpuacct). "v2" on a hybrid host means <root>/unified.
 */
struct cg_hier {
	__u32 bpf_mode; /* KQOS_CG_MODE_* for the collector */
	char mount[PATH_MAX]; /* mount point of that hierarchy */
	const char *name; /* "v2" or "v1-cpu", for logs and output */
};

/* @mode is enum cg_mode_cfg. -ENOENT when the requested hierarchy is not mounted there. */
int cg_hier_resolve(const char *root, __u32 mode, struct cg_hier *ret);

#endif
