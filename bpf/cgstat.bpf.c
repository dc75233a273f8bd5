// SPDX-License-Identifier: GPL-2.0
/*
 * Per-cgroup CPU time and run-queue latency, charged in the kernel.
 *
 * sched_switch charges the time since this CPU's previous switch to prev's cgroup and next's
 * run-queue wait to next's cgroup. Counters live in a per-CPU hash so the hot path touches no
 * shared cache line; nothing per event leaves the kernel.
 *
 * Where a wait starts: with CONFIG_SCHED_INFO the kernel already stamps every enqueue (wakeup,
 * preemption, migration) in task->sched_info.last_queued with the run-queue clock, and the
 * tracepoint fires before sched_info_arrive() clears it. Reading that stamp and rq->clock
 * (updated by __schedule just before) costs two loads, where bpf_ktime_get_ns() alone costs
 * 110-180 ns on kvm-clock and the wakeup hooks ran on every wakeup (bench/README.md). Without
 * sched_info, the wakeup hooks stamp tasks in task storage instead (KQOS_WAIT_STAMPS).
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
const volatile __u32 cfg_wait_source = KQOS_WAIT_STAMPS;
/* Number of PMU events user space opened (pmu0..pmuN-1 hold per-CPU perf event fds). */
const volatile __u32 cfg_pmu_n = 0;
/*
 * Bit i: event i can be multiplexed (hardware), so read its enabled/running times too. Those
 * cost a clock read per event in perf_event_read_local(); software events never multiplex.
 */
const volatile __u32 cfg_pmu_times = 0;
/* The hierarchy whose cgroup_* events matter: cgroup_root::hierarchy_id (0: the v2 tree). */
const volatile __s32 cfg_hierarchy_id = 0;

/*
 * The smallest wait target in `watch`, or U64_MAX without watches: the one compare every
 * switch-in pays before any lookup. User space writes it through the mmap'ed .data section.
 */
volatile __u64 watch_min_ns = ~0ULL;
/* set by user space while it places tasks in resctrl groups: report forks in managed cgroups */
volatile __u32 fork_events = 0;

/*
 * Counter slots: the first cfg_slots cgroups that run are charged in a plain array that user
 * space maps (BPF_F_MMAPABLE) and reads without a system call. A batch read of the per-CPU
 * hash below cost 0.5 us per cgroup with a loaded CPU, the largest part of a 100 ms tick at
 * 1000 pods. Row (slot, cpu) is at slot * cfg_ncpus + cpu, a cache-line-padded kqos_cg_row, so
 * that user space maps only the prefix of slots in use. Slots come from the free_slots stack (user space fills it and gives back the slots of
 * reaped cgroups); slot_owner[slot] names the cgroup, 0 while free. Once no slot is free,
 * cgroups go to cg_stats as before.
 */
const volatile __u32 cfg_slots = 0;
const volatile __u32 cfg_ncpus = 1; /* possible CPUs: the rows per slot */
/* cleared when a pop found free_slots empty, set again by user space when it frees one */
volatile __u32 slots_free_hint = 1;
/*
 * Set once a cgroup is charged in cg_stats: until then user space skips its batch read, which
 * walks every bucket of the empty map (16384 by default) each tick.
 */
volatile __u32 hash_used = 0;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct kqos_cg_row);
} cg_ctr SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} slot_owner SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
} cg_slot SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK);
	__uint(max_entries, 1);
	__uint(value_size, sizeof(__u32));
} free_slots SEC(".maps");

/*
 * Not preallocated: a cgroup's entries are ~1.2 KB per CPU, so preallocating maxCgroups of them
 * would pin maxCgroups * 1.2 KB * CPUs of kernel memory up front (19 MB per CPU at 16384).
 * Entries are allocated when a cgroup first runs (cg_hist: first waits) and freed when user
 * space reaps it.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, KQOS_MAX_CGROUPS_DEFAULT);
	__type(key, __u64);
	__type(value, struct kqos_cg_stats);
} cg_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, KQOS_MAX_CGROUPS_DEFAULT);
	__type(key, __u64);
	__type(value, struct kqos_cg_hist);
} cg_hist SEC(".maps");

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

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_HASH);
	__uint(max_entries, KQOS_MAX_WATCHES);
	__type(key, __u64);
	__type(value, struct kqos_watch);
} watch SEC(".maps");

/* Cgroups whose new or removed descendants user space wants to hear about at once. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, KQOS_MAX_ROOTS);
	__type(key, __u64);
	__type(value, __u8);
} roots SEC(".maps");

/* Cgroups kqos manages: a task joining one is reported (resctrl placement). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, KQOS_MAX_MANAGED);
	__type(key, __u64);
	__type(value, __u8);
} managed SEC(".maps");

/* One map per event: bpf_perf_event_read_value() takes a map and a CPU index. */
#define PMU_MAP(n)                                           \
	struct {                                             \
		__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY); \
		__uint(key_size, sizeof(__u32));             \
		__uint(value_size, sizeof(__u32));           \
	} n SEC(".maps")

PMU_MAP(pmu0);
PMU_MAP(pmu1);
PMU_MAP(pmu2);
PMU_MAP(pmu3);

/* The initial values of new cg_stats and cg_hist entries; never written. */
static const struct kqos_cg_stats zero_stats;
static const struct kqos_cg_hist zero_hist;

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

static __always_inline struct kqos_cg_stats *slot_row(__u64 cgid)
{
	__u32 *slot = bpf_map_lookup_elem(&cg_slot, &cgid);
	struct kqos_cg_row *r;
	__u32 row;

	if (!slot)
		return NULL;
	row = *slot * cfg_ncpus + bpf_get_smp_processor_id();
	r = bpf_map_lookup_elem(&cg_ctr, &row);
	return r ? &r->s : NULL;
}

/* Give @cgid a free slot; NULL when none is left (or cg_slot is full). */
static __always_inline struct kqos_cg_stats *slot_claim(__u64 cgid)
{
	__u64 *owner;
	__u32 slot;

	if (!cfg_slots || !slots_free_hint)
		return NULL;
	if (bpf_map_pop_elem(&free_slots, &slot)) {
		slots_free_hint = 0;
		return NULL;
	}
	/* Another CPU gave this cgroup a slot meanwhile: use that one, put this one back. */
	if (bpf_map_update_elem(&cg_slot, &cgid, &slot, BPF_NOEXIST)) {
		bpf_map_push_elem(&free_slots, &slot, 0);
		return slot_row(cgid);
	}
	owner = bpf_map_lookup_elem(&slot_owner, &slot);
	if (owner)
		*owner = cgid;
	return slot_row(cgid);
}

static __always_inline struct kqos_cg_stats *cg_lookup(__u64 cgid, struct kqos_cpu_state *cpu)
{
	struct kqos_cg_stats *s;
	long err;

	if (cfg_slots) {
		s = slot_row(cgid);
		if (s)
			return s;
		s = slot_claim(cgid);
		if (s)
			return s;
	}
	s = bpf_map_lookup_elem(&cg_stats, &cgid);
	if (s)
		return s;
	/* -EEXIST means another CPU created it meanwhile; anything else (a full map) loses it. */
	hash_used = 1;
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

static __always_inline struct kqos_cg_hist *hist_lookup(__u64 cgid, struct kqos_cpu_state *cpu)
{
	struct kqos_cg_hist *h;
	long err;

	h = bpf_map_lookup_elem(&cg_hist, &cgid);
	if (h)
		return h;
	err = bpf_map_update_elem(&cg_hist, &cgid, &zero_hist, BPF_NOEXIST);
	if (err && err != -EEXIST) {
		cpu->cg_full++;
		return NULL;
	}
	return bpf_map_lookup_elem(&cg_hist, &cgid);
}

static __always_inline void record_wait(struct kqos_cg_stats *s, __u64 cgid, __u64 wait,
					struct kqos_cpu_state *cpu)
{
	__u32 slot = kqos_hist_slot(wait);
	struct kqos_cg_hist *h;

	s->rq_wait_ns += wait;
	s->rq_wait_cnt++;
	if (wait > s->rq_wait_max_ns)
		s->rq_wait_max_ns = wait;
	h = hist_lookup(cgid, cpu);
	if (!h)
		return;
	/*
	 * kqos_hist_slot() already clamps, but the verifier cannot follow that arithmetic and
	 * clang drops a redundant check: hide the value, then mask (a power of two).
	 */
	barrier_var(slot);
	h->rq_hist[slot & (KQOS_HIST_SLOTS - 1)]++;
}

/*
 * This CPU's rq, reached through @t's root cfs_rq (set for every class, idle included, whenever
 * a task's CPU is set), because the per-CPU `runqueues` symbol is not in kallsyms on kernels
 * without CONFIG_KALLSYMS_ALL. @t must be on this CPU (prev, next or current).
 */
static __always_inline struct rq *this_rq_of(struct task_struct *t)
{
	return t->se.cfs_rq->rq;
}

/* The clock the wait stamps are in: the run-queue clock for sched_info, else ktime. */
static __always_inline __u64 wait_clock(struct task_struct *t)
{
	if (cfg_wait_source == KQOS_WAIT_SCHED_INFO)
		return this_rq_of(t)->clock;
	return bpf_ktime_get_ns();
}

/*
 * The clock CPU time is charged in: rq->clock_task, which the scheduler (and so cpuacct and
 * cpu.stat) charges tasks by. rq->clock also runs while a vCPU is stolen by the host (and
 * through IRQs with IRQ time accounting), so charging by it overstated a pod's CPU time by
 * the steal share: 2-25 % on a loaded 2-vCPU VM.
 */
static __always_inline __u64 task_clock(struct task_struct *t)
{
	/* se.cfs_rq needs CONFIG_FAIR_GROUP_SCHED (a cpu controller); ktime without it */
	if (bpf_core_field_exists(t->se.cfs_rq))
		return this_rq_of(t)->clock_task;
	return bpf_ktime_get_ns();
}

static __always_inline void emit(__u32 type, __u64 cgid, __u64 value, __u64 aux, __u64 ts,
				 struct kqos_cpu_state *cpu)
{
	struct kqos_event *ev = bpf_ringbuf_reserve(&events, sizeof(*ev), 0);

	if (!ev) {
		if (cpu)
			cpu->ev_dropped++;
		return;
	}
	ev->type = type;
	ev->cpu = bpf_get_smp_processor_id();
	ev->cgid = cgid;
	ev->ts_ns = ts;
	ev->value = value;
	ev->aux = aux;
	bpf_ringbuf_submit(ev, 0);
	if (cpu)
		cpu->ev_emitted++;
}

/* A watched LS cgroup waited past its target: tell user space, at most once a ms per CPU. */
static __always_inline void watch_wait(__u64 cgid, __u64 wait, __u64 prev_cg,
				       struct kqos_cpu_state *cpu)
{
	struct kqos_watch *w;
	__u64 now;

	if (wait < watch_min_ns)
		return;
	w = bpf_map_lookup_elem(&watch, &cgid);
	if (!w || wait < w->target_ns)
		return;
	now = bpf_ktime_get_ns();
	if (w->last_emit_ns && now - w->last_emit_ns < KQOS_EV_GAP_NS) {
		w->suppressed++;
		cpu->ev_suppressed++;
		return;
	}
	w->last_emit_ns = now;
	emit(KQOS_EV_LS_WAIT, cgid, wait, prev_cg, now, cpu);
}

/* The run-queue wait that ends now, 0 when none was stamped. */
static __always_inline __u64 wait_of(struct task_struct *next, __u64 now)
{
	struct task_stamp *ts;
	__u64 queued;

	if (cfg_wait_source == KQOS_WAIT_SCHED_INFO) {
		queued = next->sched_info.last_queued;
		return queued && now > queued ? now - queued : 0;
	}
	ts = bpf_task_storage_get(&task_stamps, next, NULL, 0);
	if (!ts || !ts->enqueued_ns)
		return 0;
	queued = ts->enqueued_ns;
	ts->enqueued_ns = 0;
	return now > queued ? now - queued : 0;
}

static __always_inline void switch_in(struct task_struct *next, struct kqos_cg_stats *s, __u64 now,
				      __u64 next_cg, __u64 prev_cg, struct kqos_cpu_state *cpu)
{
	__u64 wait = wait_of(next, now);

	s->nr_switch_in++;
	if (!wait)
		return;
	record_wait(s, next_cg, wait, cpu);
	watch_wait(next_cg, wait, prev_cg, cpu);
}

/*
 * The current reading of event @i on this CPU into @cur: with enabled/running times only for
 * events that multiplex (hardware), since each time read costs a clock read in the kernel.
 * -1 when this CPU has no fd for the event.
 */
static __always_inline int pmu_read(void *map, __u32 i, struct kqos_pmu_reading *cur)
{
	struct bpf_perf_event_value v;
	__u64 c;

	if (cfg_pmu_times & (1U << i)) {
		if (bpf_perf_event_read_value(map, BPF_F_CURRENT_CPU, &v, sizeof(v)))
			return -1;
		cur->counter = v.counter;
		cur->enabled = v.enabled;
		cur->running = v.running;
		return 0;
	}
	/* The plain read returns the count, or -errno folded into the top of the u64 range. */
	c = bpf_perf_event_read(map, BPF_F_CURRENT_CPU);
	if ((__s64)c < 0 && (__s64)c >= -4095)
		return -1;
	cur->counter = c;
	cur->enabled = cur->running = 0;
	return 0;
}

/*
 * Read event @i on this CPU and charge what it counted since the previous switch to @s (the
 * cgroup of the task that was running; NULL for the idle task, which only moves the baseline).
 */
static __always_inline void pmu_charge(void *map, __u32 i, struct kqos_cpu_state *cpu,
				       struct kqos_cg_stats *s)
{
	struct kqos_pmu_reading *last = &cpu->pmu_last[i];
	struct kqos_pmu_reading cur;

	/* No fd for this CPU (offline when events were opened): nothing to charge. */
	if (pmu_read(map, i, &cur)) {
		/* The next good reading only sets a baseline: the gap belongs to nobody known. */
		cpu->pmu_errors++;
		cpu->pmu_valid &= ~(1ULL << i);
		return;
	}
	if (s && (cpu->pmu_valid & (1ULL << i)) && kqos_pmu_continues(last, &cur)) {
		s->pmu_count[i] += kqos_pmu_delta(last->counter, cur.counter);
		s->pmu_enabled[i] += cur.enabled - last->enabled;
		s->pmu_running[i] += cur.running - last->running;
	}
	*last = cur;
	cpu->pmu_valid |= 1ULL << i;
}

static __always_inline void pmu_charge_all(struct kqos_cpu_state *cpu, struct kqos_cg_stats *s)
{
	/* cfg_pmu_n is read-only data: the verifier drops the branches for absent events. */
	if (cfg_pmu_n > 0)
		pmu_charge(&pmu0, 0, cpu, s);
	if (cfg_pmu_n > 1)
		pmu_charge(&pmu1, 1, cpu, s);
	if (cfg_pmu_n > 2)
		pmu_charge(&pmu2, 2, cpu, s);
	if (cfg_pmu_n > 3)
		pmu_charge(&pmu3, 3, cpu, s);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(sched_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u64 now = wait_clock(next), ran_to = task_clock(next);
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
			if (ps && ran_to > cpu->last_switch_ns)
				ps->oncpu_ns += ran_to - cpu->last_switch_ns;
		}
		/* A preempted task goes back to the run queue (sched_info stamps it itself). */
		if (cfg_wait_source == KQOS_WAIT_STAMPS && get_task_state(prev) == TASK_RUNNING)
			stamp(prev, now);
	}
	next_cg = next->pid ? task_cgroup_id(next) : 0;
	/*
	 * While the CPU stays in one cgroup, what the counters count belongs to it: read them only
	 * when the cgroup changes, which skips most reads between threads of one pod. The tick
	 * below keeps long stints current.
	 */
	if (cfg_pmu_n && prev_cg != next_cg) {
		pmu_charge_all(cpu, ps);
		cpu->pmu_read_ns = ran_to;
	}
	cpu->last_switch_ns = ran_to;

	if (!next->pid)
		return 0;
	/* Switches inside one cgroup are common (threads of a pod): skip the second lookup. */
	ns = (ps && next_cg == prev_cg) ? ps : cg_lookup(next_cg, cpu);
	if (ns)
		switch_in(next, ns, now, next_cg, prev_cg, cpu);
	return 0;
}

/*
 * A task that keeps its CPU for seconds would otherwise be charged only when it leaves, so a
 * read in between would miss its current stint. A per-CPU timer event (cpu-clock, 100 Hz)
 * charges what the current task has run since the last switch or tick, and its PMU counts,
 * and moves the base forward: nothing is counted twice or lost. It runs in interrupt context,
 * never inside sched_switch (which runs with interrupts off).
 */
SEC("perf_event")
int cpu_tick(struct bpf_perf_event_data *ctx)
{
	struct task_struct *cur = bpf_get_current_task_btf();
	struct kqos_cpu_state *cpu;
	struct kqos_cg_stats *s;
	__u32 zero = 0;
	__u64 now;

	cpu = bpf_map_lookup_elem(&cpu_state, &zero);
	if (!cpu || !cpu->last_switch_ns || !cur->pid)
		return 0;
	/*
	 * The rq clock may lag by up to a scheduler tick here (on a nohz_full CPU, up to a
	 * second): the rest is charged at the next event, never lost.
	 */
	now = task_clock(cur);
	if (now <= cpu->last_switch_ns)
		return 0;
	s = cg_lookup(task_cgroup_id(cur), cpu);
	if (!s)
		return 0;
	s->oncpu_ns += now - cpu->last_switch_ns;
	cpu->last_switch_ns = now;
	if (cfg_pmu_n) {
		pmu_charge_all(cpu, s);
		cpu->pmu_read_ns = now;
	}
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

/* --- cgroup life cycle ---------------------------------------------------------------------- */

static __always_inline bool in_hierarchy(struct cgroup *cgrp)
{
	return cgrp->root->hierarchy_id == cfg_hierarchy_id;
}

/* Some ancestor of @cgrp (not itself) is a watched root. */
static __always_inline bool below_root(struct cgroup *cgrp)
{
	int level = cgrp->level;

	for (int i = 0; i < KQOS_MAX_DEPTH; i++) {
		struct cgroup *a = NULL;
		__u64 id;

		if (i >= level)
			break;
		bpf_core_read(&a, sizeof(a), &cgrp->ancestors[i]);
		if (!a)
			break;
		id = kernfs_node_id_read(BPF_CORE_READ(a, kn));
		if (bpf_map_lookup_elem(&roots, &id))
			return true;
	}
	return false;
}

static __always_inline __u64 parent_id(struct cgroup *cgrp)
{
	struct cgroup *p = NULL;
	int level = cgrp->level;

	if (level <= 0 || level > 255)
		return 0;
	bpf_core_read(&p, sizeof(p), &cgrp->ancestors[level - 1]);
	return p ? kernfs_node_id_read(BPF_CORE_READ(p, kn)) : 0;
}

static __always_inline void life_event(__u32 type, struct cgroup *cgrp)
{
	__u32 zero = 0;

	if (!in_hierarchy(cgrp) || !below_root(cgrp))
		return;
	emit(type, kernfs_node_id(cgrp->kn), 0, parent_id(cgrp), bpf_ktime_get_ns(),
	     bpf_map_lookup_elem(&cpu_state, &zero));
}

SEC("tp_btf/cgroup_mkdir")
int BPF_PROG(cgroup_mkdir, struct cgroup *cgrp, const char *path)
{
	life_event(KQOS_EV_CG_MKDIR, cgrp);
	return 0;
}

SEC("tp_btf/cgroup_rmdir")
int BPF_PROG(cgroup_rmdir, struct cgroup *cgrp, const char *path)
{
	life_event(KQOS_EV_CG_RMDIR, cgrp);
	return 0;
}

SEC("tp_btf/cgroup_attach_task")
int BPF_PROG(cgroup_attach_task, struct cgroup *dst, const char *path, struct task_struct *task,
	     bool threadgroup)
{
	__u32 zero = 0;
	__u64 id;

	if (!in_hierarchy(dst))
		return 0;
	id = kernfs_node_id(dst->kn);
	if (!bpf_map_lookup_elem(&managed, &id))
		return 0;
	emit(KQOS_EV_CG_ATTACH, id, task->pid, task->tgid, bpf_ktime_get_ns(),
	     bpf_map_lookup_elem(&cpu_state, &zero));
	return 0;
}

/*
 * A task forked inside a managed cgroup, reported like an attach. On hardware a child inherits
 * its parent's CLOSID, so this only places the children of a parent that was not placed yet;
 * it also keeps placement exact where inheritance is not modelled (the resctrl fakes). Off
 * unless user space places tasks: a fork-heavy pod costs one record per fork then.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(sched_process_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 zero = 0;
	__u64 id;

	if (!fork_events)
		return 0;
	id = task_cgroup_id(child);
	if (!bpf_map_lookup_elem(&managed, &id))
		return 0;
	emit(KQOS_EV_CG_ATTACH, id, child->pid, child->tgid, bpf_ktime_get_ns(),
	     bpf_map_lookup_elem(&cpu_state, &zero));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
