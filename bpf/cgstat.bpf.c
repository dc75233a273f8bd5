// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup CPU time and run-queue latency, charged in the kernel.
 *
 * sched_switch charges the time since this CPU's previous switch to prev's cgroup, stamps prev
 * if it was preempted (it goes back to the run queue), and charges next's run-queue wait. The
 * wakeup hooks stamp the woken task. Stamps live in task storage; counters in a per-CPU hash so
 * the hot path touches no shared cache line. Nothing per event leaves the kernel.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "cgstat.h"
#include "core_fixes.bpf.h"

#define TASK_RUNNING 0
#define EEXIST	     17

const volatile __u32 cfg_cgroup_mode = KQOS_CG_MODE_V2;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, KQOS_MAX_CGROUPS_DEFAULT);
	__type(key, __u64);
	__type(value, struct kqos_cg_stats);
} cg_stats SEC(".maps");

struct task_stamp {
	__u64 enqueued_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct task_stamp);
} task_stamps SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kqos_cpu_state);
} cpu_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} events SEC(".maps");

/* The initial value of a new cg_stats entry; never written. */
static const struct kqos_cg_stats zero_stats;

static __always_inline __u64 task_cgroup_id(struct task_struct *t)
{
	struct cgroup *cg;

	if (cfg_cgroup_mode == KQOS_CG_MODE_V1_CPU)
		cg = t->cgroups->subsys[bpf_core_enum_value(enum cgroup_subsys_id, cpu_cgrp_id)]
			     ->cgroup;
	else
		cg = t->cgroups->dfl_cgrp;
	return kernfs_node_id(cg->kn);
}

static __always_inline struct kqos_cg_stats *cg_lookup(__u64 cgid, struct kqos_cpu_state *cpu)
{
	struct kqos_cg_stats *s;
	long err;

	s = bpf_map_lookup_elem(&cg_stats, &cgid);
	if (s)
		return s;
	/* -EEXIST means another CPU created it meanwhile; anything else (a full map) loses it. */
	err = bpf_map_update_elem(&cg_stats, &cgid, &zero_stats, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		cpu->cg_full++;
		return NULL;
	}
	return bpf_map_lookup_elem(&cg_stats, &cgid);
}

static __always_inline void stamp(struct task_struct *t, __u64 now)
{
	struct task_stamp *ts;

	ts = bpf_task_storage_get(&task_stamps, t, NULL, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->enqueued_ns = now;
}

static __always_inline void record_wait(struct kqos_cg_stats *s, __u64 wait)
{
	__u32 slot = kqos_hist_slot(wait);

	s->rq_wait_ns += wait;
	s->rq_wait_cnt++;
	if (wait > s->rq_wait_max_ns)
		s->rq_wait_max_ns = wait;
	/*
	 * kqos_hist_slot() already clamps, but the verifier cannot follow that arithmetic and
	 * clang drops a redundant check: hide the value, then mask (a power of two).
	 */
	barrier_var(slot);
	s->rq_hist[slot & (KQOS_HIST_SLOTS - 1)]++;
}

static __always_inline void switch_in(struct task_struct *next, struct kqos_cg_stats *s, __u64 now)
{
	struct task_stamp *ts;

	s->nr_switch_in++;
	ts = bpf_task_storage_get(&task_stamps, next, NULL, 0);
	if (!ts || !ts->enqueued_ns)
		return;
	if (now > ts->enqueued_ns)
		record_wait(s, now - ts->enqueued_ns);
	ts->enqueued_ns = 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = bpf_ktime_get_ns();
	struct kqos_cg_stats *ps = NULL, *ns;
	struct kqos_cpu_state *cpu;
	__u64 prev_cg = 0, next_cg;
	__u32 zero = 0;

	cpu = bpf_map_lookup_elem(&cpu_state, &zero);
	if (!cpu)
		return 0;

	/* The idle task (pid 0) is neither charged nor stamped, like cpuacct. */
	if (prev->pid) {
		prev_cg = task_cgroup_id(prev);
		if (cpu->last_switch_ns) {
			ps = cg_lookup(prev_cg, cpu);
			if (ps)
				ps->oncpu_ns += now - cpu->last_switch_ns;
		}
		if (get_task_state(prev) == TASK_RUNNING)
			stamp(prev, now);
	}
	cpu->last_switch_ns = now;

	if (!next->pid)
		return 0;
	next_cg = task_cgroup_id(next);
	/* Switches inside one cgroup are common (threads of a pod): skip the second lookup. */
	ns = (ps && next_cg == prev_cg) ? ps : cg_lookup(next_cg, cpu);
	if (ns)
		switch_in(next, ns, now);
	return 0;
}

SEC("tp_btf/sched_wakeup")
int BPF_PROG(sched_wakeup, struct task_struct *p)
{
	stamp(p, bpf_ktime_get_ns());
	return 0;
}

SEC("tp_btf/sched_wakeup_new")
int BPF_PROG(sched_wakeup_new, struct task_struct *p)
{
	stamp(p, bpf_ktime_get_ns());
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
