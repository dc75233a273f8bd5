// SPDX-License-Identifier: GPL-2.0
/* Metric windows: the coverage rule, old samples leaving, aggregates, memory bound. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

#define SEC 1000000000ULL

static struct pod pods[4];
static struct window *w;

static void setup(void)
{
	cr_assert_eq(window__new(window_capacity(60 * SEC, SEC), &w), 0);
}

static void teardown(void)
{
	window__free(w);
}

static struct pod *mkpod(int i, enum pod_qos qos, int64_t batch_cpu)
{
	static struct pod_container ctrs[4];
	struct pod *p = &pods[i];

	memset(p, 0, sizeof(*p));
	p->uid = (char *)(const char *[]){ "a", "b", "c", "d" }[i];
	p->name = p->uid;
	p->qos_raw = p->qos = qos;
	p->is_active = true;
	pod_res_init(&ctrs[i].requests);
	ctrs[i].requests.batch_cpu_milli = batch_cpu;
	p->containers = &ctrs[i];
	p->nr_containers = 1;
	return p;
}

/* A snapshot at @t_s seconds: node usage @node_cores, pods given with usage in cores. */
static void feed(uint64_t t_s, double node_cores, size_t n, const struct pod *const *pp,
		 const double *cores)
{
	struct snapshot *s = snapshot__new();

	cr_assert_not_null(s);
	s->mono_ns = t_s * SEC;
	s->interval_s = 1.0;
	s->node.nr_cpus = 4;
	s->node.has_cpu_usage = true;
	s->node.cpu_cores_used = node_cores;
	s->node.has_memory = true;
	s->node.mem_used_bytes = (uint64_t)(node_cores * 1e9);
	s->pods = calloc(n ? n : 1, sizeof(*s->pods));
	s->nr_pods = n;
	for (size_t i = 0; i < n; i++) {
		s->pods[i].pod = pp[i];
		s->pods[i].st.has_cpu = true;
		s->pods[i].st.cpu_cores = cores[i];
	}
	cr_assert_eq(window__feed(w, s, NULL), 0);
	snapshot__put(s);
}

static int q(const char *uid, enum win_metric m, enum win_agg agg, uint64_t win_s, uint64_t now_s,
	     double *v)
{
	return window__query(w, uid, m, agg, win_s * SEC, now_s * SEC, v);
}

TestSuite(window, .init = setup, .fini = teardown);

Test(window, capacity_is_the_longest_window_in_intervals)
{
	cr_expect_eq(window_capacity(60 * SEC, SEC), 61);
	cr_expect_eq(window_capacity(10 * SEC, 3 * SEC), 5);
	cr_expect_eq(window_capacity(0, SEC), 2);
	cr_expect_eq(window_capacity(1000000 * SEC, SEC), WINDOW_MAX_SAMPLES);
	cr_expect_eq(window__new(0, &(struct window *){ NULL }), -EINVAL);
}

Test(window, under_a_third_covered_is_not_enough_samples)
{
	double v;

	/* 30 s window: 10 samples at 1 s cover exactly a third, 9 do not */
	for (uint64_t t = 1; t <= 9; t++)
		feed(t, 1.0, 0, NULL, NULL);
	cr_expect_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 30, 9, &v), -ENODATA);
	feed(10, 1.0, 0, NULL, NULL);
	cr_expect_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 30, 10, &v), 0);
	cr_expect_float_eq(v, 1.0, 1e-9);
	/* 10 s later without samples the window [11, 40] holds none of them */
	cr_expect_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 30, 40, &v), -ENODATA);
}

Test(window, aggregates_over_the_window_only)
{
	double v;

	/* 1..20 cores at t = 1..20 s */
	for (uint64_t t = 1; t <= 20; t++)
		feed(t, (double)t, 0, NULL, NULL);
	cr_assert_eq(q(NULL, WIN_CPU_CORES, WIN_LAST, 2, 20, &v), 0);
	cr_expect_float_eq(v, 20.0, 1e-9);
	/* the last 10 s: samples 11..20 */
	cr_assert_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 10, 20, &v), 0);
	cr_expect_float_eq(v, 15.5, 1e-9);
	cr_assert_eq(q(NULL, WIN_CPU_CORES, WIN_MAX, 10, 15, &v), 0);
	cr_expect_float_eq(v, 15.0, 1e-9);
	/* p95 of 1..20, nearest rank: the 19th */
	cr_assert_eq(q(NULL, WIN_CPU_CORES, WIN_P95, 20, 20, &v), 0);
	cr_expect_float_eq(v, 19.0, 1e-9);
	cr_assert_eq(q(NULL, WIN_MEM_USED, WIN_LAST, 2, 20, &v), 0);
	cr_expect_float_eq(v, 20e9, 1.0);
}

Test(window, old_samples_leave_a_full_ring)
{
	double v;

	cr_assert_eq(window__set_capacity(w, 5), 0);
	for (uint64_t t = 1; t <= 100; t++)
		feed(t, (double)t, 0, NULL, NULL);
	/* only 96..100 are held: a 15 s window has 5 of 15 needed -> exactly a third */
	cr_assert_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 15, 100, &v), 0);
	cr_expect_float_eq(v, 98.0, 1e-9);
	cr_expect_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 16, 100, &v), -ENODATA);
	/* shrinking keeps the newest */
	cr_assert_eq(window__set_capacity(w, 2), 0);
	cr_assert_eq(q(NULL, WIN_CPU_CORES, WIN_AVG, 3, 100, &v), 0);
	cr_expect_float_eq(v, 99.5, 1e-9);
}

Test(window, pods_have_their_own_history_and_lose_it_when_gone)
{
	const struct pod *ab[] = { mkpod(0, POD_QOS_BE, 2000), mkpod(1, POD_QOS_LS, -1) };
	const struct pod *b[] = { ab[1] };
	double cores[] = { 0.5, 1.5 }, v;

	for (uint64_t t = 1; t <= 4; t++)
		feed(t, 3.0, 2, ab, cores);
	cr_expect_eq(window__nr_entities(w), 2);
	cr_assert_eq(q("a", WIN_CPU_CORES, WIN_AVG, 4, 4, &v), 0);
	cr_expect_float_eq(v, 0.5, 1e-9);
	cr_assert_eq(q("b", WIN_CPU_CORES, WIN_MAX, 4, 4, &v), 0);
	cr_expect_float_eq(v, 1.5, 1e-9);
	/* the BE aggregate: pod a only */
	cr_assert_eq(q(NULL, WIN_BE_CPU_USED, WIN_AVG, 4, 4, &v), 0);
	cr_expect_float_eq(v, 500.0, 1e-9);
	cr_assert_eq(q(NULL, WIN_BE_CPU_REQUEST, WIN_AVG, 4, 4, &v), 0);
	cr_expect_float_eq(v, 2000.0, 1e-9);
	cr_assert_eq(q(NULL, WIN_BE_CPU_LIMIT, WIN_LAST, 2, 4, &v), 0);
	cr_expect_float_eq(v, 4000.0, 1e-9);
	/* a metric the pod never had is not 0 */
	cr_expect_eq(q("a", WIN_THROTTLED, WIN_AVG, 4, 4, &v), -ENODATA);
	feed(5, 3.0, 1, b, &cores[1]);
	cr_expect_eq(window__nr_entities(w), 1);
	cr_expect_eq(q("a", WIN_CPU_CORES, WIN_AVG, 4, 5, &v), -ENOENT);
	cr_expect_eq(q("b", WIN_CPU_CORES, WIN_AVG, 4, 5, &v), 0);
}

Test(window, be_limit_is_the_smaller_of_cpuset_and_quota)
{
	struct window_be be = { .has_be_cpus = true, .be_cpus = 3, .has_be_quota = true };
	struct snapshot *s = snapshot__new();
	double v;

	s->mono_ns = SEC;
	s->interval_s = 1.0;
	s->node.nr_cpus = 4;
	be.be_quota_us = 150000; /* 1.5 CPUs */
	cr_assert_eq(window__feed(w, s, &be), 0);
	cr_assert_eq(q(NULL, WIN_BE_CPU_LIMIT, WIN_LAST, 2, 1, &v), 0);
	cr_expect_float_eq(v, 1500.0, 1e-9);
	be.be_quota_us = -1;
	s->mono_ns = 2 * SEC;
	cr_assert_eq(window__feed(w, s, &be), 0);
	cr_assert_eq(q(NULL, WIN_BE_CPU_LIMIT, WIN_LAST, 2, 2, &v), 0);
	cr_expect_float_eq(v, 3000.0, 1e-9);
	snapshot__put(s);
}

Test(window, memory_is_bounded_by_the_capacity)
{
	const struct pod *a[] = { mkpod(0, POD_QOS_BE, -1) };
	double c = 1.0;

	/* 61 samples for a 60 s window at 1 s: about 6 KB a pod, whatever the run time */
	cr_expect_leq(window__entity_bytes(61), 61 * WINDOW_SAMPLE_BYTES + 128);
	cr_expect_leq(WINDOW_SAMPLE_BYTES, 96);
	for (uint64_t t = 1; t <= 500; t++)
		feed(t, 1.0, 1, a, &c);
	cr_expect_eq(window__capacity(w), 61);
	cr_expect_eq(window__nr_entities(w), 1);
}

/* History follows the UID, whatever the snapshot's order or a pod in another's place. */
Test(window, a_reordered_or_replaced_pod_list_keeps_each_pods_own_history)
{
	const struct pod *ab[] = { mkpod(0, POD_QOS_LS, -1), mkpod(1, POD_QOS_LS, -1) };
	const struct pod *ba[] = { ab[1], ab[0] };
	const struct pod *cb[] = { mkpod(2, POD_QOS_LS, -1), ab[1] };
	double ab_cores[] = { 1.0, 2.0 }, ba_cores[] = { 2.0, 1.0 }, cb_cores[] = { 3.0, 2.0 }, v;

	for (uint64_t t = 1; t <= 3; t++)
		feed(t, 3.0, 2, ab, ab_cores);
	feed(4, 3.0, 2, ba, ba_cores); /* same pods, other order */
	cr_assert_eq(q("a", WIN_CPU_CORES, WIN_MAX, 4, 4, &v), 0);
	cr_expect_float_eq(v, 1.0, 1e-9);
	cr_assert_eq(q("b", WIN_CPU_CORES, WIN_AVG, 4, 4, &v), 0);
	cr_expect_float_eq(v, 2.0, 1e-9);
	feed(5, 3.0, 2, cb, cb_cores); /* c where a was: a gone, c new */
	cr_expect_eq(window__nr_entities(w), 2);
	cr_expect_eq(q("a", WIN_CPU_CORES, WIN_AVG, 4, 5, &v), -ENOENT);
	cr_assert_eq(q("c", WIN_CPU_CORES, WIN_LAST, 1, 5, &v), 0);
	cr_expect_float_eq(v, 3.0, 1e-9);
	cr_assert_eq(q("b", WIN_CPU_CORES, WIN_AVG, 5, 5, &v), 0);
	cr_expect_float_eq(v, 2.0, 1e-9);
	feed(6, 3.0, 2, cb, cb_cores); /* steady again: each by its hint */
	cr_assert_eq(q("c", WIN_CPU_CORES, WIN_AVG, 2, 6, &v), 0);
	cr_expect_float_eq(v, 3.0, 1e-9);
}

/* A list as a pod source hands it over: heap pods, freed with the list's last reference. */
static struct pod_list *list_of(const char *const *uids, size_t n)
{
	struct pod_list *l = pod_list__new();

	cr_assert_not_null(l);
	l->pods = calloc(n, sizeof(*l->pods));
	cr_assert_not_null(l->pods);
	for (size_t i = 0; i < n; i++) {
		l->pods[i].uid = strdup(uids[i]);
		l->pods[i].qos_raw = l->pods[i].qos = POD_QOS_LS;
		l->pods[i].is_active = true;
	}
	l->nr_pods = n;
	return l;
}

static void feed_list(uint64_t t_s, struct pod_list *l, const double *cores)
{
	struct snapshot *s = snapshot__new();

	cr_assert_not_null(s);
	s->mono_ns = t_s * SEC;
	s->interval_s = 1.0;
	s->node.nr_cpus = 4;
	s->pods_list = pod_list__ref(l);
	s->pods = calloc(l->nr_pods, sizeof(*s->pods));
	s->nr_pods = l->nr_pods;
	for (size_t i = 0; i < l->nr_pods; i++) {
		s->pods[i].pod = &l->pods[i];
		s->pods[i].st.has_cpu = true;
		s->pods[i].st.cpu_cores = cores[i];
	}
	cr_assert_eq(window__feed(w, s, NULL), 0);
	snapshot__put(s);
}

/* Fed the same pod list again, each pod's series is its hint's; a new list is checked by uid. */
Test(window, the_same_pod_list_goes_by_its_hints_a_new_one_by_uid)
{
	static const char *const xy[] = { "x", "y" }, *const yx[] = { "y", "x" };
	struct pod_list *a = list_of(xy, 2), *b = list_of(yx, 2);
	double c12[] = { 1.0, 2.0 }, c21[] = { 2.0, 1.0 }, v;

	for (uint64_t t = 1; t <= 3; t++)
		feed_list(t, a, c12);
	feed_list(4, b, c21); /* a new list, the same pods in another order */
	feed_list(5, b, c21);
	pod_list__put(a); /* the window's reference keeps nothing of it alive past the switch */
	cr_assert_eq(q("x", WIN_CPU_CORES, WIN_MAX, 5, 5, &v), 0);
	cr_expect_float_eq(v, 1.0, 1e-9, "x's history got y's samples");
	cr_assert_eq(q("y", WIN_CPU_CORES, WIN_AVG, 5, 5, &v), 0);
	cr_expect_float_eq(v, 2.0, 1e-9);
	pod_list__put(b);
}
