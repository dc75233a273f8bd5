// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cgstat.skel.h"
#include "collector.h"
#include "cpulist.h"
#include "cputopo.h"
#include "ctrslots.h"
#include "events.h"
#include "histstore.h"
#include "log.h"
#include "sample.h"

/* Keys per batch lookup: bounds the value buffers (BATCH * ncpus * 136 B). */
#define BATCH 256
/*
 * The same for histograms (1 KB per CPU each): few enough that what the kernel just wrote is
 * still in cache when it is summed; 256 at a time (512 KB on 2 CPUs) were read back from
 * memory.
 */
#define HIST_BATCH 32

struct key_idx {
	__u64 cgid;
	size_t idx; /* where the entry of sorted position i is in the batch order */
	bool moved; /* sort_totals(): position i holds its entry */
};

struct collector {
	struct cgstat_bpf *skel;
	struct kevents *ev;
	struct ctrslots *slots; /* NULL: every cgroup in cg_stats */
	__u32 nslots;
	__u32 last_slotted, last_hashed; /* the last read's cgroups from each */
	struct hist_store hs; /* each cgroup's last read histogram and its increase */
	int ncpus;
	size_t capacity;
	size_t read_cap; /* the slots and cg_stats: entries a read can see before merging */
	__u64 *keys;
	struct kqos_cg_stats *vals; /* BATCH * ncpus per-CPU values */
	struct kqos_cg_hist *hvals; /* the same for histograms */
	struct kqos_cpu_state *cpu_vals;
	struct pmu_set *pmu;
	int pmu_map_fds[KQOS_PMU_MAX];
	__u32 wait_source; /* KQOS_WAIT_* */
	struct bpf_link **tick_links; /* one per CPU, NULL where none */
	int *tick_fds;
	uint64_t *tick_enabled; /* enabled time at the last refresh: a tick that stopped is re-made */
	uint64_t *tick_checked_ns;
	const char *sys_root; /* the caller's (config), outlives the collector */
	struct key_idx *perm; /* collector__read()'s sort order */
	size_t nperm;
	__u64 *last_keys; /* the batch order perm was made for */
	size_t nlast;
};

/* 100 Hz: a stint is charged at most 10 ms late, at ~30 us/s of BPF per CPU. */
#define TICK_PERIOD_NS 10000000ULL

static int open_tick(int cpu)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = TICK_PERIOD_NS,
		.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED,
	};
	int fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int tick_on(struct collector *c, int cpu)
{
	int err;

	c->tick_fds[cpu] = open_tick(cpu);
	if (c->tick_fds[cpu] < 0)
		return c->tick_fds[cpu];
	c->tick_links[cpu] =
		bpf_program__attach_perf_event(c->skel->progs.cpu_tick, c->tick_fds[cpu]);
	if (c->tick_links[cpu])
		return 0;
	err = -errno;
	close(c->tick_fds[cpu]);
	c->tick_fds[cpu] = -1;
	log_err("failed to attach the per-CPU tick", "cpu=%d err=%d", cpu, err);
	return err;
}

static void tick_off(struct collector *c, int cpu)
{
	bpf_link__destroy(c->tick_links[cpu]);
	c->tick_links[cpu] = NULL;
	if (c->tick_fds[cpu] >= 0)
		close(c->tick_fds[cpu]);
	c->tick_fds[cpu] = -1;
}

/* The cpu_tick program on every online CPU (an offline one has nothing to charge). */
static int attach_ticks(struct collector *c)
{
	struct cpumask online;
	int err = cputopo_read_online(c->sys_root, &online);

	if (err)
		return err;
	c->tick_links = calloc(c->ncpus, sizeof(*c->tick_links));
	c->tick_fds = malloc(c->ncpus * sizeof(*c->tick_fds));
	c->tick_enabled = calloc(c->ncpus, sizeof(*c->tick_enabled));
	c->tick_checked_ns = calloc(c->ncpus, sizeof(*c->tick_checked_ns));
	if (!c->tick_links || !c->tick_fds || !c->tick_enabled || !c->tick_checked_ns)
		return -ENOMEM;
	/* All slots empty before any is used: a failure below frees only what was opened. */
	for (int cpu = 0; cpu < c->ncpus; cpu++)
		c->tick_fds[cpu] = -1;
	for (int cpu = 0; cpu < c->ncpus; cpu++)
		if (cpumask_test(&online, cpu) && (err = tick_on(c, cpu)))
			return err;
	return 0;
}

/* A CPU that went offline and came back between two refreshes left a tick that never fires. */
static bool tick_stalled(struct collector *c, int cpu)
{
	__u64 v[2];

	if (read(c->tick_fds[cpu], v, sizeof(v)) != sizeof(v))
		return true;
	return pmu_enabled_fell_behind(&c->tick_enabled[cpu], &c->tick_checked_ns[cpu], v[1]);
}

/* CPU hotplug: a CPU's tick event dies with it; one that comes back needs a new one. */
static void refresh_ticks(struct collector *c)
{
	struct cpumask online;

	if (!c->tick_links || cputopo_read_online(c->sys_root, &online))
		return;
	for (int cpu = 0; cpu < c->ncpus; cpu++) {
		bool on = cpumask_test(&online, cpu);

		if (on && c->tick_links[cpu] && tick_stalled(c, cpu)) {
			tick_off(c, cpu);
			c->tick_enabled[cpu] = c->tick_checked_ns[cpu] = 0;
		}
		if (on && !c->tick_links[cpu])
			tick_on(c, cpu);
		else if (!on && c->tick_links[cpu])
			tick_off(c, cpu);
	}
}

static void detach_ticks(struct collector *c)
{
	for (int cpu = 0; c->tick_links && c->tick_fds && cpu < c->ncpus; cpu++)
		tick_off(c, cpu);
	free(c->tick_links);
	free(c->tick_fds);
	free(c->tick_enabled);
	free(c->tick_checked_ns);
}

/*
 * The kernel keeps task->sched_info (and so /proc/<pid>/schedstat) with CONFIG_SCHED_INFO,
 * which schedstats and delay accounting select: the file has three numbers then.
 */
static bool kernel_has_sched_info(void)
{
	unsigned long long a, b, c;
	FILE *f = fopen("/proc/self/schedstat", "re");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%llu %llu %llu", &a, &b, &c) == 3;
	fclose(f);
	return ok;
}

static __u32 pick_wait_source(__u32 want)
{
	if (want == COLLECTOR_WAIT_STAMPS)
		return KQOS_WAIT_STAMPS;
	if (kernel_has_sched_info())
		return KQOS_WAIT_SCHED_INFO;
	if (want == COLLECTOR_WAIT_SCHED_INFO)
		log_warn("the kernel keeps no sched_info (CONFIG_SCHED_INFO), using wakeup stamps",
			 NULL);
	return KQOS_WAIT_STAMPS;
}

const char *collector__wait_source(const struct collector *c)
{
	return c->wait_source == KQOS_WAIT_SCHED_INFO ? "sched_info" : "wakeup";
}

static int alloc_buffers(struct collector *c)
{
	c->keys = calloc(BATCH, sizeof(*c->keys));
	c->vals = calloc((size_t)BATCH * c->ncpus, sizeof(*c->vals));
	c->hvals = calloc((size_t)HIST_BATCH * c->ncpus, sizeof(*c->hvals));
	c->cpu_vals = calloc(c->ncpus, sizeof(*c->cpu_vals));
	return c->keys && c->vals && c->hvals && c->cpu_vals ? 0 : -ENOMEM;
}

static int install_pmu(struct collector *c)
{
	struct bpf_map *maps[KQOS_PMU_MAX] = { c->skel->maps.pmu0, c->skel->maps.pmu1,
					       c->skel->maps.pmu2, c->skel->maps.pmu3 };
	int err;

	for (int i = 0; i < pmu_set__count(c->pmu); i++) {
		c->pmu_map_fds[i] = bpf_map__fd(maps[i]);
		err = pmu_set__install(c->pmu, i, c->pmu_map_fds[i]);
		if (err) {
			log_err("failed to install PMU event fds", "event=%s err=%d",
				pmu_set__event(c->pmu, i)->name, err);
			return err;
		}
	}
	return 0;
}

static int open_slots(struct collector *c)
{
	struct ctrslots_maps m = { .ctr_fd = bpf_map__fd(c->skel->maps.cg_ctr),
				   .owner_fd = bpf_map__fd(c->skel->maps.slot_owner),
				   .slot_fd = bpf_map__fd(c->skel->maps.cg_slot),
				   .free_fd = bpf_map__fd(c->skel->maps.free_slots),
				   .free_hint = &c->skel->data->slots_free_hint,
				   .nslots = c->nslots,
				   .ncpus = c->ncpus };
	int err;

	if (!c->nslots)
		return 0;
	err = ctrslots__new(&m, &c->slots);
	if (err)
		log_err("failed to map the counter slots", "slots=%u err=%d", c->nslots, err);
	return err;
}

/*
 * The slots take the first cgroups; cg_stats the rest, so that both together hold at most
 * `capacity` (a cgroup in both, which got a slot after its entry, is counted once). A map
 * cannot have 0 entries: unused slot maps get 1, and cfg_slots = 0 keeps BPF off them.
 */
static int size_maps(struct collector *c)
{
	struct cgstat_bpf *k = c->skel;
	__u32 n = c->nslots ? c->nslots : 1, rest = c->capacity - c->nslots;
	int err;

	k->rodata->cfg_slots = c->nslots;
	k->rodata->cfg_ncpus = (__u32)c->ncpus;
	err = bpf_map__set_max_entries(k->maps.cg_ctr, n * (__u32)c->ncpus);
	err = err ?: bpf_map__set_max_entries(k->maps.slot_owner, n);
	err = err ?: bpf_map__set_max_entries(k->maps.cg_slot, n);
	err = err ?: bpf_map__set_max_entries(k->maps.free_slots, n);
	rest = rest < 16 ? 16 : rest;
	c->read_cap = c->nslots + rest;
	err = err ?: bpf_map__set_max_entries(k->maps.cg_stats, rest);
	return err ?: bpf_map__set_max_entries(k->maps.cg_hist, c->capacity);
}

static int load_and_attach(struct collector *c, const struct collector_opts *opts)
{
	int err;

	c->skel->rodata->cfg_cgroup_mode = opts->cgroup_mode;
	c->skel->rodata->cfg_pmu_n = pmu_set__count(c->pmu);
	for (int i = 0; i < pmu_set__count(c->pmu); i++)
		if (pmu_set__needs_times(c->pmu, i))
			c->skel->rodata->cfg_pmu_times |= 1U << i;
	c->wait_source = pick_wait_source(opts->wait_source);
	c->skel->rodata->cfg_wait_source = c->wait_source;
	/* With sched_info the wakeup hooks have nothing to do: not loading them is the saving. */
	if (c->wait_source == KQOS_WAIT_SCHED_INFO) {
		bpf_program__set_autoload(c->skel->progs.sched_wakeup, false);
		bpf_program__set_autoload(c->skel->progs.sched_wakeup_new, false);
	}
	c->skel->rodata->cfg_hierarchy_id = opts->hierarchy_id;
	err = size_maps(c);
	if (err)
		return err;
	err = cgstat_bpf__load(c->skel);
	if (err) {
		log_err("failed to load the cgstat BPF object", "err=%d", err);
		return err;
	}
	/* Before attach, so the first switch already finds every fd and free slot. */
	err = install_pmu(c);
	if (err)
		return err;
	err = open_slots(c);
	if (err)
		return err;
	err = cgstat_bpf__attach(c->skel);
	if (err) {
		log_err("failed to attach the sched tracepoints", "err=%d", err);
		return err;
	}
	return attach_ticks(c);
}

static int open_events(struct collector *c)
{
	struct kevents_maps m = { .ringbuf_fd = bpf_map__fd(c->skel->maps.events),
				  .watch_fd = bpf_map__fd(c->skel->maps.watch),
				  .roots_fd = bpf_map__fd(c->skel->maps.roots),
				  .managed_fd = bpf_map__fd(c->skel->maps.managed),
				  .watch_min_ns = &c->skel->data->watch_min_ns,
				  .fork_events = &c->skel->bss->fork_events,
				  .ncpus = c->ncpus };

	return kevents__new(&m, &c->ev);
}

/*
 * CO-RE against vmlinux's BTF alone. Without an override libbpf also searches every module's BTF
 * for the compat types that vmlinux lacks (kernfs_node_id___old), and listing module BTFs
 * (BPF_BTF_GET_NEXT_ID) needs CAP_SYS_ADMIN: kqos would need it for types it never uses.
 */
#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

int collector__open(const struct collector_opts *opts, struct collector **ret)
{
	LIBBPF_OPTS(bpf_object_open_opts, skel_opts);
	struct collector *c;
	int err;

	if (!access(VMLINUX_BTF, R_OK))
		skel_opts.btf_custom_path = VMLINUX_BTF;

	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->sys_root = opts->sys_root;
	c->capacity = opts->max_cgroups ? opts->max_cgroups : KQOS_MAX_CGROUPS_DEFAULT;
	c->ncpus = libbpf_num_possible_cpus();
	if (c->ncpus <= 0) {
		err = c->ncpus ? c->ncpus : -EINVAL;
		goto err_free;
	}
	if (opts->counter_slots > 0 && (size_t)opts->counter_slots > c->capacity) {
		log_err("more counter slots than cgroups", "slots=%d max_cgroups=%zu",
			opts->counter_slots, c->capacity);
		err = -EINVAL;
		goto err_free;
	}
	if (!opts->counter_slots)
		c->nslots = ctrslots_auto(c->capacity, c->ncpus);
	else if (opts->counter_slots > 0)
		c->nslots = opts->counter_slots;
	/* allocated up front in the kernel: bounded, so that rows * CPUs also fits a u32 */
	if ((size_t)c->nslots * c->ncpus * sizeof(struct kqos_cg_row) > CTRSLOTS_MAX_BYTES) {
		log_err("counter slots would take more than 1 GiB of kernel memory",
			"slots=%u cpus=%d bytes_per_slot_cpu=%zu", c->nslots, c->ncpus,
			sizeof(struct kqos_cg_row));
		err = -E2BIG;
		goto err_free;
	}
	err = alloc_buffers(c);
	if (err)
		goto err_free;
	if (opts->pmu_n) {
		err = pmu_set__open(opts->pmu_events, opts->pmu_n, opts->sys_root, &c->pmu);
		if (err)
			goto err_free;
	}
	c->skel = cgstat_bpf__open_opts(&skel_opts);
	if (!c->skel) {
		err = -errno;
		log_err("failed to open the cgstat BPF object", "err=%d", err);
		goto err_free;
	}
	err = load_and_attach(c, opts);
	if (err)
		goto err_free;
	err = open_events(c);
	if (err)
		goto err_free;
	*ret = c;
	return 0;

err_free:
	collector__free(c);
	return err;
}

void collector__free(struct collector *c)
{
	if (!c)
		return;
	kevents__free(c->ev);
	detach_ticks(c);
	ctrslots__free(c->slots);
	hist_store_fini(&c->hs);
	cgstat_bpf__destroy(c->skel);
	pmu_set__free(c->pmu);
	free(c->keys);
	free(c->vals);
	free(c->hvals);
	free(c->cpu_vals);
	free(c->perm);
	free(c->last_keys);
	free(c);
}

size_t collector__capacity(const struct collector *c)
{
	return c->read_cap;
}

/* @p: CPU 0's copy, the next CPU's @stride bytes further on. */
static void sum_cpus(const struct collector *c, const void *p, size_t stride, __u64 cgid,
		     struct cg_totals *t)
{
	memset(t, 0, sizeof(*t));
	t->cgid = cgid;
	t->no_hist = true;
	for (int cpu = 0; cpu < c->ncpus; cpu++, p = (const char *)p + stride) {
		const struct kqos_cg_stats *v = p;

		t->oncpu_ns += v->oncpu_ns;
		t->nr_switch_in += v->nr_switch_in;
		t->rq_wait_ns += v->rq_wait_ns;
		t->rq_wait_cnt += v->rq_wait_cnt;
		if (v->rq_wait_max_ns > t->rq_wait_max_ns)
			t->rq_wait_max_ns = v->rq_wait_max_ns;
		for (int i = 0; i < KQOS_PMU_MAX; i++) {
			t->pmu_count[i] += v->pmu_count[i];
			t->pmu_enabled[i] += v->pmu_enabled[i];
			t->pmu_running[i] += v->pmu_running[i];
		}
	}
}

/* @buf sorted by cgid: fold neighbours of one id into the first. The new count. */
static size_t merge_dups(struct cg_totals *buf, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++) {
		/* a cgroup that was in cg_stats before it got a slot: one entry, counts summed */
		if (w && buf[w - 1].cgid == buf[i].cgid) {
			totals_add(&buf[w - 1], &buf[i]);
			continue;
		}
		if (w != i)
			memcpy(&buf[w], &buf[i], offsetof(struct cg_totals, rq_hist));
		w++;
	}
	return w;
}

/* The slots claimed, lowest first (free_slots hands them out so): one past the highest. */
static __u32 slots_upto(const volatile __u64 *owner, __u32 nslots)
{
	__u32 upto = nslots;

	while (upto && !owner[upto - 1])
		upto--;
	return upto;
}

/* The slotted cgroups, straight from the mapped rows. */
static int read_slots(struct collector *c, struct cg_totals *buf, size_t cap)
{
	const volatile __u64 *owner;
	const struct kqos_cg_row *rows;
	__u32 upto;
	size_t n = 0;

	if (!c->slots)
		return 0;
	owner = ctrslots__owners(c->slots);
	upto = slots_upto(owner, c->nslots);
	if (!upto)
		return 0; /* nothing claimed yet, nothing mapped */
	rows = ctrslots__rows(c->slots, upto);
	if (!rows)
		return -errno;
	for (__u32 i = 0; i < upto && n < cap; i++) {
		__u64 cgid = owner[i];

		if (cgid)
			sum_cpus(c, &rows[(size_t)i * c->ncpus].s, sizeof(*rows), cgid, &buf[n++]);
	}
	/* a CPU that found the stack empty may have cleared the hint after a release set it */
	if (n < c->nslots)
		ctrslots__hint_free(c->slots);
	return (int)n;
}

static int cmp_key(const void *a, const void *b)
{
	const struct key_idx *x = a, *y = b;

	return x->cgid < y->cgid ? -1 : x->cgid > y->cgid;
}

/* The counters sum_cpus() wrote; the histogram and no_hist are filled after the sort. */
#define TOTALS_HEAD offsetof(struct cg_totals, rq_hist)

/* The batch came in the same key order as last time (no cgroup came or went): same sort. */
static bool same_order(const struct collector *c, const struct cg_totals *buf, size_t n)
{
	if (n != c->nlast)
		return false;
	for (size_t i = 0; i < n; i++)
		if (buf[i].cgid != c->last_keys[i])
			return false;
	return true;
}

static int sort_order(struct collector *c, const struct cg_totals *buf, size_t n)
{
	if (n > c->nperm) {
		struct key_idx *p = realloc(c->perm, n * sizeof(*p));
		__u64 *k = realloc(c->last_keys, n * sizeof(*k));

		if (p)
			c->perm = p;
		if (k)
			c->last_keys = k;
		if (!p || !k)
			return -ENOMEM;
		c->nperm = n;
	}
	for (size_t i = 0; i < n; i++) {
		c->perm[i] = (struct key_idx){ .cgid = buf[i].cgid, .idx = i };
		c->last_keys[i] = buf[i].cgid;
	}
	c->nlast = n;
	qsort(c->perm, n, sizeof(*c->perm), cmp_key);
	return 0;
}

/*
 * Sort @buf by cgid. A hash map's batch order only changes when cgroups come or go, so the
 * last order is kept and reused. Entries move once each, along the permutation's cycles, and
 * only their counters: at this point their histograms are not read yet.
 */
static int sort_totals(struct collector *c, struct cg_totals *buf, size_t n)
{
	char tmp[TOTALS_HEAD];
	int err;

	if (!same_order(c, buf, n) && (err = sort_order(c, buf, n)))
		return err;
	for (size_t i = 0; i < n; i++)
		c->perm[i].moved = false;
	for (size_t i = 0; i < n; i++) {
		size_t j = i;

		if (c->perm[i].moved || c->perm[i].idx == i)
			continue;
		memcpy(tmp, &buf[i], TOTALS_HEAD);
		while (c->perm[j].idx != i) {
			size_t k = c->perm[j].idx;

			memcpy(&buf[j], &buf[k], TOTALS_HEAD);
			c->perm[j].moved = true;
			j = k;
		}
		memcpy(&buf[j], tmp, TOTALS_HEAD);
		c->perm[j].moved = true;
	}
	return 0;
}

static struct cg_totals *find_totals(struct cg_totals *buf, size_t n, __u64 cgid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (buf[mid].cgid < cgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && buf[lo].cgid == cgid ? &buf[lo] : NULL;
}

/* Entry @i of @buf (as the store was synced to it) read as @v, one copy per CPU. */
static void sum_hist(struct collector *c, const struct kqos_cg_hist *v, struct cg_totals *buf,
		     size_t i)
{
	_Static_assert(sizeof(*v) == KQOS_HIST_SLOTS * sizeof(__u32), "rows back to back");
	buf[i].rq_hist = hist_store_read_rows(&c->hs, i, v->rq_hist, c->ncpus, &buf[i].rq_span);
	buf[i].no_hist = !buf[i].rq_hist;
}

/* A cgroup without a cg_hist entry never waited: read, with nothing added. */
static void no_waits(struct cg_totals *buf, size_t i)
{
	static const __u32 none[KQOS_HIST_SLOTS];

	buf[i].rq_hist = none;
	buf[i].rq_span = (struct hist_span){ .lo = KQOS_HIST_SLOTS, .hi = KQOS_HIST_SLOTS };
	buf[i].no_hist = false;
}

/* Every histogram. */
static int read_all_hists(struct collector *c, struct cg_totals *buf, size_t n)
{
	int fd = bpf_map__fd(c->skel->maps.cg_hist);
	__u64 in_batch, out_batch;
	void *in = NULL;
	int err = 0;

	for (size_t i = 0; i < n; i++)
		no_waits(buf, i);
	while (!err) {
		__u32 count = HIST_BATCH;

		err = bpf_map_lookup_batch(fd, in, &out_batch, c->keys, c->hvals, &count, NULL);
		if (err && errno != ENOENT)
			return -errno;
		for (__u32 i = 0; i < count; i++) {
			struct cg_totals *t = find_totals(buf, n, c->keys[i]);

			if (t)
				sum_hist(c, c->hvals + (size_t)i * c->ncpus, buf,
					 (size_t)(t - buf));
		}
		in_batch = out_batch;
		in = &in_batch;
	}
	return 0;
}

/* The watched (LS) cgroups' histograms, one lookup each: the guard needs their p99 each tick. */
static void read_watched_hists(struct collector *c, struct cg_totals *buf, size_t n)
{
	int fd = bpf_map__fd(c->skel->maps.cg_hist);
	const struct wait_watch *w;
	size_t nw = kevents__watch_ids(c->ev, &w);

	for (size_t i = 0; i < nw; i++) {
		struct cg_totals *t = find_totals(buf, n, w[i].cgid);

		if (!t)
			continue;
		if (!bpf_map_lookup_elem(fd, &w[i].cgid, c->hvals))
			sum_hist(c, c->hvals, buf, (size_t)(t - buf));
		else if (errno == ENOENT)
			no_waits(buf, (size_t)(t - buf));
	}
}

/* The cgroups in cg_stats (past the slots), after the @n already in @buf: the new count. */
static int read_hash(struct collector *c, struct cg_totals *buf, size_t cap, size_t n)
{
	int fd = bpf_map__fd(c->skel->maps.cg_stats);
	__u64 in_batch, out_batch;
	void *in = NULL;
	int err = 0;

	/* every cgroup so far has had a slot: the batch would walk empty buckets only */
	if (c->slots && !c->skel->bss->hash_used)
		return (int)n;
	while (!err) {
		__u32 count = BATCH;

		err = bpf_map_lookup_batch(fd, in, &out_batch, c->keys, c->vals, &count, NULL);
		if (err && errno != ENOENT)
			return -errno;
		/* ENOENT marks the last batch, which may still carry entries. */
		for (__u32 i = 0; i < count && n < cap; i++)
			sum_cpus(c, c->vals + (size_t)i * c->ncpus, sizeof(*c->vals), c->keys[i],
				 &buf[n++]);
		in_batch = out_batch;
		in = &in_batch;
	}
	return (int)n;
}

int collector__read(struct collector *c, struct cg_totals *buf, size_t cap, bool all_hists)
{
	int nslotted = read_slots(c, buf, cap), nread;
	size_t n;
	int err;

	if (nslotted < 0)
		return nslotted;
	nread = read_hash(c, buf, cap, (size_t)nslotted);
	if (nread < 0)
		return nread;
	n = (size_t)nread;
	err = sort_totals(c, buf, n);
	if (err)
		return err;
	c->last_slotted = (__u32)nslotted;
	c->last_hashed = (__u32)(n - (size_t)nslotted);
	if (nslotted && n > (size_t)nslotted)
		n = merge_dups(buf, n);
	/* without a store that follows this list, no histogram this tick (quantiles carried) */
	if (hist_store_sync(&c->hs, buf, n))
		return (int)n;
	if (!all_hists) {
		if (c->ev)
			read_watched_hists(c, buf, n);
		return (int)n;
	}
	err = read_all_hists(c, buf, n);
	return err ? err : (int)n;
}

void collector__counter_src(const struct collector *c, struct snap_counter_src *ret)
{
	*ret = (struct snap_counter_src){ .slots = c->nslots,
					  .slotted = c->last_slotted,
					  .hashed = c->last_hashed };
	if (c->slots)
		ctrslots__push_stats(c->slots, &ret->slot_push_failures, &ret->slots_pending);
}

int collector__slot_of(const struct collector *c, __u64 cgid)
{
	__u32 slot;

	if (!c->slots)
		return -ENOENT;
	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.cg_slot), &cgid, &slot))
		return -errno;
	return (int)slot;
}

/* -ENOENT only when the cgroup had neither a slot nor an entry. */
int collector__forget(struct collector *c, __u64 cgid)
{
	int err = bpf_map_delete_elem(bpf_map__fd(c->skel->maps.cg_stats), &cgid) ? -errno : 0;
	int serr = c->slots ? ctrslots__release(c->slots, cgid) : -ENOENT;

	/* a cgroup that never waited has no histogram */
	bpf_map_delete_elem(bpf_map__fd(c->skel->maps.cg_hist), &cgid);
	if (err && err != -ENOENT)
		return err;
	if (serr != -ENOENT)
		return serr;
	return err;
}

static __u64 sum_cpu_state(struct collector *c, size_t off)
{
	__u32 zero = 0;
	__u64 sum = 0;

	if (bpf_map_lookup_elem(bpf_map__fd(c->skel->maps.cpu_state), &zero, c->cpu_vals))
		return 0;
	for (int cpu = 0; cpu < c->ncpus; cpu++)
		sum += *(__u64 *)((char *)&c->cpu_vals[cpu] + off);
	return sum;
}

__u64 collector__dropped(struct collector *c)
{
	return sum_cpu_state(c, offsetof(struct kqos_cpu_state, cg_full));
}

__u64 collector__pmu_errors(struct collector *c)
{
	return sum_cpu_state(c, offsetof(struct kqos_cpu_state, pmu_errors));
}

int collector__pmu_count(const struct collector *c)
{
	return pmu_set__count(c->pmu);
}

const struct pmu_event_cfg *collector__pmu_event(const struct collector *c, int i)
{
	return pmu_set__event(c->pmu, i);
}

int collector__pmu_refresh(struct collector *c)
{
	refresh_ticks(c);
	return pmu_set__refresh(c->pmu, c->pmu_map_fds);
}

struct kevents *collector__kevents(struct collector *c)
{
	return c->ev;
}

void collector__event_stats(struct collector *c, struct snap_events *ret)
{
	ret->emitted = sum_cpu_state(c, offsetof(struct kqos_cpu_state, ev_emitted));
	ret->dropped = sum_cpu_state(c, offsetof(struct kqos_cpu_state, ev_dropped));
	ret->suppressed = sum_cpu_state(c, offsetof(struct kqos_cpu_state, ev_suppressed));
	ret->queue_lost = kevents__lost(c->ev);
	ret->watches = kevents__nr_watches(c->ev);
}
