/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_BPF_COMMON_H
#define KQOS_BPF_COMMON_H

/*
 * Constants shared by every BPF object and user space. Fixed-width types only: BPF includes
 * this after vmlinux.h, user space after <linux/types.h>.
 */

/* Which cgroup a task is charged to, chosen at load time (cfg_cgroup_mode). */
#define KQOS_CG_MODE_V2		 0 /* task->cgroups->dfl_cgrp: the unified hierarchy */
#define KQOS_CG_MODE_V1_CPU	 1 /* task->cgroups->subsys[cpu_cgrp_id]: the v1 cpu hierarchy */

#define KQOS_MAX_CGROUPS_DEFAULT 16384

#endif
