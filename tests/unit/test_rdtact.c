// SPDX-License-Identifier: GPL-2.0
/*
 * The resctrl actuator against the fake resctrl backend and a fake v1 cgroup tree (no RDT
 * hardware here): schemata per profile, diff-only writes, failures, CLOSID exhaustion, pod
 * groups released after their grace, adoption at restart, task placement and restore.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "cgroupfs.h"
#include "fake_cgroup.h"
#include "rdtact.h"
#include "resctrl_fake.h"

#define SEC 1000000000ULL

static struct resctrl_fake *fake;
static struct resctrl *r;
static struct fake_cg *fcg;
static struct cgroupfs *cg;
static struct rdtact *act;
static struct plan_rdt plan;

static void open_all(const char *profile)
{
	struct rdtact_opts o = { .pod_grace_ns = 5 * SEC };

	cr_assert_eq(resctrl_fake__new(profile, &fake), 0);
	cr_assert_eq(resctrl_fake__open(fake, &r), 0);
	cr_assert_eq(fake_cg__new(FAKE_CG_V1, &fcg), 0);
	cr_assert_eq(cgroupfs__open(fake_cg__root(fcg), CGFS_MODE_AUTO, &cg), 0);
	cr_assert_eq(rdtact__new(r, cg, &o, &act), 0);
}

static void setup(void)
{
	open_all("skx2s");
}

static void teardown(void)
{
	rdtact__free(act);
	plan_rdt_fini(&plan);
	cgroupfs__free(cg);
	fake_cg__free(fcg);
	resctrl_close(r);
	resctrl_fake__free(fake);
}

static unsigned int add_class(const char *name, unsigned int start, unsigned int end,
			      unsigned int mb)
{
	struct plan_rdt_group g = { .fallback = PLAN_RDT_NO_GROUP,
				    .has_l3 = true,
				    .nr_l3 = 1,
				    .has_mb = true,
				    .nr_mb = 1 };
	unsigned int i;

	snprintf(g.name, sizeof(g.name), "%s", name);
	g.l3[0] = (struct plan_rdt_l3){ -1, start, end };
	g.mb[0] = (struct plan_rdt_mb){ -1, mb };
	cr_assert_eq(plan_rdt_add_group(&plan, &g, &i), 0);
	plan.is_on = true;
	return i;
}

static unsigned int add_pod(const char *uid, int fallback)
{
	struct plan_rdt_group g = { .fallback = fallback, .has_l3 = true, .nr_l3 = 1 };
	unsigned int i;

	snprintf(g.name, sizeof(g.name), "pod-%s", uid);
	snprintf(g.pod_uid, sizeof(g.pod_uid), "%s", uid);
	g.l3[0] = (struct plan_rdt_l3){ -1, 50, 100 };
	cr_assert_eq(plan_rdt_add_group(&plan, &g, &i), 0);
	plan.is_on = true;
	return i;
}

static void read_file(const char *rel, char *buf, size_t size)
{
	char path[512];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/%s", resctrl_fake__root(fake), rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", path);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static bool exists(const char *rel)
{
	char path[512];

	snprintf(path, sizeof(path), "%s/%s", resctrl_fake__root(fake), rel);
	return access(path, F_OK) == 0;
}

static struct snap_rdt_enforce stats(void)
{
	struct snap_rdt_enforce st;

	rdtact__fill(act, &st);
	return st;
}

/* --- schemata from percent, per profile -------------------------------------------------- */

static void schemata_of(const struct resctrl_caps *caps, const struct plan_rdt_group *g, char *buf,
			size_t size)
{
	struct resctrl_schemata s;

	cr_assert_eq(rdtact_schemata(caps, g, &s, NULL, 0), 0);
	cr_assert_gt(resctrl_schemata_format(&s, NULL, buf, size), 0);
}

Test(rdtact, class_masks_on_every_profile, .init = setup, .fini = teardown)
{
	static const struct {
		const char *profile, *want;
	} cases[] = {
		{ "skx2s", "L3:0=f;1=f\nMB:0=30;1=30\n" },
		{ "cdp", "L3CODE:0=f;1=f\nL3DATA:0=f;1=f\nMB:0=30;1=30\n" },
		{ "amd", "L3:0=1f;1=1f\nMB:0=40;1=40\n" },
		{ "mbps", "L3:0=f;1=f\nMB:0=25;1=25\n" },
		{ "mb8", "L3:0=f;1=f\nMB:0=30;1=30\n" },
	};
	struct plan_rdt_group g = { .has_l3 = true, .nr_l3 = 1, .has_mb = true, .nr_mb = 1 };
	char buf[256];

	g.l3[0] = (struct plan_rdt_l3){ -1, 0, 30 };
	g.mb[0] = (struct plan_rdt_mb){ -1, 25 };
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct resctrl_fake *f;
		struct resctrl *h;

		cr_assert_eq(resctrl_fake__new(cases[i].profile, &f), 0);
		cr_assert_eq(resctrl_fake__open(f, &h), 0);
		schemata_of(resctrl_caps(h), &g, buf, sizeof(buf));
		cr_expect_str_eq(buf, cases[i].want, "%s", cases[i].profile);
		resctrl_close(h);
		resctrl_fake__free(f);
	}
}

/* A hand-built node: 20 ways, min_cbm_bits 2, cache ids 0 and 2 (a socket without L3 id 1). */
Test(rdtact, twenty_bit_mask_noncontiguous_ids_and_per_cache_override)
{
	struct resctrl_caps caps = { .has_alloc = true, .nr_domains = 2, .domain_ids = { 0, 2 } };
	struct plan_rdt_group g = { .has_l3 = true, .nr_l3 = 2 };
	struct resctrl_schemata s;
	char buf[128], msg[128];

	caps.res[RESCTRL_RES_L3] = (struct resctrl_res_info){ .is_present = true,
							      .is_cache = true,
							      .cbm_mask = 0xfffff,
							      .cbm_len = 20,
							      .min_cbm_bits = 2 };
	g.l3[0] = (struct plan_rdt_l3){ -1, 0, 30 }; /* ceil(6) -> 3f */
	g.l3[1] = (struct plan_rdt_l3){ 2, 50, 100 }; /* 10..20 -> ffc00 */
	schemata_of(&caps, &g, buf, sizeof(buf));
	cr_assert_str_eq(buf, "L3:0=3f;2=ffc00\n");
	/* 0-5 % of 20 ways is one way: fewer than min_cbm_bits */
	g.nr_l3 = 1;
	g.l3[0] = (struct plan_rdt_l3){ -1, 0, 5 };
	cr_assert_eq(rdtact_schemata(&caps, &g, &s, msg, sizeof(msg)), -EINVAL);
	cr_assert(strstr(msg, "Need at least 2 bits"), "%s", msg);
}

/* --- groups and schemata through the fake ------------------------------------------------ */

Test(rdtact, creates_enabled_classes_and_writes_only_differences, .init = setup, .fini = teardown)
{
	char buf[256];

	add_class("BE", 0, 30, 100);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert(exists("kqos-BE"));
	cr_assert_not(exists("kqos-LS"));
	read_file("kqos-BE/schemata", buf, sizeof(buf));
	cr_assert(strstr(buf, "L3:0=00f;1=00f") || strstr(buf, "L3:0=f;1=f"), "%s", buf);
	cr_assert_eq(stats().schemata_writes, 1);
	cr_assert_eq(rdtact__apply(act, &plan, 2 * SEC), 0);
	cr_assert_eq(stats().schemata_writes, 1, "a second pass writes nothing");
	cr_assert_eq(stats().groups, 1);
	/* the class is switched off: its group goes at once */
	plan_rdt_reset(&plan);
	cr_assert_eq(rdtact__apply(act, &plan, 3 * SEC), 0);
	cr_assert_not(exists("kqos-BE"));
	cr_assert_eq(stats().groups_removed, 1);
}

Test(rdtact, rejected_write_is_counted_and_the_pass_goes_on, .init = setup, .fini = teardown)
{
	struct plan_rdt_group g = { .fallback = PLAN_RDT_NO_GROUP, .has_l3 = true, .nr_l3 = 1 };
	unsigned int i;

	snprintf(g.name, sizeof(g.name), "LS");
	g.l3[0] = (struct plan_rdt_l3){ 7, 0, 100 }; /* only a cache id this node lacks */
	add_class("BE", 0, 30, 100);
	cr_assert_eq(plan_rdt_add_group(&plan, &g, &i), 0);
	plan.groups[i].l3[0] = (struct plan_rdt_l3){ -1, 0, 1 }; /* 1 % of 11 ways: 1 way, ok */
	plan.groups[i].has_mb = true;
	plan.groups[i].nr_mb = 1;
	plan.groups[i].mb[0] = (struct plan_rdt_mb){ -1, 101 }; /* refused by the formula */
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert_eq(stats().errors, 1);
	cr_assert(exists("kqos-LS"));
	cr_assert(exists("kqos-BE"));
	cr_assert_eq(stats().schemata_writes, 1, "BE written despite LS failing");
}

Test(rdtact, out_of_closids_pod_stays_in_its_class_group, .init = setup, .fini = teardown)
{
	char uid[32];
	struct snap_rdt_enforce st;
	unsigned int be = add_class("BE", 0, 30, 100);

	/* 16 CLOSIDs: the root and BE take 2, so 14 of 20 pods get their own group */
	for (int i = 0; i < 20; i++) {
		snprintf(uid, sizeof(uid), "p%02d", i);
		add_pod(uid, (int)be);
	}
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	st = stats();
	cr_assert_eq(st.pod_groups, 14);
	cr_assert_eq(st.pods_no_closid, 6);
	cr_assert_eq(st.no_closid, 6);
	cr_assert_str_eq(st.no_closid_uid[0], "p14");
	cr_assert_eq(st.errors, 0, "out of CLOSIDs is not a write error");
	cr_assert_eq(rdtact__apply(act, &plan, 2 * SEC), 0);
	cr_assert_eq(stats().no_closid, 6, "counted once per pod");
}

Test(rdtact, foreign_groups_are_never_touched, .init = setup, .fini = teardown)
{
	char before[256], after[256];

	/* koordlet's own LS group beside ours */
	cr_assert_eq(resctrl_fake_backend.mkdir(fake, -1, "LS"), 0);
	read_file("LS/schemata", before, sizeof(before));
	add_class("LS", 0, 50, 50);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert_eq(rdtact__restore(act), 0);
	cr_assert(exists("LS"));
	read_file("LS/schemata", after, sizeof(after));
	cr_assert_str_eq(before, after);
	cr_assert_not(exists("kqos-LS"));
}

Test(rdtact, pod_group_removed_after_grace, .init = setup, .fini = teardown)
{
	add_pod("gone", PLAN_RDT_NO_GROUP);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert(exists("kqos-pod-gone"));
	plan_rdt_reset(&plan);
	plan.is_on = true;
	cr_assert_eq(rdtact__apply(act, &plan, 2 * SEC), 0);
	cr_assert(exists("kqos-pod-gone"), "kept within the grace");
	cr_assert_eq(rdtact__apply(act, &plan, 6 * SEC), 0);
	cr_assert(exists("kqos-pod-gone"));
	cr_assert_eq(rdtact__apply(act, &plan, 7 * SEC + 1), 0);
	cr_assert_not(exists("kqos-pod-gone"));
}

Test(rdtact, restart_adopts_live_pods_and_removes_dead_ones, .init = setup, .fini = teardown)
{
	struct rdtact_opts o = { .pod_grace_ns = 5 * SEC };
	struct rdtact *again;

	/* what a killed run left: two pod groups and BE */
	cr_assert_eq(resctrl_group_create(r, "pod-live"), 0);
	cr_assert_eq(resctrl_group_create(r, "pod-dead"), 0);
	cr_assert_eq(resctrl_group_create(r, "BE"), 0);
	cr_assert_eq(rdtact__new(r, cg, &o, &again), 0);
	add_pod("live", PLAN_RDT_NO_GROUP);
	cr_assert_eq(rdtact__apply(again, &plan, 100 * SEC), 0);
	cr_assert(exists("kqos-pod-live"));
	cr_assert_not(exists("kqos-BE"), "no class planned: removed at once");
	cr_assert(exists("kqos-pod-dead"), "a pod group gets its grace");
	cr_assert_eq(rdtact__apply(again, &plan, 106 * SEC), 0);
	cr_assert_not(exists("kqos-pod-dead"));
	cr_assert(exists("kqos-pod-live"));
	rdtact__free(again);
}

/* --- tasks ------------------------------------------------------------------------------ */

static pid_t spawn(void)
{
	pid_t p = fork();

	if (!p) {
		pause();
		_exit(0);
	}
	cr_assert_gt(p, 0);
	return p;
}

static void reap(pid_t p)
{
	kill(p, SIGKILL);
	waitpid(p, NULL, 0);
}

static bool in_tasks(const char *group, pid_t tid)
{
	char buf[4096], *line, *save = NULL;

	read_file(group, buf, sizeof(buf));
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (atoi(line) == tid)
			return true;
	return false;
}

Test(rdtact, reconcile_places_threads_and_counts_misses, .init = setup, .fini = teardown)
{
	pid_t a = spawn(), b = spawn();
	unsigned int be = add_class("BE", 0, 30, 100);
	char tasks[64];

	cr_assert_eq(fake_cg__mkcg(fcg, "/kubepods/besteffort/podx/c0"), 0);
	snprintf(tasks, sizeof(tasks), "%d\n", a);
	cr_assert_eq(fake_cg__write(fcg, "cpu", "/kubepods/besteffort/podx/c0", "tasks", tasks), 0);
	cr_assert_eq(plan_rdt_add_member(&plan, "/kubepods/besteffort/podx/c0", 42, be), 0);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert(in_tasks("kqos-BE/tasks", a));
	cr_assert_eq(stats().placed_reconcile, 1);
	cr_assert_eq(stats().misses, 0, "a newcomer is no miss");
	/* b joins and no event comes: the next reconcile finds it, a miss */
	snprintf(tasks, sizeof(tasks), "%d\n%d\n", a, b);
	cr_assert_eq(fake_cg__write(fcg, "cpu", "/kubepods/besteffort/podx/c0", "tasks", tasks), 0);
	cr_assert_eq(rdtact__apply(act, &plan, 2 * SEC), 0);
	cr_assert(in_tasks("kqos-BE/tasks", b));
	cr_assert_eq(stats().misses, 1);
	cr_assert_eq(stats().placed_reconcile, 2);
	reap(a);
	reap(b);
}

Test(rdtact, attach_event_places_at_once_and_fallback_when_no_closid, .init = setup,
     .fini = teardown)
{
	pid_t a = spawn(), b = spawn();
	struct rdtact_opts o = { .no_reconcile = true };
	unsigned int be, pod;
	struct timespec ts;

	rdtact__free(act);
	cr_assert_eq(rdtact__new(r, cg, &o, &act), 0);
	be = add_class("BE", 0, 30, 100);
	pod = add_pod("p1", (int)be);
	cr_assert_eq(plan_rdt_add_member(&plan, "/kubepods/besteffort/podb", 7, be), 0);
	cr_assert_eq(plan_rdt_add_member(&plan, "", 8, pod), 0);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	cr_assert_eq(rdtact__place(act, 7, a, (uint64_t)ts.tv_sec * SEC + ts.tv_nsec), 1);
	cr_assert(in_tasks("kqos-BE/tasks", a));
	cr_assert_eq(rdtact__place(act, 8, b, 0), 1);
	cr_assert(in_tasks("kqos-pod-p1/tasks", b));
	cr_assert_eq(rdtact__place(act, 9, b, 0), 0, "not a managed cgroup");
	cr_assert_eq(stats().placed_events, 2);
	cr_assert_eq(stats().place_count, 1);
	cr_assert_lt(stats().place_max_s, 1.0);
	reap(a);
	reap(b);
}

Test(rdtact, restore_removes_every_kqos_group_and_tasks_go_to_root, .init = setup, .fini = teardown)
{
	pid_t a = spawn();
	char before[512], after[512];
	unsigned int be;

	read_file("schemata", before, sizeof(before));
	be = add_class("BE", 0, 30, 30);
	add_class("LS", 0, 100, 100);
	add_pod("p1", (int)be);
	cr_assert_eq(plan_rdt_add_member(&plan, "", 5, be), 0);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert_eq(rdtact__place(act, 5, a, 0), 1);
	cr_assert_eq(rdtact__restore(act), 0);
	cr_assert_not(exists("kqos-BE"));
	cr_assert_not(exists("kqos-LS"));
	cr_assert_not(exists("kqos-pod-p1"));
	cr_assert(in_tasks("tasks", a));
	read_file("schemata", after, sizeof(after));
	cr_assert_str_eq(before, after);
	cr_assert_eq(rdtact__place(act, 5, a, 0), 0, "nothing planned after a restore");
	reap(a);
}

Test(rdtact, no_allocation_on_mon_only, .fini = teardown)
{
	open_all("mon-only");
	add_class("BE", 0, 30, 100);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert_not(exists("kqos-BE"));
	cr_assert_eq(stats().errors, 0);
}

Test(rdtact, reconcile_between_ticks_repairs_from_the_last_plan, .init = setup, .fini = teardown)
{
	pid_t a = spawn();
	unsigned int be = add_class("BE", 0, 30, 100);
	char tasks[32];

	cr_assert_eq(rdtact__reconcile(act, 1 * SEC), 0, "nothing planned yet");
	cr_assert_not(exists("kqos-BE"));
	cr_assert_eq(fake_cg__mkcg(fcg, "/bepod"), 0);
	snprintf(tasks, sizeof(tasks), "%d\n", a);
	cr_assert_eq(fake_cg__write(fcg, "cpu", "/bepod", "tasks", tasks), 0);
	cr_assert_eq(plan_rdt_add_member(&plan, "/bepod", 11, be), 0);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	/* someone removes the group: the next reconcile, with no new plan, puts it back */
	cr_assert_eq(resctrl_fake_backend.rmdir(fake, -1, "kqos-BE"), 0);
	plan_rdt_reset(&plan);
	cr_assert_eq(rdtact__reconcile(act, 2 * SEC), 0);
	cr_assert(exists("kqos-BE"));
	cr_assert(in_tasks("kqos-BE/tasks", a));
	cr_assert_eq(stats().groups_created, 2);
	reap(a);
}

Test(rdtact, ls_pod_monitoring_group_while_rmids_last, .init = setup, .fini = teardown)
{
	pid_t a = spawn(), b = spawn();
	unsigned int ls = add_class("LS", 0, 100, 100);
	char tasks[32];

	cr_assert_eq(fake_cg__mkcg(fcg, "/lsa"), 0);
	cr_assert_eq(fake_cg__mkcg(fcg, "/lsb"), 0);
	snprintf(tasks, sizeof(tasks), "%d\n", a);
	cr_assert_eq(fake_cg__write(fcg, "cpu", "/lsa", "tasks", tasks), 0);
	snprintf(tasks, sizeof(tasks), "%d\n", b);
	cr_assert_eq(fake_cg__write(fcg, "cpu", "/lsb", "tasks", tasks), 0);
	cr_assert_eq(plan_rdt_add_member(&plan, "/lsa", 21, ls), 0);
	plan_rdt_set_mon(&plan, 0, "pod-a");
	cr_assert_eq(plan_rdt_add_member(&plan, "/lsb", 22, ls), 0);
	plan_rdt_set_mon(&plan, 1, "pod-b");
	/* the root and kqos-LS hold two RMIDs: one left, for pod-a only */
	cr_assert_eq(resctrl_fake__set_num_rmids(fake, 3), 0);
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert(exists("kqos-LS/mon_groups/kqos-pod-a"));
	cr_assert_not(exists("kqos-LS/mon_groups/kqos-pod-b"));
	cr_assert(in_tasks("kqos-LS/mon_groups/kqos-pod-a/tasks", a));
	cr_assert(in_tasks("kqos-LS/tasks", b), "pod-b degrades to class level");
	cr_assert_eq(stats().mon_groups, 1);
	cr_assert_eq(stats().no_rmid, 1);
	cr_assert_eq(stats().errors, 0);
	/* pod-a goes: its monitoring group after the grace */
	plan.nr_members = 1;
	strcpy(plan.members[0].cgroup, "/lsb");
	plan.members[0].cgid = 22;
	strcpy(plan.members[0].mon, "pod-b");
	cr_assert_eq(rdtact__apply(act, &plan, 2 * SEC), 0);
	cr_assert(exists("kqos-LS/mon_groups/kqos-pod-a"), "within the grace");
	cr_assert_eq(rdtact__apply(act, &plan, 8 * SEC), 0);
	cr_assert_not(exists("kqos-LS/mon_groups/kqos-pod-a"));
	resctrl_fake__age_limbo(fake);
	cr_assert_eq(rdtact__apply(act, &plan, 9 * SEC), 0);
	cr_assert(exists("kqos-LS/mon_groups/kqos-pod-b"), "the freed RMID goes to pod-b");
	cr_assert(in_tasks("kqos-LS/mon_groups/kqos-pod-b/tasks", b));
	reap(a);
	reap(b);
}

Test(rdtact, attach_event_places_in_the_pods_monitoring_group, .init = setup, .fini = teardown)
{
	pid_t a = spawn();
	unsigned int ls = add_class("LS", 0, 100, 100);

	cr_assert_eq(plan_rdt_add_member(&plan, "", 31, ls), 0);
	plan_rdt_set_mon(&plan, 0, "pod-e");
	cr_assert_eq(rdtact__apply(act, &plan, 1 * SEC), 0);
	cr_assert_eq(rdtact__place(act, 31, a, 0), 1);
	cr_assert(in_tasks("kqos-LS/mon_groups/kqos-pod-e/tasks", a));
	cr_assert(in_tasks("kqos-LS/tasks", a), "a CTRL_MON group lists its MON groups' tasks");
	reap(a);
}
