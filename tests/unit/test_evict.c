// SPDX-License-Identifier: GPL-2.0
/*
 * The eviction strategies (koordinator.md §4.2, §4.3) on canned pod lists and metric
 * windows: release amounts, victim order, the policy annotation, cool-downs, pending
 * victims counted once, satisfaction validity and the coverage rule.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evict.h"
#include "slo.h"
#include "snapshot.h"
#include "strategy.h"
#include "window.h"

#define SEC 1000000000ULL
#define GB  1000000000ULL

struct canned {
	const char *uid; /* the pod's name */
	double cores;
	uint64_t mem;
};

static struct pod_list *list;
static struct window *win;
static struct slo_config cfg;
static struct evict_list out;
static void *state;
static const struct kqos_strategy *strat;

static void teardown(void)
{
	if (strat && strat->fini)
		strat->fini(state);
	state = NULL;
	strat = NULL;
	window__free(win);
	win = NULL;
	pod_list__put(list);
	list = NULL;
}

TestSuite(evict, .fini = teardown);

/*
 * A pod item: @qos label, spec.priority (0 = none), batch-cpu request in milli (0 = none),
 * extra labels and annotations as JSON members (may be "").
 */
static void item(char *buf, size_t len, const char *name, const char *qos, int prio,
		 int batch_milli, const char *labels, const char *anns)
{
	char p[32] = "", req[96] = "", uid[64] = "";

	/* UIDs are hex: the name's bytes */
	for (size_t i = 0; name[i] && i < 30; i++)
		snprintf(uid + 2 * i, sizeof(uid) - 2 * i, "%02x", (unsigned char)name[i]);

	if (prio)
		snprintf(p, sizeof(p), "\"priority\":%d,", prio);
	if (batch_milli)
		snprintf(req, sizeof(req),
			 "\"resources\":{\"requests\":{\"kubernetes.io/batch-cpu\":"
			 "\"%d\"}},",
			 batch_milli);
	snprintf(buf + strlen(buf), len - strlen(buf),
		 "%s{\"metadata\":{\"name\":\"%s\",\"namespace\":\"ns\",\"uid\":\"%s\","
		 "\"labels\":{\"koordinator.sh/qosClass\":\"%s\"%s},\"annotations\":{%s}},"
		 "\"spec\":{%s\"containers\":[{\"name\":\"c\",%s\"image\":\"x\"}]},"
		 "\"status\":{\"phase\":\"Running\"}}",
		 strchr(buf, '{') ? "," : "", name, uid, qos, labels, anns, p, req);
}

static void parse(const char *items)
{
	char doc[16384];

	snprintf(doc, sizeof(doc), "{\"kind\":\"PodList\",\"items\":[%s]}", items);
	cr_assert_eq(pod_list__parse(doc, strlen(doc), "test", NULL, &list, NULL), 0);
}

/* A snapshot at @t_s of the parsed pods with @c's usage; the caller puts it. */
static struct snapshot *snap_at(uint64_t t_s, double node_cores, uint64_t node_mem,
				const struct canned *c, size_t n)
{
	struct snapshot *s = snapshot__new();

	s->mono_ns = t_s * SEC;
	s->interval_s = 1.0;
	s->node.nr_cpus = 16;
	s->node.has_cpu_usage = true;
	s->node.cpu_cores_used = node_cores;
	s->node.has_memory = true;
	s->node.mem_total_bytes = 10 * GB;
	s->node.mem_used_bytes = node_mem;
	s->pods = calloc(list->nr_pods, sizeof(*s->pods));
	s->nr_pods = list->nr_pods;
	for (size_t i = 0; i < list->nr_pods; i++) {
		struct snap_pod *sp = &s->pods[i];

		sp->pod = &list->pods[i];
		for (size_t k = 0; k < n; k++) {
			if (strcmp(c[k].uid, sp->pod->name))
				continue;
			sp->st.has_cpu = true;
			sp->st.cpu_cores = c[k].cores;
			sp->st.has_memory = c[k].mem > 0;
			sp->st.mem_used_bytes = c[k].mem;
		}
	}
	return s;
}

static void start(const struct kqos_strategy *s, const char *node_slo, const char *kqos)
{
	char err[256];

	cr_assert_eq(slo_config_parse(node_slo, kqos, &cfg, err, sizeof(err)), 0, "%s", err);
	cr_assert(s->enabled(&cfg));
	cr_assert_eq(s->init(&cfg, &state), 0);
	strat = s;
	cr_assert_eq(window__new(window_capacity(60 * SEC, SEC), &win), 0);
}

/* Feed one snapshot and decide on it; out holds the requests. */
static void step(struct snapshot *s, const struct evict_pending *pend)
{
	struct strategy_input in = { .snap = s,
				     .cfg = &cfg,
				     .now_ns = s->mono_ns,
				     .is_tick = true,
				     .win = win,
				     .evicting = pend };
	struct strategy_report rep = { .evict = &out };
	struct plan plan;

	memset(&out, 0, sizeof(out));
	plan_init(&plan);
	cr_assert_eq(window__feed(win, s, NULL), 0);
	cr_assert_eq(strat->decide(state, &in, &plan, &rep), 0);
	cr_expect_eq(plan.nr, 0, "eviction plans no cgroup write");
	plan_fini(&plan);
	snapshot__put(s);
}

static void expect_victims(const char *const *names, size_t n)
{
	cr_assert_eq(out.nr, n, "got %zu requests, want %zu", out.nr, n);
	for (size_t i = 0; i < n; i++)
		cr_expect_str_eq(out.req[i].name, names[i], "victim %zu", i);
}

#define MEM_SLO	 "{\"resourceUsedThresholdWithBE\":{\"enable\":true}}"
#define MEM_KQOS "{\"eviction\":{\"features\":[\"BEMemoryEvict\"]}}"

static void be_memory_pods(void)
{
	char b[8192] = "";

	item(b, sizeof(b), "a", "BE", 5500, 0, "", "");
	item(b, sizeof(b), "b", "BE", 5500, 0, "", "");
	item(b, sizeof(b), "c", "BE", 5500, 0, "", "");
	item(b, sizeof(b), "d", "BE", 5500, 0, "", "");
	item(b, sizeof(b), "e", "LS", 9500, 0, "", "");
	parse(b);
}

static const struct canned be_mem[] = {
	{ "a", 0.1, 300000000 }, { "b", 0.1, 500000000 }, { "c", 0.1, 0 },
	{ "d", 0.1, 0 },	 { "e", 2.0, 4 * GB },
};

Test(evict, be_memory_releases_down_to_lower_in_usage_order)
{
	static const char *const want[] = { "b", "a" };

	be_memory_pods();
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	/* 7.5 of 10 GB = 75 % >= 70 %: release 10 GB x (75 - 68) / 100 = 700 MB; b (500 MB)
	 * and a (300 MB) cover it; the LS pod is never a BE victim */
	step(snap_at(1, 1, 7500000000ULL, be_mem, 5), NULL);
	expect_victims(want, 2);
	cr_expect_eq(out.req[0].strategy, POD_EVICT_BE_MEMORY);
	cr_expect(strstr(out.req[0].reason, "BEMemoryEvict"));
	cr_expect(out.pressure & (1u << POD_EVICT_BE_MEMORY));
}

Test(evict, be_memory_below_threshold_does_nothing)
{
	be_memory_pods();
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	/* 6.99 GB = floor 69 % */
	step(snap_at(1, 1, 6990000000ULL, be_mem, 5), NULL);
	cr_expect_eq(out.nr, 0);
	cr_expect_eq(out.pressure, 0);
}

Test(evict, be_memory_zero_usage_last_by_name_descending)
{
	static const char *const want[] = { "b", "a", "d", "c" };

	be_memory_pods();
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	/* 9.9 GB = 99 %: release 3.1 GB, more than all BE pods use: everyone goes */
	step(snap_at(1, 1, 9900000000ULL, be_mem, 5), NULL);
	expect_victims(want, 4);
}

Test(evict, be_memory_lower_spec_priority_first)
{
	static const char *const want[] = { "low", "big" };
	static const struct canned c[] = { { "big", 0, 900000000 }, { "low", 0, 100000000 } };
	char b[4096] = "";

	item(b, sizeof(b), "big", "BE", 5900, 0, "", "");
	item(b, sizeof(b), "low", "BE", 5100, 0, "", "");
	parse(b);
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	/* 71 %: release 300 MB; low goes first despite using less, then big */
	step(snap_at(1, 1, 7100000000ULL, c, 2), NULL);
	expect_victims(want, 2);
}

Test(evict, pending_victim_counts_once_without_a_new_request)
{
	static const char *const want[] = { "a" };
	static const char *const uids[] = { "62" }; /* b */
	struct evict_pending pend = { .uids = uids, .nr = 1 };

	be_memory_pods();
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	step(snap_at(1, 1, 7500000000ULL, be_mem, 5), &pend);
	expect_victims(want, 1);
}

Test(evict, memory_cool_down_is_four_seconds)
{
	be_memory_pods();
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	step(snap_at(10, 1, 7500000000ULL, be_mem, 5), NULL);
	cr_assert_eq(out.nr, 2);
	step(snap_at(13, 1, 7500000000ULL, be_mem, 5), NULL);
	cr_expect_eq(out.nr, 0, "within 4 s of an eviction");
	cr_expect(out.pressure, "pressure is reported while cooling");
	step(snap_at(14, 1, 7500000000ULL, be_mem, 5), NULL);
	cr_expect_eq(out.nr, 2);
}

Test(evict, policy_annotation_allows_names_invalid_json_never)
{
	static const char *const want[] = { "ok", "all" };
	static const struct canned c[] = {
		{ "cpu-only", 0, 900000000 },
		{ "bad", 0, 800000000 },
		{ "ok", 0, 700000000 },
		{ "all", 0, 100000000 },
	};
	char b[8192] = "";

	item(b, sizeof(b), "cpu-only", "BE", 5500, 0, "",
	     "\"koordinator.sh/eviction-policy\":\"[\\\"BECPUEvict\\\"]\"");
	item(b, sizeof(b), "bad", "BE", 5500, 0, "",
	     "\"koordinator.sh/eviction-policy\":\"[BEMemoryEvict\"");
	item(b, sizeof(b), "ok", "BE", 5500, 0, "",
	     "\"koordinator.sh/eviction-policy\":\"[\\\"BECPUEvict\\\",\\\"BEMemoryEvict\\\"]\"");
	item(b, sizeof(b), "all", "BE", 5500, 0, "", "");
	parse(b);
	cr_expect_eq(list->pods[1].evict.policy, POD_ANN_INVALID);
	start(&memory_evict_strategy, MEM_SLO, MEM_KQOS);
	step(snap_at(1, 1, 9900000000ULL, c, 4), NULL);
	expect_victims(want, 2);
}

Test(evict, memory_evict_by_priority_batch_before_mid)
{
	static const char *const want[] = { "ev-first", "batch", "mid-big", "mid" };
	static const struct canned c[] = {
		{ "mid", 0, 100000000 },     { "mid-big", 0, 900000000 }, { "batch", 0, 100000000 },
		{ "ev-first", 0, 10000000 }, { "prod", 0, 900000000 },	  { "off", 0, 900000000 },
	};
	char b[8192] = "";
	const char *en = ",\"koordinator.sh/eviction-enabled\":\"true\"";

	item(b, sizeof(b), "mid", "LS", 7500, 0, en, "");
	item(b, sizeof(b), "mid-big", "LS", 7500, 0, en, "");
	item(b, sizeof(b), "batch", "BE", 5500, 0, en, "");
	item(b, sizeof(b), "ev-first", "LS", 7500, 0, en,
	     "\"koordinator.sh/eviction-priority\":\"-1\"");
	item(b, sizeof(b), "prod", "LS", 9500, 0, en, ""); /* above the threshold */
	item(b, sizeof(b), "off", "LS", 7500, 0, "", ""); /* not eviction-enabled */
	parse(b);
	start(&memory_evict_strategy,
	      "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"memoryEvictThresholdPercent\":80,"
	      "\"memoryEvictLowerPercent\":50,\"evictEnabledPriorityThreshold\":7999}}",
	      "{\"eviction\":{\"features\":[\"MemoryEvict\"]}}");
	/* 99 %: release 4.9 GB, more than the four candidates' 1.11 GB */
	step(snap_at(1, 1, 9900000000ULL, c, 6), NULL);
	expect_victims(want, 4);
	cr_expect_eq(out.req[0].strategy, POD_EVICT_MEMORY);
}

Test(evict, memory_evict_needs_a_priority_threshold)
{
	static const struct canned c[] = { { "x", 0, 900000000 } };
	char b[2048] = "";

	item(b, sizeof(b), "x", "LS", 5500, 0, ",\"koordinator.sh/eviction-enabled\":\"true\"", "");
	parse(b);
	start(&memory_evict_strategy, MEM_SLO, "{\"eviction\":{\"features\":[\"MemoryEvict\"]}}");
	step(snap_at(1, 1, 9900000000ULL, c, 1), NULL);
	cr_expect_eq(out.nr, 0);
}

/* --- CPU ------------------------------------------------------------------------------- */

#define BECPU_SLO                                                                              \
	"{\"resourceUsedThresholdWithBE\":{\"enable\":true,"                                   \
	"\"cpuEvictBESatisfactionLowerPercent\":30,\"cpuEvictBESatisfactionUpperPercent\":50," \
	"\"cpuEvictTimeWindowSeconds\":10}}"
#define BECPU_KQOS "{\"eviction\":{\"features\":[\"BECPUEvict\"]}}"

static void be_cpu_pods(void)
{
	char b[8192] = "";

	/* BE request 10 cores in all */
	item(b, sizeof(b), "p1", "BE", 5500, 2000, "", "");
	item(b, sizeof(b), "p2", "BE", 5500, 4000, "", "");
	item(b, sizeof(b), "p3", "BE", 5500, 4000, "", "");
	item(b, sizeof(b), "ls", "LS", 9500, 0, "", "");
	parse(b);
}

/* BE limited to 2 CPUs (the suppressed cpuset) and using 1.9 of them. */
static void feed_be_starved(uint64_t from, uint64_t to, const struct evict_pending *pend)
{
	static const struct canned c[] = {
		{ "p1", 0.9, 0 }, { "p2", 0.6, 0 }, { "p3", 0.4, 0 }, { "ls", 8, 0 }
	};
	struct window_be be = { .has_be_cpus = true, .be_cpus = 2 };

	for (uint64_t t = from; t < to; t++) {
		struct snapshot *s = snap_at(t, 10, GB, c, 4);

		cr_assert_eq(window__feed(win, s, &be), 0);
		snapshot__put(s);
	}
	{
		struct snapshot *s = snap_at(to, 10, GB, c, 4);
		struct strategy_input in = { .snap = s,
					     .cfg = &cfg,
					     .now_ns = s->mono_ns,
					     .is_tick = true,
					     .win = win,
					     .evicting = pend };
		struct strategy_report rep = { .evict = &out };
		struct plan plan;

		memset(&out, 0, sizeof(out));
		plan_init(&plan);
		cr_assert_eq(window__feed(win, s, &be), 0);
		cr_assert_eq(strat->decide(state, &in, &plan, &rep), 0);
		plan_fini(&plan);
		snapshot__put(s);
	}
}

Test(evict, be_cpu_satisfaction_release_formula)
{
	struct evict_config ev = { .be_sat_lower_pct = 30, .be_sat_upper_pct = 50 };

	/* limit 2000m, request 10000m: S = 0.2 <= 0.3 -> 10000 x (0.5 - 0.2) = 3000m */
	cr_expect_eq(cpu_evict_satisfaction_release(&ev, 10000, 2000), 3000);
	/* S = 0.31 > lower: nothing */
	cr_expect_eq(cpu_evict_satisfaction_release(&ev, 10000, 3100), 0);
	cr_expect_eq(cpu_evict_satisfaction_release(&ev, 0, 2000), 0);
}

Test(evict, be_cpu_satisfaction_validity)
{
	struct evict_config ev = { .be_sat_lower_pct = 30, .be_sat_upper_pct = 50 };

	cr_expect(cpu_evict_satisfaction_valid(&ev));
	ev.be_sat_lower_pct = 60;
	ev.be_sat_upper_pct = 99;
	cr_expect(cpu_evict_satisfaction_valid(&ev));
	ev.be_sat_lower_pct = 61;
	cr_expect_not(cpu_evict_satisfaction_valid(&ev), "lower above 60");
	ev.be_sat_lower_pct = 30;
	ev.be_sat_upper_pct = 100;
	cr_expect_not(cpu_evict_satisfaction_valid(&ev), "upper 100");
	ev.be_sat_upper_pct = 20;
	cr_expect_not(cpu_evict_satisfaction_valid(&ev), "upper below lower");
	ev.be_sat_lower_pct = 0;
	cr_expect_not(cpu_evict_satisfaction_valid(&ev), "lower 0");
	ev = (struct evict_config){ .be_sat_lower_pct = 30, .be_sat_upper_pct = -1 };
	cr_expect_not(cpu_evict_satisfaction_valid(&ev), "no default");
}

Test(evict, be_cpu_evicts_by_usage_ratio_until_requests_cover_the_release)
{
	static const char *const want[] = { "p1", "p2" };

	be_cpu_pods();
	start(&cpu_evict_strategy, BECPU_SLO, BECPU_KQOS);
	/* 10 s window: S = 2000/10000, U/L = 1900/2000 = 95 % >= 90 %: release 3000m of
	 * batch-cpu requests. Ratios p1 0.45, p2 0.15, p3 0.1: p1 (2000) + p2 (4000) */
	feed_be_starved(1, 10, NULL);
	expect_victims(want, 2);
	cr_expect_eq(out.req[0].strategy, POD_EVICT_BE_CPU);
}

Test(evict, be_cpu_needs_a_third_of_the_window)
{
	be_cpu_pods();
	start(&cpu_evict_strategy,
	      "{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
	      "\"cpuEvictBESatisfactionLowerPercent\":30,\"cpuEvictBESatisfactionUpperPercent\":50,"
	      "\"cpuEvictTimeWindowSeconds\":30}}",
	      BECPU_KQOS);
	/* 9 samples of a 30 s window: under a third */
	feed_be_starved(1, 9, NULL);
	cr_expect_eq(out.nr, 0);
	feed_be_starved(10, 10, NULL);
	cr_expect_eq(out.nr, 2);
}

Test(evict, be_cpu_usage_below_threshold_does_nothing)
{
	be_cpu_pods();
	start(&cpu_evict_strategy,
	      "{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
	      "\"cpuEvictBESatisfactionLowerPercent\":30,\"cpuEvictBESatisfactionUpperPercent\":50,"
	      "\"cpuEvictBEUsageThresholdPercent\":96,\"cpuEvictTimeWindowSeconds\":10}}",
	      BECPU_KQOS);
	feed_be_starved(1, 10, NULL); /* 95 % < 96 % */
	cr_expect_eq(out.nr, 0);
}

Test(evict, cpu_cool_down_is_twenty_seconds)
{
	be_cpu_pods();
	start(&cpu_evict_strategy, BECPU_SLO, BECPU_KQOS);
	feed_be_starved(1, 10, NULL);
	cr_assert_eq(out.nr, 2);
	feed_be_starved(11, 29, NULL);
	cr_expect_eq(out.nr, 0, "19 s after");
	feed_be_starved(30, 30, NULL);
	cr_expect_eq(out.nr, 2, "20 s after");
}

Test(evict, cpu_evict_by_node_usage)
{
	static const struct canned c[] = {
		{ "mid", 1.0, 0 }, { "batch", 0.2, 0 }, { "mid2", 0.5, 0 }, { "prod", 3, 0 }
	};
	const char *en = ",\"koordinator.sh/eviction-enabled\":\"true\"";
	char b[8192] = "";

	item(b, sizeof(b), "mid", "LS", 7500, 0, en, "");
	item(b, sizeof(b), "batch", "BE", 5500, 0, en, "");
	item(b, sizeof(b), "mid2", "LS", 7500, 0, en, "");
	item(b, sizeof(b), "prod", "LS", 9500, 0, en, "");
	parse(b);
	start(&cpu_evict_strategy,
	      "{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuEvictThresholdPercent\":80,"
	      "\"evictEnabledPriorityThreshold\":7999,\"cpuEvictTimeWindowSeconds\":4}}",
	      "{\"eviction\":{\"features\":[\"CPUEvict\"]}}");
	/* 14 of 16 cores = 87 %: release 16000 x (87 - 78) / 100 = 1440m of CPU used:
	 * batch (200m, priority 5500) then mid (1000m, the larger of the 7500s) = 1200m, then
	 * mid2 (500m) passes it */
	for (uint64_t t = 1; t < 4; t++) {
		struct snapshot *s = snap_at(t, 14, GB, c, 4);

		cr_assert_eq(window__feed(win, s, NULL), 0);
		snapshot__put(s);
	}
	step(snap_at(4, 14, GB, c, 4), NULL);
	expect_victims((const char *const[]){ "batch", "mid", "mid2" }, 3);
}

Test(evict, off_without_node_slo_enable_or_features)
{
	char err[128];

	cr_assert_eq(slo_config_parse(NULL, BECPU_KQOS, &cfg, err, sizeof(err)), 0);
	cr_expect_not(cpu_evict_strategy.enabled(&cfg));
	cr_assert_eq(slo_config_parse(MEM_SLO, NULL, &cfg, err, sizeof(err)), 0);
	cr_expect_not(memory_evict_strategy.enabled(&cfg));
	cr_expect_not(cpu_evict_strategy.enabled(&cfg));
	cr_expect_eq(cfg.evict.memory_threshold_pct, 70);
	cr_expect_eq(cfg.evict.cpu_cool_ns, 20 * SEC);
	cr_expect_eq(cfg.evict.memory_cool_ns, 4 * SEC);
	cr_expect_neq(slo_config_parse(NULL, "{\"eviction\":{\"features\":[\"Nope\"]}}", &cfg, err,
				       sizeof(err)),
		      0);
	cr_expect(strstr(err, "strategies.eviction.features"));
}
