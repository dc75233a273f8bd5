// SPDX-License-Identifier: GPL-2.0
/*
 * The cgstat collector against the kernel's own accounting, on real cgroups with real load.
 * v1: the cpu hierarchy keys the collector, cpuacct.usage is the reference (this host mounts
 * cpu and cpuacct separately, so each load process joins the same-named group in both).
 * v2: the unified tree has no controllers here but its cpu.stat still reports usage_usec.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "cgid.h"
#include "collector.h"
#include "live.h"
#include "rates.h"

#define MAX_CG 16384

static struct collector *col;
static struct cg_totals *buf;
static pid_t kids[8];
static int nkids;
static const char *tags[4];
static int ntags;

static void setup(void)
{
	if (!live_require_root())
		return;
	live_sweep_stale();
	buf = calloc(MAX_CG, sizeof(*buf));
	cr_assert_not_null(buf);
}

/* Back to the root, where the test started: destroying a group kills what is left in it. */
static void self_to_root(void)
{
	static const char *const ctrls[] = { "cpu", "cpuacct" };
	char path[128], pid[32];

	snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	for (size_t i = 0; i < sizeof(ctrls) / sizeof(ctrls[0]); i++) {
		FILE *f;

		snprintf(path, sizeof(path), "%s/%s/cgroup.procs", LIVE_CG_ROOT, ctrls[i]);
		f = fopen(path, "we");
		if (f) {
			fputs(pid, f);
			fclose(f);
		}
	}
}

static void teardown(void)
{
	self_to_root();
	for (int i = 0; i < nkids; i++)
		live_kill(kids[i]);
	for (int i = 0; i < ntags; i++) {
		live_cg_destroy("cpu", tags[i]);
		live_cg_destroy("cpuacct", tags[i]);
		live_cg_destroy("unified", tags[i]);
	}
	collector__free(col);
	free(buf);
}

static __u32 wait_source = COLLECTOR_WAIT_AUTO;
static int counter_slots; /* auto, as kqosd by default */

static void open_collector(__u32 mode)
{
	struct collector_opts o = { .cgroup_mode = mode,
				    .max_cgroups = MAX_CG,
				    .counter_slots = counter_slots,
				    .wait_source = wait_source };

	cr_assert_eq(collector__open(&o, &col), 0, "collector__open");
}

/* A cgroup in each of @ctrls (NULL-terminated) with @n processes at @duty % each. */
static __u64 make_group(const char *tag, const char *const *ctrls, int n, int duty)
{
	char path[512];
	__u64 id;

	tags[ntags++] = tag;
	for (const char *const *c = ctrls; *c; c++)
		cr_assert_eq(live_cg_create(*c, tag), 0, "mkdir %s/%s", *c, tag);
	for (int i = 0; i < n; i++) {
		pid_t pid = live_spawn(duty);

		cr_assert_gt(pid, 0);
		kids[nkids++] = pid;
		for (const char *const *c = ctrls; *c; c++)
			cr_assert_eq(live_cg_attach(*c, tag, pid), 0, "attach %d to %s", pid, *c);
		live_go(pid);
	}
	live_cg_path(path, sizeof(path), ctrls[0], tag);
	cr_assert_eq(cgid_of_path(path, &id), 0);
	return id;
}

static const struct cg_totals *find(const struct cg_totals *v, int n, __u64 id)
{
	for (int i = 0; i < n; i++)
		if (v[i].cgid == id)
			return &v[i];
	return NULL;
}

static struct cg_totals read_one(__u64 id)
{
	return live_totals(col, buf, MAX_CG, id);
}

static __u64 usage_ns(const char *ctrl, const char *tag)
{
	char p[600];
	__u64 v = 0;

	live_cg_path(p, sizeof(p) - 32, ctrl, tag);
	if (!strcmp(ctrl, "unified")) {
		strcat(p, "/cpu.stat");
		cr_assert_eq(live_read_key(p, "usage_usec", &v), 0, "%s", p);
		return v * 1000;
	}
	strcat(p, "/cpuacct.usage");
	cr_assert_eq(live_read_u64(p, &v), 0, "%s", p);
	return v;
}

static void expect_close(__u64 got, __u64 ref, double tol, const char *what)
{
	double err = ref ? ((double)got - (double)ref) / (double)ref : 1;

	cr_log_info("%s: collector %.1f ms, kernel %.1f ms, error %+.2f %%", what, got / 1e6,
		    ref / 1e6, err * 100);
	cr_expect(err <= tol && err >= -tol, "%s: collector %llu ns vs kernel %llu ns (%+.2f %%)",
		  what, (unsigned long long)got, (unsigned long long)ref, err * 100);
}

/* The busy group's id. */
static __u64 cpu_time_matches_cpuacct(void)
{
	static const char *const ctrls[] = { "cpu", "cpuacct", NULL };
	struct cg_totals b0, b1, d0, d1;
	__u64 busy, duty, ub0, ud0;

	open_collector(KQOS_CG_MODE_V1_CPU);
	busy = make_group("busy", ctrls, 1, 100);
	duty = make_group("duty", ctrls, 1, 25);
	live_sleep_ms(300);
	b0 = read_one(busy);
	d0 = read_one(duty);
	ub0 = usage_ns("cpuacct", "busy");
	ud0 = usage_ns("cpuacct", "duty");
	live_sleep_ms(5000);
	b1 = read_one(busy);
	d1 = read_one(duty);
	expect_close(b1.oncpu_ns - b0.oncpu_ns, usage_ns("cpuacct", "busy") - ub0, 0.02, "busy");
	expect_close(d1.oncpu_ns - d0.oncpu_ns, usage_ns("cpuacct", "duty") - ud0, 0.02, "duty");
	/*
	 * Both groups really ran, and the spinning one more than the 25 % one. Absolute shares
	 * depend on what else the machine runs, so they are not asserted.
	 */
	cr_expect_gt(d1.oncpu_ns - d0.oncpu_ns, 100000000ULL);
	cr_expect_gt(b1.oncpu_ns - b0.oncpu_ns, d1.oncpu_ns - d0.oncpu_ns);
	return busy;
}

Test(collector, cpu_time_matches_cpuacct_within_2pct, .init = setup, .fini = teardown,
     .timeout = 60)
{
	__u64 busy = cpu_time_matches_cpuacct();

	cr_expect_geq(collector__slot_of(col, busy), 0, "the default slots should hold it");
}

Test(collector, hash_only_cpu_time_matches_cpuacct, .init = setup, .fini = teardown, .timeout = 60)
{
	counter_slots = -1;
	cr_expect_lt(collector__slot_of(col, cpu_time_matches_cpuacct()), 0);
}

static int count_of(const struct cg_totals *v, int n, __u64 id)
{
	int k = 0;

	for (int i = 0; i < n; i++)
		k += v[i].cgid == id;
	return k;
}

/* Free every slot but @keep's: the cgroups that held them are live, their counts restart. */
static void free_slots_but(__u64 keep)
{
	int n = collector__read(col, buf, MAX_CG, false);

	for (int i = 0; i < n; i++)
		if (buf[i].cgid != keep && collector__slot_of(col, buf[i].cgid) >= 0)
			collector__forget(col, buf[i].cgid);
}

/*
 * A spinning group @tag made after the collector's only slot went to the host's own cgroups:
 * counted in cg_stats. Its totals and cpuacct usage at that point into @t0 and @u0.
 */
static __u64 group_past_the_slot(const char *tag, struct cg_totals *t0, __u64 *u0)
{
	static const char *const ctrls[] = { "cpu", "cpuacct", NULL };
	__u64 id;

	counter_slots = 1;
	open_collector(KQOS_CG_MODE_V1_CPU);
	live_sleep_ms(300);
	id = make_group(tag, ctrls, 1, 100);
	live_sleep_ms(200);
	cr_assert_lt(collector__slot_of(col, id), 0, "the one slot should be the host's by now");
	*t0 = read_one(id);
	*u0 = usage_ns("cpuacct", tag);
	return id;
}

/*
 * One slot, taken by the host's own cgroups within ms of the load (the root cgroup, where this
 * test runs, switches all the time): the test's cgroup starts in cg_stats. Then this process
 * joins it and frees the slot, so its own next switch claims the slot for the group, which
 * from then on lives in both: one entry, its counts summed, still matching cpuacct.
 */
Test(collector, a_cgroup_moved_from_the_hash_to_a_slot_is_read_once_and_whole, .init = setup,
     .fini = teardown, .timeout = 60)
{
	struct cg_totals t0, t1;
	__u64 u0, id = group_past_the_slot("moved", &t0, &u0);
	int n, tries;

	cr_assert_gt(t0.oncpu_ns, 0, "counted in cg_stats meanwhile");
	cr_assert_eq(live_cg_attach("cpu", "moved", getpid()), 0);
	cr_assert_eq(live_cg_attach("cpuacct", "moved", getpid()), 0);
	/* another CPU's switch can still win the slot: then free it again */
	for (tries = 0; tries < 100 && collector__slot_of(col, id) < 0; tries++) {
		free_slots_but(id);
		live_sleep_ms(5);
	}
	cr_assert_geq(collector__slot_of(col, id), 0, "no slot claimed after %d frees", tries);
	cr_log_info("moved: a slot after %d frees", tries);
	live_sleep_ms(2000);
	n = collector__read(col, buf, MAX_CG, false);
	cr_expect_eq(count_of(buf, n, id), 1);
	t1 = read_one(id);
	expect_close(t1.oncpu_ns - t0.oncpu_ns, usage_ns("cpuacct", "moved") - u0, 0.02, "moved");
}

/* Slots run out: the rest still counts, each cgroup once. */
Test(collector, cgroups_past_the_slots_are_counted_in_the_hash, .init = setup, .fini = teardown,
     .timeout = 60)
{
	struct cg_totals t0, t1;
	__u64 u0, id = group_past_the_slot("past", &t0, &u0);
	int n;

	live_sleep_ms(2000);
	n = collector__read(col, buf, MAX_CG, false);
	cr_expect_eq(count_of(buf, n, id), 1);
	for (int i = 1; i < n; i++)
		cr_expect_lt(buf[i - 1].cgid, buf[i].cgid, "sorted, no duplicates");
	t1 = read_one(id);
	expect_close(t1.oncpu_ns - t0.oncpu_ns, usage_ns("cpuacct", "past") - u0, 0.02, "past");
}

Test(collector, crowded_cgroup_waits_and_idle_one_does_not, .init = setup, .fini = teardown,
     .timeout = 60)
{
	static const char *const ctrls[] = { "cpu", NULL };
	struct cg_totals c0, c1, i0, i1, d;
	__u64 crowded, idle;
	struct test_rate r;

	open_collector(KQOS_CG_MODE_V1_CPU);
	crowded = make_group("crowded", ctrls, 3, 100);
	idle = make_group("idle", ctrls, 1, 0);
	live_sleep_ms(300);
	c0 = read_one(crowded);
	i0 = read_one(idle);
	live_sleep_ms(2000);
	c1 = read_one(crowded);
	/* before the next read: c1's histogram is the collector's until then */
	cr_assert_eq(test_rates(&c0, 1, &c1, 1, 2000000000ULL, NULL, 0, &r, 1), 1);
	i1 = read_one(idle);

	/* Three spinning tasks on two CPUs: the scheduler keeps preempting them. */
	totals_delta(&c0, &c1, &d);
	cr_expect_gt(d.rq_wait_cnt, 10, "waits=%llu", (unsigned long long)d.rq_wait_cnt);
	cr_expect_gt(d.rq_wait_ns, 100000000ULL, "wait ns=%llu", (unsigned long long)d.rq_wait_ns);
	cr_expect_gt(r.st.rq_p99_ns, 1000000ULL, "p99=%llu", (unsigned long long)r.st.rq_p99_ns);
	cr_expect_leq(r.st.rq_p50_ns, r.st.rq_p99_ns);
	cr_expect_leq(r.st.rq_p99_ns, r.st.rq_max_ns);
	cr_log_info("crowded: %llu waits, p50 %llu us, p99 %llu us, max %llu us",
		    (unsigned long long)r.st.rq_waits, (unsigned long long)r.st.rq_p50_ns / 1000,
		    (unsigned long long)r.st.rq_p99_ns / 1000,
		    (unsigned long long)r.st.rq_max_ns / 1000);

	/* A task blocked in pause() is never woken: no runs, no waits, no CPU. */
	cr_expect_eq(i1.rq_wait_cnt - i0.rq_wait_cnt, 0);
	cr_expect_eq(i1.nr_switch_in - i0.nr_switch_in, 0);
	cr_expect_eq(i1.oncpu_ns - i0.oncpu_ns, 0);
}

/* The fallback for kernels without CONFIG_SCHED_INFO: our own stamps from the wakeup hooks. */
Test(collector, wakeup_stamps_fallback_sees_the_same_waits, .init = setup, .fini = teardown,
     .timeout = 60)
{
	static const char *const ctrls[] = { "cpu", NULL };
	struct cg_totals c0, c1, d;
	__u64 crowded;

	wait_source = COLLECTOR_WAIT_STAMPS;
	open_collector(KQOS_CG_MODE_V1_CPU);
	cr_assert_str_eq(collector__wait_source(col), "wakeup");
	crowded = make_group("stamps", ctrls, 3, 100);
	live_sleep_ms(300);
	c0 = read_one(crowded);
	live_sleep_ms(1500);
	c1 = read_one(crowded);
	totals_delta(&c0, &c1, &d);
	cr_log_info("stamps: %llu waits, %.1f ms waited, %.1f ms on CPU", d.rq_wait_cnt,
		    d.rq_wait_ns / 1e6, d.oncpu_ns / 1e6);
	cr_expect_gt(d.rq_wait_cnt, 10);
	cr_expect_gt(d.rq_wait_ns, 100000000ULL);
	cr_expect_gt(d.oncpu_ns, 500000000ULL);
}

Test(collector, v2_mode_keys_on_the_unified_cgroup_id, .init = setup, .fini = teardown,
     .timeout = 60)
{
	static const char *const ctrls[] = { "unified", NULL };
	struct cg_totals t0, t1;
	__u64 id, u0;

	open_collector(KQOS_CG_MODE_V2);
	id = make_group("v2busy", ctrls, 1, 100);
	live_sleep_ms(300);
	t0 = read_one(id);
	u0 = usage_ns("unified", "v2busy");
	live_sleep_ms(5000);
	t1 = read_one(id);
	cr_expect_gt(t1.nr_switch_in, 0, "the v2 id %llu was never charged",
		     (unsigned long long)id);
	expect_close(t1.oncpu_ns - t0.oncpu_ns, usage_ns("unified", "v2busy") - u0, 0.02, "v2busy");
}

Test(collector, vanished_cgroup_is_detected_and_forgotten, .init = setup, .fini = teardown,
     .timeout = 30)
{
	static const char *const ctrls[] = { "cpu", NULL };
	struct cgid_index *idx;
	const char *path;
	__u64 id;

	open_collector(KQOS_CG_MODE_V1_CPU);
	id = make_group("gone", ctrls, 1, 100);
	live_sleep_ms(200);
	cr_assert_eq(cgid_index__new(LIVE_CG_ROOT "/cpu", &idx), 0);
	cr_assert_eq(cgid_index__path(idx, id, &path), 0);
	cr_expect_not_null(strstr(path, "kqos-test-"), "%s", path);
	cr_expect_not_null(find(buf, collector__read(col, buf, MAX_CG, true), id));

	live_kill(kids[--nkids]);
	live_cg_destroy("cpu", "gone");
	cr_expect_eq(cgid_index__check(idx, id), -ESTALE);
	cr_expect_eq(collector__forget(col, id), 0);
	cr_expect_null(find(buf, collector__read(col, buf, MAX_CG, true), id));
	cgid_index__free(idx);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* A tick's walk of the index (ids in order) finds what a search per id finds, known or new. */
Test(collector, ids_asked_in_order_resolve_as_one_by_one, .init = setup, .fini = teardown,
     .timeout = 30)
{
	static const char *const ctrls[] = { "cpu", NULL };
	const char *tag[3] = { "ord-a", "ord-b", "ord-c" };
	const char *want[3], *got;
	struct cgid_index *idx, *one;
	__u64 id[3];
	size_t cursor = 0;

	for (int i = 0; i < 3; i++)
		id[i] = make_group(tag[i], ctrls, 0, 0);
	qsort(id, 3, sizeof(id[0]), cmp_u64);
	cr_assert_eq(cgid_index__new(LIVE_CG_ROOT "/cpu", &idx), 0);
	cr_assert_eq(cgid_index__new(LIVE_CG_ROOT "/cpu", &one), 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(cgid_index__path(one, id[i], &want[i]), 0);
	/* a new index, the same index again, then out of order: each from its place */
	for (int pass = 0; pass < 2; pass++, cursor = 0)
		for (int i = 0; i < 3; i++) {
			cr_assert_eq(cgid_index__path_next(idx, id[i], &cursor, &got), 0);
			cr_expect_str_eq(got, want[i], "pass %d id %d", pass, i);
		}
	for (int i = 2; i >= 0; i--) {
		cr_assert_eq(cgid_index__path_next(idx, id[i], &cursor, &got), 0);
		cr_expect_str_eq(got, want[i], "backwards, id %d", i);
	}
	cr_expect_eq(cgid_index__size(idx), cgid_index__size(one));
	cgid_index__free(idx);
	cgid_index__free(one);
}
