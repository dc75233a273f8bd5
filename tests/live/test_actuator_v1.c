// SPDX-License-Identifier: GPL-2.0
/*
 * The actuator on real cgroup v1 (this host): the kernel rejects a wrong write order for
 * cpusets and quotas, the actuator's leveled order passes; idempotence; byte-identical
 * restore after a stop and after a SIGKILLed run; a cgroup removed between plan and apply.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <dirent.h>
#include <signal.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "actuator.h"
#include "cgroupfs.h"
#include "enforce.h"
#include "fileio.h"
#include "live.h"
#include "log.h"
#include "plan.h"

static const char *const ctrls[] = { "cpu", "cpuset", "memory" };
static char rel_p[64], rel_c[80];
static struct cgroupfs *cg;
static struct actuator *act;
static struct plan plan;
static char state[] = "/tmp/kqos-state-XXXXXX";
static char *state_dir;
static bool ready;

static int raw_write(const char *ctrl, const char *rel, const char *file, const char *val)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s%s/%s", LIVE_CG_ROOT, ctrl, rel, file);
	return fileio_put(path, val);
}

static void raw_read(const char *ctrl, const char *rel, const char *file, char *buf, size_t n)
{
	char path[PATH_MAX];
	ssize_t len;
	int fd;

	snprintf(path, sizeof(path), "%s/%s%s/%s", LIVE_CG_ROOT, ctrl, rel, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s", path);
	len = read(fd, buf, n - 1);
	close(fd);
	cr_assert_geq(len, 0, "%s", path);
	buf[len] = '\0';
}

/*
 * live_sweep_stale() removes flat kqos-test-* cgroups only: first drop the child "c" of a
 * nested group left by a run that died before its .fini (a timeout kills the worker).
 */
static void sweep_nested(void)
{
	for (size_t i = 0; i < 3; i++) {
		char dir[256], p[600];
		struct dirent *de;
		DIR *d;
		int pid;

		snprintf(dir, sizeof(dir), "%s/%s", LIVE_CG_ROOT, ctrls[i]);
		d = opendir(dir);
		if (!d)
			continue;
		while ((de = readdir(d))) {
			if (sscanf(de->d_name, "kqos-test-%d-act", &pid) != 1 || !kill(pid, 0))
				continue;
			snprintf(p, sizeof(p), "%s/%s/c", dir, de->d_name);
			rmdir(p);
		}
		closedir(d);
	}
}

static void setup(void)
{
	struct actuator_opts o = { .formula = CG_WEIGHT_LINEAR };

	if (geteuid() != 0 || access(LIVE_CG_ROOT "/cpuset/cpuset.cpus", F_OK))
		return;
	sweep_nested();
	live_sweep_stale();
	snprintf(rel_p, sizeof(rel_p), "/kqos-test-%d-act", (int)getpid());
	snprintf(rel_c, sizeof(rel_c), "%s/c", rel_p);
	for (size_t i = 0; i < 3; i++) {
		cr_assert_eq(live_cg_create(ctrls[i], "act"), 0);
		cr_assert_eq(live_cg_create(ctrls[i], "act/c"), 0);
	}
	/* v1 cpuset children start empty */
	cr_assert_eq(raw_write("cpuset", rel_p, "cpuset.mems", "0"), 0);
	cr_assert_eq(raw_write("cpuset", rel_p, "cpuset.cpus", "0-1"), 0);
	cr_assert_eq(raw_write("cpuset", rel_c, "cpuset.mems", "0"), 0);
	cr_assert_eq(raw_write("cpuset", rel_c, "cpuset.cpus", "0-1"), 0);
	cr_assert_eq(cgroupfs__open(LIVE_CG_ROOT, CGFS_MODE_AUTO, &cg), 0);
	snprintf(state, sizeof(state), "/tmp/kqos-state-XXXXXX");
	state_dir = mkdtemp(state);
	cr_assert_not_null(state_dir);
	o.state_dir = state_dir;
	cr_assert_eq(actuator__new(cg, &o, &act), 0);
	plan_init(&plan);
	plan.strategy = "test";
	plan.prio = 1;
	ready = true;
}

static void teardown(void)
{
	char path[PATH_MAX];

	plan_fini(&plan);
	actuator__free(act);
	act = NULL;
	cgroupfs__free(cg);
	cg = NULL;
	for (size_t i = 0; ready && i < 3; i++) {
		live_cg_destroy(ctrls[i], "act/c");
		live_cg_destroy(ctrls[i], "act");
	}
	if (state_dir) {
		snprintf(path, sizeof(path), "%s/journal", state_dir);
		unlink(path);
		rmdir(state_dir);
		state_dir = NULL;
	}
	ready = false;
}

TestSuite(actuator_v1, .init = setup, .fini = teardown, .timeout = 60);

static void require(void)
{
	if (!live_require_root())
		return;
	cr_assert(ready, "setup failed");
}

static void set_cpus(const char *rel, const char *list)
{
	struct cpumask m;

	cr_assert_eq(cpulist_parse(list, &m), 0);
	cr_assert_eq(plan_set_cpuset(&plan, rel, &m, "test"), 0);
}

static void expect(const char *ctrl, const char *rel, const char *file, const char *want)
{
	char buf[128];

	raw_read(ctrl, rel, file, buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = '\0';
	cr_assert_str_eq(buf, want, "%s%s/%s", ctrl, rel, file);
}

static void apply_ok(void)
{
	struct snap_enforce se = { 0 };

	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	actuator__fill(act, &se);
	cr_assert_eq(se.write_errors, 0, "the kernel rejected the actuator's order");
}

Test(actuator_v1, cpuset_wrong_order_fails_leveled_order_passes)
{
	require();
	/* narrowing the parent first: a child would not be a subset any more */
	cr_assert_lt(raw_write("cpuset", rel_p, "cpuset.cpus", "0"), 0);
	set_cpus(rel_p, "0");
	set_cpus(rel_c, "0");
	apply_ok();
	expect("cpuset", rel_p, "cpuset.cpus", "0");
	expect("cpuset", rel_c, "cpuset.cpus", "0");

	/* moving both to CPU 1: the child first is outside its parent */
	cr_assert_lt(raw_write("cpuset", rel_c, "cpuset.cpus", "1"), 0);
	plan_reset(&plan);
	set_cpus(rel_p, "1");
	set_cpus(rel_c, "1");
	apply_ok();
	expect("cpuset", rel_p, "cpuset.cpus", "1");
	expect("cpuset", rel_c, "cpuset.cpus", "1");
	cr_assert_eq(actuator__count(act, "test", "cpuset", "ok"), 4);
}

Test(actuator_v1, quota_wrong_order_fails_leveled_order_passes)
{
	require();
	cr_assert_eq(raw_write("cpu", rel_p, "cpu.cfs_quota_us", "50000"), 0);
	cr_assert_eq(raw_write("cpu", rel_c, "cpu.cfs_quota_us", "50000"), 0);
	/* v1: a parent's quota may not drop below a child's */
	cr_assert_lt(raw_write("cpu", rel_p, "cpu.cfs_quota_us", "20000"), 0);
	plan_set_quota(&plan, rel_p, 20000, "shrink");
	plan_set_quota(&plan, rel_c, 20000, "shrink");
	apply_ok();
	expect("cpu", rel_p, "cpu.cfs_quota_us", "20000");
	expect("cpu", rel_c, "cpu.cfs_quota_us", "20000");

	/* and a child may not grow above its parent */
	cr_assert_lt(raw_write("cpu", rel_c, "cpu.cfs_quota_us", "50000"), 0);
	plan_reset(&plan);
	plan_set_quota(&plan, rel_p, 50000, "grow");
	plan_set_quota(&plan, rel_c, 50000, "grow");
	apply_ok();
	expect("cpu", rel_p, "cpu.cfs_quota_us", "50000");
	expect("cpu", rel_c, "cpu.cfs_quota_us", "50000");

	/* unlimited parent over a limited child */
	plan_reset(&plan);
	plan_set_quota(&plan, rel_p, -1, "release");
	plan_set_quota(&plan, rel_c, 10000, "tight");
	apply_ok();
	expect("cpu", rel_p, "cpu.cfs_quota_us", "-1");
	expect("cpu", rel_c, "cpu.cfs_quota_us", "10000");
}

static void full_plan(void)
{
	set_cpus(rel_p, "0");
	set_cpus(rel_c, "0");
	plan_set_quota(&plan, rel_p, 30000, "test");
	plan_set_quota(&plan, rel_c, 10000, "test");
	plan_set_shares(&plan, rel_c, 2, "test");
	plan_set_idle(&plan, rel_c, true, "test");
	plan_set_memory(&plan, rel_c, 64 << 20, "test");
}

#define NFILES 6
static const struct {
	const char *ctrl, *file;
} knob_files[NFILES] = {
	{ "cpuset", "cpuset.cpus" },	{ "cpu", "cpu.cfs_quota_us" },
	{ "cpu", "cpu.cfs_period_us" }, { "cpu", "cpu.shares" },
	{ "cpu", "cpu.idle" },		{ "memory", "memory.limit_in_bytes" },
};

static void snap_files(char out[2][NFILES][128])
{
	for (size_t i = 0; i < NFILES; i++) {
		raw_read(knob_files[i].ctrl, rel_p, knob_files[i].file, out[0][i], 128);
		raw_read(knob_files[i].ctrl, rel_c, knob_files[i].file, out[1][i], 128);
	}
}

static void expect_same(char a[2][NFILES][128], char b[2][NFILES][128])
{
	for (size_t l = 0; l < 2; l++)
		for (size_t i = 0; i < NFILES; i++)
			cr_assert_str_eq(b[l][i], a[l][i], "%s %s", l ? "child" : "parent",
					 knob_files[i].file);
}

Test(actuator_v1, idempotent_and_restore_byte_identical)
{
	char before[2][NFILES][128], after[2][NFILES][128];
	uint64_t n;

	require();
	snap_files(before);
	full_plan();
	apply_ok();
	/* an idle group has no shares of its own: the shares request is skipped, not failed */
	expect("cpu", rel_c, "cpu.shares", "3");
	expect("cpu", rel_c, "cpu.idle", "1");
	cr_assert_eq(actuator__count(act, "test", "shares", "skipped"), 1);
	expect("memory", rel_c, "memory.limit_in_bytes", "67108864");
	n = cgroupfs__nr_writes(cg);
	apply_ok();
	cr_assert_eq(cgroupfs__nr_writes(cg), n, "second apply wrote something");
	/* shares on a group that is not idle */
	plan_set_shares(&plan, rel_p, 2, "test");
	apply_ok();
	expect("cpu", rel_p, "cpu.shares", "2");
	cr_assert_eq(actuator__restore(act), 0);
	snap_files(after);
	expect_same(before, after);
	cr_assert_eq(actuator__nr_journal(act), 0);
}

Test(actuator_v1, restore_after_sigkill)
{
	char before[2][NFILES][128], after[2][NFILES][128], c;
	struct enforce_opts o = { .cgroup_root = LIVE_CG_ROOT };
	struct enforcer *e;
	int pfd[2], status;
	pid_t pid;

	require();
	snap_files(before);
	full_plan();
	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		/* a kqosd that applied and is then killed without a chance to restore */
		/* never outlive the test, even when it fails before the kill */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		alarm(30);
		close(pfd[0]);
		if (actuator__apply(act, &plan, 1))
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &c, 1), 1, "child did not apply");
	close(pfd[0]);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	cr_assert(WIFSIGNALED(status));
	expect("cpu", rel_c, "cpu.cfs_quota_us", "10000");

	o.state_dir = state_dir;
	cr_assert_eq(enforcer__new(&o, &e), 0);
	enforcer__free(e);
	snap_files(after);
	expect_same(before, after);
}

Test(actuator_v1, cgroup_deleted_between_plan_and_apply)
{
	struct snap_enforce se = { 0 };

	require();
	set_cpus(rel_p, "0");
	set_cpus(rel_c, "0");
	plan_set_quota(&plan, rel_c, 10000, "gone");
	for (size_t i = 0; i < 3; i++)
		live_cg_destroy(ctrls[i], "act/c");
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	expect("cpuset", rel_p, "cpuset.cpus", "0");
	actuator__fill(act, &se);
	cr_assert_eq(se.write_errors, 2);
	cr_assert_eq(actuator__count(act, "test", "cpuset", "vanished") +
			     actuator__count(act, "test", "cfs_quota", "vanished"),
		     2);
	cr_assert_eq(actuator__restore(act), 0);
	expect("cpuset", rel_p, "cpuset.cpus", "0-1");
}
