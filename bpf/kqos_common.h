/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_BPF_COMMON_H
#define KQOS_BPF_COMMON_H

/*
 * Constants shared by every BPF object and user space. Fixed-width types only: BPF includes
 * this after vmlinux.h, user space after <linux/types.h>.
 */

/* Which cgroup a task is charged to, chosen at load time (cfg_cgroup_mode). */
#define KQOS_CG_MODE_V2	    0 /* task->cgroups->dfl_cgrp: the unified hierarchy */
#define KQOS_CG_MODE_V1_CPU 1 /* task->cgroups->subsys[cpu_cgrp_id]: the v1 cpu hierarchy */

/* Where a run-queue wait starts, chosen at load time (cfg_wait_source). */
#define KQOS_WAIT_SCHED_INFO	 0 /* the kernel's task->sched_info.last_queued, in rq clock ns */
#define KQOS_WAIT_STAMPS	 1 /* our own stamps from sched_wakeup*, in bpf_ktime_get_ns */

#define KQOS_MAX_CGROUPS_DEFAULT 16384

#endif
