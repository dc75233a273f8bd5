// SPDX-License-Identifier: GPL-2.0
/* The enforcer (strategies -> plan -> actuator) on a fake cgroup v2 tree and canned snapshots. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "actuator.h"
#include "enforce.h"
#include "fake_cgroup.h"
#include "log.h"
#include "resctrl_fake.h"

#define BE  "/kubepods/besteffort"
#define POD "/kubepods/besteffort/pod1"

static const char quota_policy[] = "{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
				   "\"cpuSuppressPolicy\":\"cfsQuota\","
				   "\"cpuSuppressThresholdPercent\":50}}";

static struct fake_cg *fc;
static char state[] = "/tmp/kqos-enforce-XXXXXX";
static char *state_dir;
static FILE *log_fp;
static struct snapshot *snap;
static struct pod be = { .uid = "1",
			 .qos_raw = POD_QOS_BE,
			 .qos = POD_QOS_BE,
			 .k8s_qos = POD_K8S_QOS_BESTEFFORT,
			 .is_active = true };

static void set_files(const char *cg)
{
	static const char *const files[] = { "cpu.max", "cpu.weight", "cpu.idle", "cpuset.cpus",
					     "memory.max" };
	static const char *const init[] = { "max 100000", "100", "0", "0-3", "max" };

	for (size_t f = 0; f < 5; f++)
		cr_assert_eq(fake_cg__write(fc, NULL, cg, files[f], init[f]), 0);
}

/* One BE pod using a CPU on a 4-CPU node that uses one in all. */
static struct snapshot *canned(void)
{
	struct snapshot *s = snapshot__new();

	s->node.nr_cpus = 4;
	s->node.has_cpu_usage = true;
	s->node.cpu_cores_used = 1.0;
	snprintf(s->node.besteffort, sizeof(s->node.besteffort), "kubepods/besteffort");
	s->pods = calloc(1, sizeof(*s->pods));
	s->nr_pods = 1;
	s->pods[0].pod = &be;
	s->pods[0].cgroup = strdup(POD);
	s->pods[0].st.has_cpu = true;
	s->pods[0].st.cpu_cores = 1.0;
	return s;
}

static void setup(void)
{
	log_fp = tmpfile();
	log_set_stream(log_fp);
	cr_assert_eq(fake_cg__new(FAKE_CG_V2, &fc), 0);
	cr_assert_eq(fake_cg__mkcg(fc, POD), 0);
	set_files(BE);
	set_files(POD);
	snprintf(state, sizeof(state), "/tmp/kqos-enforce-XXXXXX");
	state_dir = mkdtemp(state);
	cr_assert_not_null(state_dir);
	snap = canned();
}

static void teardown(void)
{
	char path[PATH_MAX];

	snapshot__put(snap);
	snap = NULL;
	fake_cg__free(fc);
	fc = NULL;
	if (state_dir) {
		snprintf(path, sizeof(path), "%s/journal", state_dir);
		unlink(path);
		rmdir(state_dir);
		state_dir = NULL;
	}
	log_set_stream(NULL);
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
}

TestSuite(enforce, .init = setup, .fini = teardown);

static void expect(const char *cgroup, const char *file, const char *want)
{
	char buf[64];

	cr_assert_eq(fake_cg__read(fc, NULL, cgroup, file, buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, want, "%s/%s", cgroup, file);
}

static struct enforcer *open_enforcer(const char *policy, const char *kqos, bool dry_run)
{
	struct enforce_opts o = { .cgroup_root = fake_cg__root(fc),
				  .state_dir = state_dir,
				  .dry_run = dry_run,
				  .policy_json = policy,
				  .kqos_json = kqos };
	struct enforcer *e = NULL;

	cr_assert_eq(enforcer__new(&o, &e), 0);
	return e;
}

Test(enforce, tick_applies_reports_and_restores)
{
	struct enforcer *e = open_enforcer(quota_policy, NULL, false);
	struct snap_enforce se = { 0 };

	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	/* 4000 * 50 % - 0 (no non-BE pods, no system) = 2000m -> 200000 us */
	expect(BE, "cpu.max", "200000 100000");
	cr_assert(se.enabled && se.has_be_quota && !se.has_be_cpus);
	cr_assert_eq(se.be_quota_us, 200000);
	cr_assert_gt(se.nr_counts, 0, "the actuator's counters come with the report");
	cr_assert_eq(enforcer__restore(e), 0);
	expect(BE, "cpu.max", "max 100000");
	expect(BE, "cpuset.cpus", "0-3");
	enforcer__free(e);
}

Test(enforce, a_bad_reload_keeps_the_last_good_config)
{
	struct enforcer *e = open_enforcer(quota_policy, NULL, false);
	struct snap_enforce se = { 0 };

	cr_assert_eq(enforcer__reconfigure(e, "{\"resourceUsedThresholdWithBE\":{\"enable\":3}}",
					   NULL, false),
		     -EINVAL);
	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	expect(BE, "cpu.max", "200000 100000");
	cr_assert_eq(enforcer__reconfigure(e, "{}", NULL, false), 0);
	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	expect(BE, "cpu.max", "max 100000");
	cr_assert_not(se.enabled);
	cr_assert_not(se.has_be_quota, "a strategy that is off reports nothing");
	enforcer__free(e);
}

Test(enforce, validate_names_the_field)
{
	char err[256] = "";

	cr_assert_eq(enforce_validate("{\"resourceUsedThresholdWithBE\":"
				      "{\"cpuSuppressThresholdPercent\":140}}",
				      NULL, err, sizeof(err)),
		     -EINVAL);
	cr_assert_not_null(strstr(err, "cpuSuppressThresholdPercent"), "%s", err);
	cr_assert_eq(enforce_validate(NULL, "{\"cpuSupress\":{}}", err, sizeof(err)), -EINVAL);
	cr_assert_not_null(strstr(err, "cpuSupress"), "an unknown kqos key is a typo: %s", err);
	cr_assert_eq(enforce_validate(quota_policy, NULL, err, sizeof(err)), 0);
}

Test(enforce, dry_run_reports_and_writes_nothing)
{
	struct enforcer *e = open_enforcer(quota_policy, NULL, true);
	struct snap_enforce se = { 0 };

	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	expect(BE, "cpu.max", "max 100000");
	cr_assert(se.dry_run && se.has_be_quota);
	cr_assert_eq(actuator__count(enforcer__actuator(e), "cpu_suppress", "cfs_quota", "dry_run"),
		     1);
	cr_assert_eq(actuator__nr_journal(enforcer__actuator(e)), 0, "a dry run journals nothing");
	enforcer__free(e);
}

/* A crash leaves the journal behind: the next start puts the originals back by default. */
Test(enforce, a_crash_journal_is_restored_at_start)
{
	struct enforcer *e = open_enforcer(quota_policy, NULL, false);
	struct snap_enforce se = { 0 };

	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	expect(BE, "cpu.max", "200000 100000");
	enforcer__free(e); /* no restore: as if killed */
	e = open_enforcer(quota_policy, NULL, false);
	expect(BE, "cpu.max", "max 100000");
	cr_assert_eq(actuator__nr_journal(enforcer__actuator(e)), 0);
	enforcer__free(e);
}

Test(enforce, recovery_adopt_keeps_the_values_and_their_originals)
{
	struct enforcer *e = open_enforcer(quota_policy, "{\"recovery\":\"adopt\"}", false);
	struct snap_enforce se = { 0 };

	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	enforcer__free(e);
	e = open_enforcer(quota_policy, "{\"recovery\":\"adopt\"}", false);
	expect(BE, "cpu.max", "200000 100000");
	cr_assert_gt(actuator__nr_journal(enforcer__actuator(e)), 0);
	cr_assert_eq(enforcer__restore(e), 0, "the adopted originals still go back on stop");
	expect(BE, "cpu.max", "max 100000");
	enforcer__free(e);
}

Test(enforce, weight_policy_lowers_be_shares_without_a_quota)
{
	struct enforcer *e = open_enforcer("{\"resourceUsedThresholdWithBE\":{\"enable\":true}}",
					   "{\"cpuSuppress\":{\"policy\":\"weight\"}}", false);
	struct snap_enforce se = { 0 };

	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	expect(BE, "cpu.weight", "1");
	expect(BE, "cpu.max", "max 100000");
	cr_assert(se.enabled && !se.has_be_quota && !se.has_be_cpus);
	cr_assert_eq(enforcer__restore(e), 0);
	expect(BE, "cpu.weight", "100");
	enforcer__free(e);
}

/*
 * resctrl_adapt on the event path: an LS wait the guard blames on BE steps kqos-BE down at
 * once, written by the resctrl actuator between ticks (the fake resctrl backend, skx2s: 7ff).
 */
Test(enforce, ls_latency_event_shrinks_be_resctrl_between_ticks)
{
	static const char policy[] = "{\"resourceQOSStrategy\":{\"beClass\":{\"resctrlQOS\":"
				     "{\"enable\":true}}}}";
	static const char kqos[] = "{\"latencyGuard\":{\"enable\":true},"
				   "\"resctrlAdapt\":{\"enable\":true}}";
	struct wait_event w = { .cgid = 77, .wait_ns = 5000000, .prev_cgid = 55, .cpu = 1 };
	struct enforce_opts o = { .cgroup_root = fake_cg__root(fc),
				  .state_dir = state_dir,
				  .policy_json = policy,
				  .kqos_json = kqos };
	struct enforcer_now now = { .waits = &w, .nr_waits = 1 };
	struct snap_enforce se = { 0 };
	struct resctrl_fake *rf;
	struct enforcer *e = NULL;
	struct resctrl *r;
	char path[PATH_MAX], buf[256];
	FILE *f;
	size_t n;

	cr_assert_eq(resctrl_fake__new("skx2s", &rf), 0);
	cr_assert_eq(resctrl_fake__open(rf, &r), 0);
	o.resctrl = r;
	cr_assert_eq(enforcer__new(&o, &e), 0);
	snap->rdt_enabled = true;
	snap->pods[0].cgid = 55;
	snap->mono_ns = 1000000000ULL;
	cr_assert_eq(enforcer__tick(e, snap, &se), 0);
	snprintf(path, sizeof(path), "%s/kqos-BE/schemata", resctrl_fake__root(rf));
	f = fopen(path, "r");
	cr_assert_not_null(f, "kqos-BE not created");
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	cr_assert(strstr(buf, "L3:0=f;1=f"), "BE at 0-30 %%: %s", buf);

	now.mono_ns = snap->mono_ns + 300000000ULL;
	w.ts_ns = now.mono_ns;
	cr_assert_eq(enforcer__react(e, snap, &now, &se), 0);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	/* 0-20 % of 11 ways = 3 ways; MB 100 -> 90 */
	cr_assert(strstr(buf, "L3:0=7;1=7"), "BE one step down: %s", buf);
	cr_assert(strstr(buf, "MB:0=90;1=90"), "%s", buf);
	cr_assert_eq(enforcer__restore(e), 0);
	enforcer__free(e);
	resctrl_close(r);
	resctrl_fake__free(rf);
}
