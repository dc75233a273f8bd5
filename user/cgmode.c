// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "cgmode.h"
#include "cgstat.h"
#include "config.h"

static long fs_magic(const char *path)
{
	struct statfs st;

	if (statfs(path, &st))
		return -errno;
	return (long)st.f_type;
}

static int use(struct cg_hier *h, __u32 bpf_mode, const char *dir, const char *name)
{
	if (snprintf(h->mount, sizeof(h->mount), "%s", dir) >= (int)sizeof(h->mount))
		return -ENAMETOOLONG;
	h->bpf_mode = bpf_mode;
	h->name = name;
	return 0;
}

static int find_v1_cpu(const char *root, struct cg_hier *h)
{
	/* Distributions mount the cpu controller alone or together with cpuacct. */
	static const char *const dirs[] = { "cpu,cpuacct", "cpu", "cpuacct,cpu" };
	char path[PATH_MAX];

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
		if (fs_magic(path) == CGROUP_SUPER_MAGIC)
			return use(h, KQOS_CG_MODE_V1_CPU, path, "v1-cpu");
	}
	return -ENOENT;
}

int cg_hier_resolve(const char *root, __u32 mode, struct cg_hier *h)
{
	char unified[PATH_MAX];
	bool root_is_v2 = fs_magic(root) == CGROUP2_SUPER_MAGIC;

	snprintf(unified, sizeof(unified), "%s/unified", root);
	switch (mode) {
	case CG_MODE_V1:
		return find_v1_cpu(root, h);
	case CG_MODE_V2:
		if (root_is_v2)
			return use(h, KQOS_CG_MODE_V2, root, "v2");
		if (fs_magic(unified) == CGROUP2_SUPER_MAGIC)
			return use(h, KQOS_CG_MODE_V2, unified, "v2");
		return -ENOENT;
	default:
		if (root_is_v2)
			return use(h, KQOS_CG_MODE_V2, root, "v2");
		return find_v1_cpu(root, h);
	}
}
