// SPDX-License-Identifier: GPL-2.0
/* Snapshot assembly from canned inputs: no root, no files, no BPF. */
#define _GNU_SOURCE
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapbuild.h"

#define NSEC 1000000000ULL
#define UID  "0a1b2c3d-0000-4000-8000-000000000001"
#define POD  "kubepods/burstable/pod" UID
#define CTR  POD "/0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static struct snapbuild *sb;
static struct cgwalk_result walk;
static struct cgwalk_pod wpod;
static struct cgwalk_container wctr;
static struct cg_delta d[3];
static __u32 hist[3][KQOS_HIST_SLOTS]; /* d[i]'s histogram increase */
static struct snapbuild_input in;

/* One walked Burstable pod with one container, and the system slice that ran beside it. */
static void setup(void)
{
	struct snapbuild_opts o = { .hierarchy = "v1-cpu", .mount = "/m", .pod_source = "cgroup" };

	cr_assert_eq(snapbuild__new(&o, &sb), 0);
	memset(&wctr, 0, sizeof(wctr));
	snprintf(wctr.id, sizeof(wctr.id), "%s", strrchr(CTR, '/') + 1);
	wctr.path = (char *)CTR;
	memset(&wpod, 0, sizeof(wpod));
	snprintf(wpod.uid, sizeof(wpod.uid), "%s", UID);
	wpod.qos = CGWALK_QOS_BURSTABLE;
	wpod.path = (char *)POD;
	wpod.containers = &wctr;
	wpod.nr_containers = 1;
	walk = (struct cgwalk_result){ .pods = &wpod, .nr_pods = 1 };
	memset(d, 0, sizeof(d));
	d[0] = (struct cg_delta){ .d = { .cgid = 10, .oncpu_ns = NSEC / 4 }, .path = "/" POD };
	d[1] = (struct cg_delta){ .d = { .cgid = 11, .oncpu_ns = NSEC / 2, .nr_switch_in = 50 },
				  .path = "/" CTR };
	d[2] = (struct cg_delta){ .d = { .cgid = 12, .oncpu_ns = NSEC / 10 },
				  .path = "/system.slice/sshd.service" };
	memset(hist, 0, sizeof(hist));
	for (int i = 0; i < 3; i++)
		d[i].d.rq_hist = hist[i];
	in = (struct snapbuild_input){ .dt_ns = NSEC,
				       .mono_ns = 5 * NSEC,
				       .wall_ns = 7 * NSEC,
				       .cgs = d,
				       .nr_cgs = 3,
				       .pods_from_walk = true,
				       .walk = &walk,
				       .walk_gen = 1,
				       .nr_online = 2,
				       .kubepods = "" };
}

static void teardown(void)
{
	snapbuild__free(sb);
}

TestSuite(snapbuild, .init = setup, .fini = teardown);

Test(snapbuild, walked_pod_owns_its_cgroups_and_the_rest_are_others)
{
	struct snapshot *s = snapbuild__build(sb, &in);
	const struct snap_pod *p;

	cr_assert_not_null(s);
	cr_assert_eq(s->seq, 1);
	cr_assert_str_eq(s->pod_source, "cgroup");
	cr_assert_str_eq(s->hierarchy, "v1-cpu");
	cr_assert_eq(s->nr_pods, 1);
	p = &s->pods[0];
	cr_assert_str_eq(p->cgroup, "/" POD);
	cr_assert_eq(p->pod->qos, POD_QOS_LS, "Burstable without a label is LS");
	cr_assert_eq(p->nr_ctrs, 1);
	cr_assert_str_eq(p->ctrs[0].cgroup, "/" CTR);
	/* a container's cgroup counts for its pod too */
	cr_assert_float_eq(p->ctrs[0].st.cpu_cores, 0.5, 1e-9);
	cr_assert_float_eq(p->st.cpu_cores, 0.75, 1e-9);
	cr_assert_float_eq(p->ctrs[0].st.runs_per_s, 50, 1e-9);
	cr_assert_eq(s->classes[POD_QOS_LS].pods, 1);
	cr_assert_eq(s->nr_others, 1);
	cr_assert_str_eq(s->others[0].cgroup, "/system.slice/sshd.service");
	cr_assert_eq(p->nr_cgids, 2, "the pod's and its container's cgroups");
	cr_assert(p->cgids[0] == 10 && p->cgids[1] == 11);
	cr_assert_eq(s->node.nr_cpus, 2, "no topology: the online count");
	snapshot__put(s);
}

/*
 * A pod's and a container's counters since start are the entity's, not its cgroups': they go
 * on when a cgroup leaves the maps and comes back. An "other" is its cgroup: it starts over.
 */
Test(snapbuild, cumulative_counters_carry_over_entities_keep_theirs_others_start_over)
{
	struct snapshot *s1 = snapbuild__build(sb, &in), *s2, *s3;

	s2 = snapbuild__build(sb, &in);
	cr_assert_eq(s2->pods[0].ctrs[0].st.cpu_ns_total, NSEC, "two intervals of 0.5 s");
	cr_assert_eq(s2->pods[0].st.cpu_ns_total, 3 * NSEC / 2, "its own and its container's");
	cr_assert_eq(s2->others[0].st.cpu_ns_total, NSEC / 5);
	cr_assert_eq(s2->seq, 2);
	in.nr_cgs = 1; /* the container and the other left the maps */
	s3 = snapbuild__build(sb, &in);
	cr_assert_eq(s3->pods[0].ctrs[0].st.cpu_ns_total, 0, "no cgroup ran: nothing shown");
	in.nr_cgs = 3;
	snapshot__put(s3);
	s3 = snapbuild__build(sb, &in);
	cr_assert_eq(s3->pods[0].ctrs[0].st.cpu_ns_total, 3 * NSEC / 2, "the container goes on");
	cr_assert_eq(s3->pods[0].st.cpu_ns_total, 5 * NSEC / 2);
	cr_assert_eq(s3->others[0].st.cpu_ns_total, NSEC / 10, "a returning other starts over");
	snapshot__put(s1);
	snapshot__put(s2);
	snapshot__put(s3);
}

/* A new pod list or walk remakes the layout: a pod found at the same cgroup keeps counting. */
Test(snapbuild, counters_since_start_survive_a_new_layout)
{
	struct snapshot *s1 = snapbuild__build(sb, &in), *s2;

	in.walk_gen = 2;
	s2 = snapbuild__build(sb, &in);
	cr_assert_eq(s2->pods[0].ctrs[0].st.cpu_ns_total, NSEC);
	cr_assert_eq(s2->pods[0].st.cpu_ns_total, 3 * NSEC / 2);
	snapshot__put(s1);
	snapshot__put(s2);
}

static void waits_at(int i, __u64 ns, __u32 n)
{
	d[i].d.rq_wait_cnt = n;
	d[i].d.rq_wait_ns = n * ns;
	d[i].d.rq_wait_max_ns = ns;
	d[i].d.no_hist = false;
	d[i].d.rq_hist = hist[i];
	d[i].d.rq_span = (struct hist_span){ 0 }; /* all 256 slots */
	memset(hist[i], 0, sizeof(hist[i]));
	hist[i][kqos_hist_slot(ns)] = n;
}

static void no_hist(int i)
{
	d[i].d.no_hist = true;
	d[i].d.rq_hist = NULL;
}

/* Bucket @b of @st's totals: the count of waits <= 2^(SNAP_RQ_FIRST_LOG + b) ns. */
static __u64 le(const struct snap_stats *st, int b)
{
	cr_assert_not_null(st->rq_hist_total);
	return st->rq_hist_total[b];
}

/*
 * The wait buckets since start move only when histograms are read: the snapshots between two
 * histogram ticks share one copy, and one that outlives the next histogram tick keeps its
 * own values.
 */
Test(snapbuild, wait_buckets_are_shared_between_histogram_ticks_and_never_change_in_a_snapshot)
{
	int b1k = 11 - SNAP_RQ_FIRST_LOG; /* 2000 ns <= 2^11 */
	struct snapshot *s1, *s2, *s3;

	cr_assert_geq(b1k, 1);
	waits_at(1, 2000, 4);
	s1 = snapbuild__build(sb, &in);
	cr_expect_eq(le(&s1->pods[0].ctrs[0].st, b1k), 4);
	cr_expect_eq(le(&s1->pods[0].st, b1k), 4, "the pod has its container's");
	cr_expect_eq(le(&s1->pods[0].ctrs[0].st, SNAP_RQ_BUCKETS - 1), 4, "cumulative in le");
	cr_expect_eq(le(&s1->pods[0].ctrs[0].st, b1k - 1), 0);
	no_hist(1);
	s2 = snapbuild__build(sb, &in);
	cr_expect_eq(s2->pods[0].ctrs[0].st.rq_hist_total, s1->pods[0].ctrs[0].st.rq_hist_total,
		     "no histogram read: the same buckets, shared");
	waits_at(1, 2000, 6);
	s3 = snapbuild__build(sb, &in);
	cr_expect_eq(le(&s3->pods[0].ctrs[0].st, b1k), 10);
	cr_expect_eq(le(&s3->pods[0].st, b1k), 10);
	cr_expect_eq(le(&s1->pods[0].ctrs[0].st, b1k), 4, "an older snapshot keeps its values");
	cr_expect_eq(le(&s2->pods[0].ctrs[0].st, b1k), 4);
	snapshot__put(s1);
	snapshot__put(s2);
	snapshot__put(s3);
}

/* An "other" counts its own buckets, and a cgroup that waited without a histogram adds none. */
Test(snapbuild, an_others_buckets_are_its_own)
{
	int b1m = 20 - SNAP_RQ_FIRST_LOG; /* 1000000 ns <= 2^20 */
	struct snapshot *s1, *s2;

	waits_at(2, 1000000, 3);
	s1 = snapbuild__build(sb, &in);
	cr_assert_eq(s1->nr_others, 1);
	cr_expect_eq(le(&s1->others[0].st, b1m), 3);
	cr_expect_eq(le(&s1->others[0].st, b1m - 1), 0);
	no_hist(2);
	s2 = snapbuild__build(sb, &in);
	cr_expect_eq(le(&s2->others[0].st, b1m), 3);
	cr_expect_eq(s2->others[0].st.rq_waits_total, 6, "the counters go on");
	snapshot__put(s1);
	snapshot__put(s2);
}

Test(snapbuild, unresolved_cgroups_are_left_out)
{
	struct snapshot *s;

	d[2].path = NULL;
	s = snapbuild__build(sb, &in);
	cr_assert_eq(s->nr_others, 0);
	snapshot__put(s);
}

/* Entities with the same cpuset list share the snapshot's one copy, which outlives the files. */
Test(snapbuild, cpusets_are_the_snapshots_own_and_shared)
{
	struct cg_file_stat f[2] = {
		{ .path = "/" POD, .cgid = 10, .cpuset = "0-3" },
		{ .path = "/" CTR, .cgid = 11, .cpuset = "0-3" },
	};
	struct snapshot *s;

	in.files = f;
	in.nr_files = 2;
	s = snapbuild__build(sb, &in);
	cr_assert_str_eq(s->pods[0].cpuset, "0-3");
	cr_assert_eq(s->pods[0].cpuset, s->pods[0].ctrs[0].cpuset, "one copy for both");
	snprintf(f[0].cpuset, sizeof(f[0].cpuset), "2");
	snprintf(f[1].cpuset, sizeof(f[1].cpuset), "3");
	cr_expect_str_eq(s->pods[0].cpuset, "0-3", "the next read changed a built snapshot");
	snapshot__put(s);
	s = snapbuild__build(sb, &in);
	cr_expect_str_eq(s->pods[0].cpuset, "2");
	cr_expect_str_eq(s->pods[0].ctrs[0].cpuset, "3");
	f[1].cpuset[0] = '\0';
	snapshot__put(s);
	s = snapbuild__build(sb, &in);
	cr_expect_str_eq(s->pods[0].ctrs[0].cpuset, "", "unknown is empty, never NULL");
	snapshot__put(s);
}

Test(snapbuild, throttling_ratio_and_cpuset_from_the_files)
{
	struct cg_file_stat f[2] = {
		{ .path = "/" POD,
		  .cgid = 10,
		  .has_cpu_stat = true,
		  .nr_periods = 100,
		  .nr_throttled = 10,
		  .cpuset = "0-1" },
		{ .path = "/" CTR, .cgid = 11 },
	};
	struct snapshot *s1, *s2;

	in.files = f;
	in.nr_files = 2;
	s1 = snapbuild__build(sb, &in);
	cr_assert(s1->pods[0].st.has_throttle);
	cr_assert_float_eq(s1->pods[0].st.throttled_ratio, 0, 1e-9, "no previous reading");
	cr_assert_str_eq(s1->pods[0].cpuset, "0-1");
	cr_assert_eq(s1->pods[0].cgid, 10);
	cr_assert_eq(s1->pods[0].ctrs[0].cgid, 11);
	cr_assert_not(s1->pods[0].ctrs[0].st.has_throttle);
	/* the collector's next read: these counters, and the previous ones beside them */
	f[0].has_prev = true;
	f[0].prev_periods = 100;
	f[0].prev_throttled = 10;
	f[0].nr_periods = 200;
	f[0].nr_throttled = 35;
	s2 = snapbuild__build(sb, &in);
	cr_assert_float_eq(s2->pods[0].st.throttled_ratio, 0.25, 1e-9);
	snapshot__put(s1);
	snapshot__put(s2);
}

Test(snapbuild, node_cpu_and_memory)
{
	struct snapshot *s1, *s2;

	in.node = (struct node_stat){ .has_cpu = true,
				      .busy_ticks = 1000,
				      .clk_tck = 100,
				      .has_memory = true,
				      .mem_total_kb = 1000,
				      .mem_available_kb = 250 };
	s1 = snapbuild__build(sb, &in);
	cr_assert_not(s1->node.has_cpu_usage, "one reading is no rate");
	cr_assert_eq(s1->node.mem_used_bytes, 750 * 1024);
	in.node.busy_ticks = 1150; /* 1.5 s of CPU in 1 s */
	s2 = snapbuild__build(sb, &in);
	cr_assert(s2->node.has_cpu_usage);
	cr_assert_float_eq(s2->node.cpu_cores_used, 1.5, 1e-9);
	snapshot__put(s1);
	snapshot__put(s2);
}

Test(snapbuild, kubepods_tiers_follow_the_driver)
{
	struct snapshot *s;

	in.kubepods = "/kubepods";
	s = snapbuild__build(sb, &in);
	cr_assert_str_eq(s->node.burstable, "/kubepods/burstable");
	cr_assert_str_eq(s->node.besteffort, "/kubepods/besteffort");
	snapshot__put(s);
	in.kubepods = "/kubelet.slice/kubelet-kubepods.slice";
	s = snapbuild__build(sb, &in);
	cr_assert_str_eq(s->node.besteffort,
			 "/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice");
	snapshot__put(s);
}

/* A pod list of one BE bare-metal group "g-batch" owning the @n cgroups @cgs. */
static struct pod_list *batch_group(const char *const *cgs, size_t n)
{
	struct pod_list *l = pod_list__new();

	cr_assert_not_null(l);
	l->pods = calloc(1, sizeof(*l->pods));
	l->nr_pods = 1;
	l->pods[0].uid = strdup("g-batch");
	l->pods[0].qos = POD_QOS_BE;
	l->pods[0].is_static = true;
	l->pods[0].cgroups = calloc(n, sizeof(char *));
	for (size_t i = 0; i < n; i++)
		l->pods[0].cgroups[i] = strdup(cgs[i]);
	l->pods[0].nr_cgroups = n;
	return l;
}

Test(snapbuild, static_group_owns_its_cgroups_and_descendants)
{
	static const char *const cgs[] = { "/batch", "/batch2" };
	struct pod_list *l = batch_group(cgs, 2);
	struct snapshot *s;
	d[0].path = "/batch/job1";
	d[1].path = "/batch2";
	in.pods = l;
	in.pods_from_walk = false;
	s = snapbuild__build(sb, &in);
	cr_assert_eq(s->nr_pods, 1);
	cr_assert_str_eq(s->pods[0].cgroup, "/batch");
	cr_assert_float_eq(s->pods[0].st.cpu_cores, 0.75, 1e-9);
	cr_assert_eq(s->classes[POD_QOS_BE].pods, 1);
	cr_assert_eq(s->pods_list, l, "the snapshot keeps the list alive");
	pod_list__put(l);
	snapshot__put(s);
}

Test(snapbuild, resctrl_readings_move_into_the_snapshot)
{
	struct snapshot *s;

	in.rdt_enabled = true;
	in.rdt = calloc(1, sizeof(*in.rdt));
	snprintf(in.rdt[0].name, sizeof(in.rdt[0].name), "kqos-BE");
	in.nr_rdt = 1;
	s = snapbuild__build(sb, &in);
	cr_assert_null(in.rdt, "consumed");
	cr_assert(s->rdt_enabled);
	cr_assert_eq(s->nr_rdt, 1);
	cr_assert_str_eq(s->rdt[0].name, "kqos-BE");
	snapshot__put(s);
}

Test(snapbuild, a_tick_without_histograms_keeps_the_last_quantiles_of_pods_and_others)
{
	struct snapshot *s1, *s2;

	d[1].d.rq_wait_cnt = 4;
	d[1].d.rq_wait_ns = 4000;
	d[1].d.rq_wait_max_ns = 1500;
	hist[1][kqos_hist_slot(1000)] = 4;
	d[2].d.rq_wait_cnt = 2;
	d[2].d.rq_wait_ns = 2000;
	d[2].d.rq_wait_max_ns = 1500;
	hist[2][kqos_hist_slot(1000)] = 2;
	s1 = snapbuild__build(sb, &in);
	cr_assert_gt(s1->pods[0].ctrs[0].st.rq_p99_ns, 0);
	cr_assert_eq(s1->nr_others, 1);
	/* the next tick read counters only: waits, but an empty histogram */
	d[1].d.no_hist = d[2].d.no_hist = true;
	d[1].d.rq_wait_max_ns = d[2].d.rq_wait_max_ns = 0;
	d[1].d.rq_hist = d[2].d.rq_hist = NULL;
	s2 = snapbuild__build(sb, &in);
	cr_expect(s2->pods[0].ctrs[0].st.rq_hist_stale);
	cr_expect_eq(s2->pods[0].ctrs[0].st.rq_p99_ns, s1->pods[0].ctrs[0].st.rq_p99_ns);
	cr_expect_eq(s2->pods[0].st.rq_p99_ns, s1->pods[0].st.rq_p99_ns);
	cr_expect_eq(s2->others[0].st.rq_p99_ns, s1->others[0].st.rq_p99_ns);
	cr_expect_eq(s2->pods[0].st.rq_waits, 4, "the counters are this tick's");
	snapshot__put(s1);
	snapshot__put(s2);
}

/* A pod's quantiles come from its own cgroup's histogram and its containers', summed. */
Test(snapbuild, a_pods_quantiles_sum_its_own_and_its_containers_histograms)
{
	struct snapshot *s;

	d[0].d.rq_wait_cnt = 100; /* the pod's own cgroup: slow waits */
	d[0].d.rq_wait_ns = 100 * 1000000ULL;
	d[0].d.rq_wait_max_ns = 1000000;
	hist[0][kqos_hist_slot(1000000)] = 100;
	d[1].d.rq_wait_cnt = 300; /* its container: fast ones */
	d[1].d.rq_wait_ns = 300 * 1000ULL;
	d[1].d.rq_wait_max_ns = 1000000;
	hist[1][kqos_hist_slot(1000)] = 300;
	s = snapbuild__build(sb, &in);
	cr_assert_eq(s->pods[0].st.rq_waits, 400);
	cr_expect_lt(s->pods[0].ctrs[0].st.rq_p99_ns, 2000, "the container saw only fast waits");
	cr_expect_lt(s->pods[0].st.rq_p50_ns, 2000, "3 of 4 of the pod's waits were fast");
	cr_expect_gt(s->pods[0].st.rq_p99_ns, 900000, "its slowest quarter was its own");
	cr_expect_not(s->pods[0].st.rq_hist_stale);
	snapshot__put(s);
	/* the same again: the chains start empty each tick, nothing is counted twice */
	s = snapbuild__build(sb, &in);
	cr_expect_eq(s->pods[0].st.rq_waits, 400);
	cr_expect_lt(s->pods[0].st.rq_p50_ns, 2000);
	cr_expect_gt(s->pods[0].st.rq_p99_ns, 900000);
	snapshot__put(s);
}

static void waits_in(int i, __u64 ns, __u32 n)
{
	__u32 slot = kqos_hist_slot(ns);

	waits_at(i, ns, n);
	d[i].d.rq_span = (struct hist_span){ .lo = (__u16)(slot & ~(HIST_SPAN_BLOCK - 1u)),
					     .hi = (__u16)((slot | (HIST_SPAN_BLOCK - 1u)) + 1) };
	d[i].d.rq_hist = hist[i] + d[i].d.rq_span.lo; /* from the span's first slot */
}

/*
 * Three cgroups of one group summed over their spans: the slots a span takes in are zeroed
 * first, so what the last entity left in the sum is never counted.
 */
Test(snapbuild, histograms_summed_over_spans_count_nothing_left_from_before)
{
	static const char *const cgs[] = { "/batch" };
	struct pod_list *l = batch_group(cgs, 1);
	struct snapshot *s;
	d[0].path = "/batch/a";
	d[1].path = "/batch/b";
	d[2].path = "/batch/c";
	in.pods = l;
	in.pods_from_walk = false;
	/* the first tick leaves 1000 waits of 100 us in the sum (a chain runs from d[2] down) */
	waits_in(2, 1000, 10);
	waits_in(1, 100000, 1000);
	waits_in(0, 10000000, 10);
	snapshot__put(snapbuild__build(sb, &in));
	/* the next: 20 fast ones, summed first, then 1 slow one; the 100 us block between */
	waits_in(2, 1000, 10);
	waits_in(1, 1000, 10);
	waits_in(0, 10000000, 1);
	s = snapbuild__build(sb, &in);
	cr_assert_eq(s->pods[0].st.rq_waits, 21);
	cr_expect_lt(s->pods[0].st.rq_p50_ns, 2000);
	cr_expect_gt(s->pods[0].st.rq_p99_ns, 5000000, "rank 21 of 21 is the slow one");
	snapshot__put(s);
	pod_list__put(l);
}

/* PMU figures are the snapshot's where the host counts events, and absent where it does not. */
Test(snapbuild, pmu_figures_have_room_only_with_events)
{
	static const struct pmu_event_cfg ev[1] = { { .name = "cycles", .role = PMU_ROLE_CYCLES } };
	struct snapshot *s;

	s = snapbuild__build(sb, &in);
	cr_expect_null(s->pods[0].st.pmu);
	cr_expect_null(s->pods[0].ctrs[0].st.pmu);
	cr_expect_eq(s->pods[0].st.pmu_n, 0);
	snapshot__put(s);
	for (int i = 0; i < 3; i++) {
		d[i].d.pmu_count[0] = 1000 * (i + 1);
		d[i].d.pmu_enabled[0] = d[i].d.pmu_running[0] = 10;
		d[i].pmu_per_s[0] = 1000.0 * (i + 1);
	}
	in.pmu = ev;
	in.pmu_n = 1;
	s = snapbuild__build(sb, &in);
	cr_assert_not_null(s->pods[0].st.pmu);
	cr_assert_not_null(s->pods[0].ctrs[0].st.pmu);
	cr_assert_eq(s->nr_others, 1);
	cr_assert_not_null(s->others[0].st.pmu);
	cr_expect_float_eq(s->pods[0].ctrs[0].st.pmu->per_s[0], 2000, 1e-9);
	cr_expect_float_eq(s->pods[0].st.pmu->per_s[0], 3000, 1e-9, "its own and its container's");
	cr_expect_float_eq(s->others[0].st.pmu->per_s[0], 3000, 1e-9);
	cr_expect_eq(s->pods[0].st.pmu->total[0], 3000);
	cr_expect_neq(s->pods[0].st.pmu, s->pods[0].ctrs[0].st.pmu);
	snapshot__put(s);
}
