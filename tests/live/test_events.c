// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel's event path on real cgroups and processes: an LS cgroup crowded past its wait
 * target is reported, an uncrowded one is not; the rate limit holds; cgroups made below a
 * watched root, and tasks moved into a managed cgroup, are reported at once.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "cgid.h"
#include "cgroupfs.h"
#include "collector.h"
#include "events.h"
#include "live.h"

#define TARGET_NS 200000ULL

static struct collector *col;
static pid_t kids[8];
static int nkids;
static const char *tags[4];
static int ntags;

static void setup(void)
{
	if (!live_require_root())
		return;
	live_sweep_stale();
}

static void teardown(void)
{
	for (int i = 0; i < nkids; i++)
		live_kill(kids[i]);
	for (int i = 0; i < ntags; i++) {
		live_cg_destroy("cpu", tags[i]);
		live_cg_destroy("cpuacct", tags[i]);
	}
	collector__free(col);
	col = NULL;
	nkids = ntags = 0;
}

TestSuite(events, .init = setup, .fini = teardown, .timeout = 60);

static void open_collector(void)
{
	struct collector_opts o = { .cgroup_mode = KQOS_CG_MODE_V1_CPU, .max_cgroups = 4096 };
	int hier;

	cr_assert_eq(cg_v1_hierarchy_id(NULL, "cpu", &hier), 0);
	o.hierarchy_id = hier;
	cr_assert_eq(collector__open(&o, &col), 0);
}

static __u64 cgid_of(const char *tag)
{
	char path[512];
	__u64 id;

	live_cg_path(path, sizeof(path), "cpu", tag);
	cr_assert_eq(cgid_of_path(path, &id), 0, "%s", path);
	return id;
}

/* A cpu+cpuacct group with @n processes at @duty %. */
static __u64 make_group(const char *tag, int n, int duty)
{
	tags[ntags++] = tag;
	cr_assert_eq(live_cg_create("cpu", tag), 0);
	cr_assert_eq(live_cg_create("cpuacct", tag), 0);
	for (int i = 0; i < n; i++) {
		pid_t pid = live_spawn(duty);

		kids[nkids++] = pid;
		cr_assert_eq(live_cg_attach("cpu", tag, pid), 0);
		cr_assert_eq(live_cg_attach("cpuacct", tag, pid), 0);
		live_go(pid);
	}
	return cgid_of(tag);
}

static __u64 mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* Drain the queue: how many records of @type for @cgid (any cgid when 0). */
static size_t count(__u32 type, __u64 cgid, const struct kqos_event **last)
{
	struct kevents *ev = collector__kevents(col);
	const struct kqos_event *q;
	size_t n = 0, nq;

	kevents__consume(ev);
	nq = kevents__queued(ev, &q);
	for (size_t i = 0; i < nq; i++)
		if (q[i].type == type && (!cgid || q[i].cgid == cgid)) {
			n++;
			if (last)
				*last = &q[i];
		}
	return n;
}

Test(events, a_crowded_ls_cgroup_waits_past_target_and_an_idle_one_does_not)
{
	struct wait_watch w[2];
	const struct kqos_event *e = NULL;
	struct snap_events st;
	__u64 crowd, idle, t0;
	size_t nc, ni;

	open_collector();
	crowd = make_group("ev-crowd", 3, 100); /* three spinners on two CPUs */
	idle = make_group("ev-idle", 1, 0);
	live_sleep_ms(200); /* the idle one woke once, to start; from now on it sleeps */
	w[0] = (struct wait_watch){ .cgid = crowd, .target_ns = TARGET_NS };
	w[1] = (struct wait_watch){ .cgid = idle, .target_ns = TARGET_NS };
	cr_assert_eq(kevents__set_watches(collector__kevents(col), w, 2), 0);
	t0 = mono_ns();
	live_sleep_ms(1500);
	nc = count(KQOS_EV_LS_WAIT, crowd, &e);
	ni = count(KQOS_EV_LS_WAIT, idle, NULL);
	cr_assert_gt(nc, 0, "the crowded cgroup waited past 200 us");
	cr_assert_eq(ni, 0, "a task that never wakes never waits");
	cr_assert_geq(e->value, TARGET_NS, "only waits at or past the target travel");
	cr_assert(e->ts_ns >= t0 && e->ts_ns <= mono_ns(), "timestamps are CLOCK_MONOTONIC");
	cr_assert_lt(e->cpu, 1024);
	/* at most one record per cgroup per ms per CPU */
	cr_assert_leq(nc, 2 * 1600, "%zu records in 1.5 s on 2 CPUs", nc);
	collector__event_stats(col, &st);
	cr_assert_geq(st.emitted, nc);
	cr_assert_eq(st.watches, 2);
	cr_log_info("crowded: %zu records, %llu suppressed by the rate limit", nc,
		    (unsigned long long)st.suppressed);
}

Test(events, no_watch_no_record)
{
	__u64 crowd;

	open_collector();
	crowd = make_group("ev-nowatch", 3, 100);
	live_sleep_ms(800);
	cr_assert_eq(count(KQOS_EV_LS_WAIT, crowd, NULL), 0);
}

Test(events, cgroups_made_below_a_root_and_tasks_joining_a_managed_one_are_reported)
{
	const struct kqos_event *e = NULL;
	char path[600];
	uint64_t root, kept;
	__u64 child;
	pid_t pid;

	open_collector();
	root = make_group("ev-root", 0, 0);
	kept = make_group("ev-managed", 0, 0);
	make_group("ev-other", 0, 0);
	cr_assert_eq(kevents__set_roots(collector__kevents(col), &root, 1), 0);
	cr_assert_eq(kevents__set_managed(collector__kevents(col), &kept, 1), 0);
	live_cg_path(path, sizeof(path) - 8, "cpu", "ev-root");
	strcat(path, "/child");
	cr_assert_eq(mkdir(path, 0755), 0);
	live_cg_path(path, sizeof(path) - 8, "cpu", "ev-other");
	strcat(path, "/child");
	cr_assert_eq(mkdir(path, 0755), 0);
	live_cg_path(path, sizeof(path) - 8, "cpu", "ev-root");
	strcat(path, "/child");
	cr_assert_eq(cgid_of_path(path, &child), 0);
	cr_assert_eq(count(KQOS_EV_CG_MKDIR, 0, &e), 1, "only the child below the root");
	cr_assert_eq(e->cgid, child);
	cr_assert_eq(e->aux, root, "the parent's id comes along");
	cr_assert_eq(rmdir(path), 0);
	cr_assert_eq(count(KQOS_EV_CG_RMDIR, child, NULL), 1);
	pid = live_spawn(0);
	kids[nkids++] = pid;
	cr_assert_eq(live_cg_attach("cpu", "ev-managed", pid), 0);
	cr_assert_eq(live_cg_attach("cpuacct", "ev-managed", pid), 0, "cpuacct is not watched");
	cr_assert_eq(count(KQOS_EV_CG_ATTACH, kept, &e), 1);
	cr_assert_eq(e->value, (__u64)pid);
	cr_assert_eq(e->aux, (__u64)pid, "a single-threaded process: tid == tgid");
	live_cg_path(path, sizeof(path) - 8, "cpu", "ev-other");
	strcat(path, "/child");
	rmdir(path);
}

/* A list given again unchanged is skipped, but a changed one still reaches the kernel. */
Test(events, a_managed_list_that_changes_back_and_forth_is_followed)
{
	const struct kqos_event *e = NULL;
	uint64_t a, b;
	pid_t pid;

	open_collector();
	a = make_group("ev-a", 0, 0);
	b = make_group("ev-b", 0, 0);
	cr_assert_eq(kevents__set_managed(collector__kevents(col), &a, 1), 0);
	cr_assert_eq(kevents__set_managed(collector__kevents(col), &a, 1), 0, "the same: skipped");
	cr_assert_eq(kevents__set_managed(collector__kevents(col), &b, 1), 0, "changed: synced");
	pid = live_spawn(0);
	kids[nkids++] = pid;
	cr_assert_eq(live_cg_attach("cpu", "ev-a", pid), 0);
	cr_assert_eq(count(KQOS_EV_CG_ATTACH, a, NULL), 0, "a left the map");
	cr_assert_eq(live_cg_attach("cpu", "ev-b", pid), 0);
	cr_assert_eq(count(KQOS_EV_CG_ATTACH, b, &e), 1, "b is in it");
	cr_assert_eq(kevents__set_managed(collector__kevents(col), &a, 1), 0, "back to a");
	cr_assert_eq(live_cg_attach("cpu", "ev-a", pid), 0);
	cr_assert_eq(count(KQOS_EV_CG_ATTACH, a, NULL), 1);
}
