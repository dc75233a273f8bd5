// SPDX-License-Identifier: GPL-2.0
/* resctrl monitoring for the snapshot, against the fake resctrl tree (no RDT hardware here). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "export_prom.h"
#include "rdtmon.h"
#include "snapjson.h"
#include "resctrl_fake.h"

/* What the agent does each tick: the monitor's readings become the snapshot's input. */
static int fill(const struct rdtmon *m, struct snapshot *s)
{
	s->rdt_enabled = true;
	return rdtmon__copy(m, &s->rdt, &s->nr_rdt);
}

static struct resctrl_fake *fake;
static struct resctrl *r;
static struct rdtmon *mon;

static void setup(void)
{
	cr_assert_eq(resctrl_fake__new("skx2s", &fake), 0);
	cr_assert_eq(resctrl_fake__open(fake, &r), 0);
	cr_assert_eq(resctrl_group_create(r, "LSR"), 0);
	cr_assert_eq(resctrl_group_create(r, "BE"), 0);
	cr_assert_eq(resctrl_group_create(r, "pod-5f3c0000-0000-4000-8000-000000000001"), 0);
	cr_assert_eq(rdtmon__new(NULL, 1000000000ULL, r, &mon), 0);
}

static void teardown(void)
{
	rdtmon__free(mon);
	resctrl_close(r);
	resctrl_fake__free(fake);
}

static const struct snap_rdt_group *group(const struct snapshot *s, const char *name)
{
	for (size_t i = 0; i < s->nr_rdt; i++)
		if (!strcmp(s->rdt[i].name, name))
			return &s->rdt[i];
	return NULL;
}

Test(rdtmon, occupancy_and_bandwidth_per_cache_id, .init = setup, .fini = teardown)
{
	struct snapshot *s;
	const struct snap_rdt_group *be;

	resctrl_fake__set_occupancy(fake, "kqos-BE", 0, 4 << 20);
	resctrl_fake__set_occupancy(fake, "kqos-BE", 1, 1 << 20);
	rdtmon__poll(mon, 1000000000ULL);
	/* 1 s later: 300 MB moved on cache 0, 100 MB on cache 1. */
	resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 300000000);
	resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 1, 100000000);
	resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_LOCAL, 0, 200000000);
	rdtmon__poll(mon, 2000000000ULL);
	s = snapshot__new();
	cr_assert_eq(fill(mon, s), 0);
	cr_expect(s->rdt_enabled);
	cr_assert_eq(s->nr_rdt, 3);
	be = group(s, "kqos-BE");
	cr_assert_not_null(be);
	cr_expect_str_eq(be->class_name, "BE");
	cr_expect_not_null(strstr(be->schemata, "L3:0=7ff;1=7ff"), "%s", be->schemata);
	cr_assert_eq(be->nr_domains, 2);
	cr_expect_eq(be->cache_id[1], 1);
	cr_expect(be->has_llc[0]);
	cr_expect_eq(be->llc_bytes[0], 4 << 20);
	cr_expect_float_eq(be->mbm_total_bps[0], 3e8, 1);
	cr_expect_float_eq(be->mbm_total_bps[1], 1e8, 1);
	cr_expect_float_eq(be->mbm_local_bps[0], 2e8, 1);
	cr_expect_str_eq(group(s, "kqos-pod-5f3c0000-0000-4000-8000-000000000001")->pod_uid,
			 "5f3c0000-0000-4000-8000-000000000001");
	snapshot__put(s);
}

Test(rdtmon, no_value_is_absent_not_zero, .init = setup, .fini = teardown)
{
	struct snapshot *s;
	const struct snap_rdt_group *lsr;
	char *json;

	resctrl_fake__set_mon_state(fake, "kqos-LSR", RESCTRL_EV_LLC_OCCUPANCY, 1, "Unavailable");
	resctrl_fake__set_mon_state(fake, "kqos-LSR", RESCTRL_EV_MBM_TOTAL, 0, "Error");
	rdtmon__poll(mon, 1000000000ULL);
	s = snapshot__new();
	cr_assert_eq(fill(mon, s), 0);
	lsr = group(s, "kqos-LSR");
	cr_assert_not_null(lsr);
	cr_expect(lsr->has_llc[0]);
	cr_expect_not(lsr->has_llc[1]);
	cr_expect_not(lsr->has_mbm_total[0]);
	json = snapjson_format(s, NULL, false);
	cr_assert_not_null(json);
	/* cache 1 of LSR carries no llc_occupancy_bytes key; a first read has no rate yet */
	cr_expect_not_null(strstr(json, "\"group\":\"kqos-LSR\""), "%s", json);
	cr_expect_not_null(strstr(json, "{\"cache_id\":1,\"mbm_total_bytes\":0,"
					"\"mbm_local_bytes\":0}"),
			   "%s", json);
	cr_expect_null(strstr(json, "per_s"), "no rate after one read: %s", json);
	free(json);
	snapshot__put(s);
}

Test(rdtmon, counter_reset_gives_no_rate_then_recovers, .init = setup, .fini = teardown)
{
	struct snapshot *s;

	resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 5000000000ULL);
	rdtmon__poll(mon, 1000000000ULL);
	resctrl_fake__reset_counters(fake, "kqos-BE");
	resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 1000);
	rdtmon__poll(mon, 2000000000ULL);
	s = snapshot__new();
	fill(mon, s);
	/* A reset is never a huge bogus delta: no rate for that interval. */
	cr_expect_not(group(s, "kqos-BE")->has_mbm_total_bps[0]);
	snapshot__put(s);
	resctrl_fake__add_mbm(fake, "kqos-BE", RESCTRL_EV_MBM_TOTAL, 0, 50000000);
	rdtmon__poll(mon, 3000000000ULL);
	s = snapshot__new();
	fill(mon, s);
	cr_expect_float_eq(group(s, "kqos-BE")->mbm_total_bps[0], 5e7, 1);
	snapshot__put(s);
}

Test(rdtmon, cadence_is_its_own, .init = setup, .fini = teardown)
{
	struct snapshot *s;

	resctrl_fake__set_occupancy(fake, "kqos-BE", 0, 1000);
	rdtmon__poll(mon, 1000000000ULL);
	resctrl_fake__set_occupancy(fake, "kqos-BE", 0, 2000);
	rdtmon__poll(mon, 1500000000ULL); /* half an interval: not read again */
	s = snapshot__new();
	fill(mon, s);
	cr_expect_eq(group(s, "kqos-BE")->llc_bytes[0], 1000);
	snapshot__put(s);
}

Test(rdtmon, missing_resctrl_is_enoent)
{
	struct rdtmon *m = NULL;

	cr_expect_eq(rdtmon__new("/nonexistent/resctrl", 1000000000ULL, NULL, &m), -ENOENT);
	cr_expect_null(m);
}

/*
 * Every group draws on the node's ids, kqos's or not: one CLOSID per control group, one RMID per
 * control or monitoring group; the textfile carries both so the pool's end is alertable.
 */
Test(rdtmon, closids_and_rmids_count_every_group, .init = setup, .fini = teardown)
{
	const struct resctrl_caps *caps = resctrl_caps(r);
	struct snap_rdt_ids ids;
	struct snapshot *s;
	char path[PATH_MAX], *text = NULL, line[96];
	size_t len = 0;

	snprintf(path, sizeof(path), "%s/COS7", resctrl_root(r));
	cr_assert_eq(mkdir(path, 0755), 0, "a foreign group, as pqos makes them");
	cr_assert_eq(resctrl_mon_group_create(r, "BE", "c1"), 0);
	cr_assert_eq(resctrl_mon_group_create(r, NULL, "c2"), 0);
	rdtmon__ids(mon, &ids);
	cr_assert_not(ids.has, "nothing counted before the first poll");
	rdtmon__poll(mon, 1000000000ULL);
	rdtmon__ids(mon, &ids);
	cr_assert(ids.has);
	cr_expect_eq(ids.ctrl_groups, 5, "root + 3 kqos + COS7: %u", ids.ctrl_groups);
	cr_expect_eq(ids.rmids_used, 7, "5 control + 2 monitoring groups: %u", ids.rmids_used);
	cr_expect_eq(ids.closids, caps->num_closids);
	cr_expect_eq(ids.rmids, caps->num_rmids);

	s = snapshot__new();
	cr_assert_eq(fill(mon, s), 0);
	s->rdt_ids = ids;
	cr_assert_eq(prom_render(s, NULL, NULL, &text, &len), 0);
	snprintf(line, sizeof(line), "\nkqos_resctrl_closids %u\n", caps->num_closids);
	cr_expect_not_null(strstr(text, line), "%s", text);
	cr_expect_not_null(strstr(text, "\nkqos_resctrl_ctrl_groups 5\n"));
	cr_expect_not_null(strstr(text, "\nkqos_resctrl_rmids_used 7\n"));
	free(text);
	snapshot__put(s);
	rmdir(path);
}

Test(rdtmon, no_resctrl_no_ids)
{
	struct snap_rdt_ids ids = { .has = true };

	rdtmon__ids(NULL, &ids);
	cr_assert_not(ids.has);
}

Test(rdtmon, pod_monitoring_groups_in_a_class_group, .init = setup, .fini = teardown)
{
	const char *dir = "kqos-LSR/mon_groups/kqos-pod-5f3c0000-0000-4000-8000-000000000009";
	const struct snap_rdt_group *g;
	struct snapshot *s;

	cr_assert_eq(resctrl_mon_group_create(r, "LSR", "pod-5f3c0000-0000-4000-8000-000000000009"),
		     0);
	cr_assert_eq(resctrl_fake__set_occupancy(fake, dir, 1, 3 << 20), 0);
	rdtmon__poll(mon, 1000000000ULL);
	cr_assert_eq(resctrl_fake__add_mbm(fake, dir, RESCTRL_EV_MBM_TOTAL, 0, 50000000), 0);
	rdtmon__poll(mon, 2000000000ULL);
	s = snapshot__new();
	cr_assert_eq(fill(mon, s), 0);
	cr_assert_eq(s->nr_rdt, 4);
	g = group(s, dir);
	cr_assert_not_null(g);
	cr_expect(g->is_mon);
	cr_expect_str_eq(g->pod_uid, "5f3c0000-0000-4000-8000-000000000009");
	cr_expect_str_eq(g->class_name, "");
	cr_expect_eq(g->llc_bytes[1], 3 << 20);
	cr_expect_float_eq(g->mbm_total_bps[0], 5e7, 1);
	cr_expect_not(group(s, "kqos-LSR")->is_mon);
	snapshot__put(s);
}
