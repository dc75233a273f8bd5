// SPDX-License-Identifier: GPL-2.0
/* The actuator on a fake cgroup v2 tree: diff, journal, restore, counters. */
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "actuator.h"
#include "cgroupfs.h"
#include "fake_cgroup.h"
#include "log.h"
#include "plan.h"

#define BE  "/kubepods/besteffort"
#define POD "/kubepods/besteffort/pod1"

static struct fake_cg *fc;
static struct cgroupfs *cg;
static struct actuator *act;
static struct plan plan;
static char state[] = "/tmp/kqos-state-XXXXXX";
static char *state_dir;
static FILE *log_fp;

static const char *const files[] = { "cpu.max", "cpu.weight", "cpu.idle", "cpuset.cpus",
				     "memory.max" };
static const char *const cgs[] = { BE, POD };

/* Start each knob file as cgroupfs would write it, so that restore can be compared byte-wise. */
static void set_files(void)
{
	static const char *const init[] = { "max 100000", "100", "0", "0-3", "max" };

	for (size_t c = 0; c < 2; c++)
		for (size_t f = 0; f < 5; f++)
			cr_assert_eq(fake_cg__write(fc, NULL, cgs[c], files[f], init[f]), 0);
}

static void setup(void)
{
	struct actuator_opts o = { .formula = CG_WEIGHT_LINEAR };

	log_fp = tmpfile();
	log_set_stream(log_fp);
	cr_assert_eq(fake_cg__new(FAKE_CG_V2, &fc), 0);
	cr_assert_eq(fake_cg__mkcg(fc, POD), 0);
	set_files();
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_AUTO, &cg), 0);
	snprintf(state, sizeof(state), "/tmp/kqos-state-XXXXXX");
	state_dir = mkdtemp(state);
	cr_assert_not_null(state_dir);
	o.state_dir = state_dir;
	cr_assert_eq(actuator__new(cg, &o, &act), 0);
	plan_init(&plan);
	plan.strategy = "test";
	plan.prio = 1;
}

static void teardown(void)
{
	char path[PATH_MAX];

	plan_fini(&plan);
	actuator__free(act);
	act = NULL;
	cgroupfs__free(cg);
	cg = NULL;
	fake_cg__free(fc);
	fc = NULL;
	if (state_dir) {
		snprintf(path, sizeof(path), "%s/journal", state_dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/journal.tmp", state_dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/journal.bad", state_dir);
		unlink(path);
		rmdir(state_dir);
		state_dir = NULL;
	}
	log_set_stream(NULL);
	if (log_fp)
		fclose(log_fp);
	log_fp = NULL;
}

TestSuite(actuator, .init = setup, .fini = teardown);

static void rd(const char *cgroup, const char *file, char *buf)
{
	cr_assert_eq(fake_cg__read(fc, NULL, cgroup, file, buf, 64), 0, "%s/%s", cgroup, file);
}

static void expect(const char *cgroup, const char *file, const char *want)
{
	char buf[64];

	rd(cgroup, file, buf);
	cr_assert_str_eq(buf, want, "%s/%s", cgroup, file);
}

static void full_plan(void)
{
	struct cpumask m;

	cpulist_parse("0-1", &m);
	plan_set_cpuset(&plan, BE, &m, "why");
	cpulist_parse("1", &m);
	plan_set_cpuset(&plan, POD, &m, "why");
	plan_set_quota(&plan, BE, 20000, "why");
	plan_set_shares(&plan, BE, 2, "why");
	plan_set_idle(&plan, POD, true, "why");
	plan_set_memory(&plan, POD, 1 << 20, "why");
}

static bool journal_exists(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/journal", state_dir);
	return access(path, F_OK) == 0;
}

Test(actuator, writes_only_differences_and_is_idempotent)
{
	uint64_t n;

	full_plan();
	plan_set_idle(&plan, BE, false, "already 0");
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	expect(BE, "cpuset.cpus", "0-1");
	expect(POD, "cpuset.cpus", "1");
	expect(BE, "cpu.max", "20000 100000");
	expect(BE, "cpu.weight", "1"); /* shares 2 -> weight 1 */
	expect(POD, "cpu.idle", "1");
	expect(POD, "memory.max", "1048576");
	/* the idle=0 entry changed nothing; POD's idle=1 brings its shares along */
	cr_assert_eq(actuator__nr_journal(act), 7);
	cr_assert_eq(actuator__count(act, "test", "cpuset", "ok"), 2);
	cr_assert_eq(actuator__count(act, "test", "idle", "ok"), 1);
	n = cgroupfs__nr_writes(cg);
	cr_assert_eq(actuator__apply(act, &plan, 2), 0);
	cr_assert_eq(cgroupfs__nr_writes(cg), n, "a second apply writes nothing");
	cr_assert_eq(actuator__count(act, "test", "cpuset", "ok"), 2);
}

Test(actuator, restore_is_byte_identical_and_clears_the_journal)
{
	char before[2][5][64], after[64];

	for (size_t c = 0; c < 2; c++)
		for (size_t f = 0; f < 5; f++)
			rd(cgs[c], files[f], before[c][f]);
	full_plan();
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	cr_assert(journal_exists());
	cr_assert_eq(actuator__restore(act), 0);
	for (size_t c = 0; c < 2; c++)
		for (size_t f = 0; f < 5; f++) {
			rd(cgs[c], files[f], after);
			cr_assert_str_eq(after, before[c][f], "%s/%s", cgs[c], files[f]);
		}
	cr_assert_eq(actuator__nr_journal(act), 0);
	cr_assert_not(journal_exists());
}

Test(actuator, journal_survives_the_process)
{
	struct actuator_opts o = { .state_dir = state_dir };
	struct actuator *next;

	full_plan();
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	/* what a new process finds after this one died without restoring */
	cr_assert_eq(actuator__new(cg, &o, &next), 0);
	cr_assert_eq(actuator__nr_journal(next), 7);
	cr_assert_eq(actuator__restore(next), 0);
	actuator__free(next);
	expect(BE, "cpu.max", "max 100000");
	expect(BE, "cpu.weight", "100");
	expect(POD, "cpuset.cpus", "0-3");
	expect(POD, "memory.max", "max");
}

Test(actuator, unplanned_knobs_go_back_to_their_originals)
{
	plan_set_shares(&plan, BE, 2, "weight policy");
	plan_set_quota(&plan, BE, 5000, "quota");
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	expect(BE, "cpu.weight", "1");
	plan_reset(&plan);
	plan_set_quota(&plan, BE, 5000, "quota");
	cr_assert_eq(actuator__apply(act, &plan, 2), 0);
	expect(BE, "cpu.weight", "100");
	expect(BE, "cpu.max", "5000 100000");
	cr_assert_eq(actuator__nr_journal(act), 1);
	cr_assert_eq(actuator__count(act, "restore", "shares", "ok"), 1);
	cr_assert_eq(actuator__apply(act, NULL, 3), 0);
	expect(BE, "cpu.max", "max 100000");
	cr_assert_eq(actuator__nr_journal(act), 0);
	cr_assert_not(journal_exists());
}

Test(actuator, dry_run_writes_nothing)
{
	uint64_t n = cgroupfs__nr_writes(cg);

	actuator__set_dry_run(act, true);
	full_plan();
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	cr_assert_eq(cgroupfs__nr_writes(cg), n);
	cr_assert_not(journal_exists());
	expect(BE, "cpu.max", "max 100000");
	cr_assert_eq(actuator__count(act, "test", "cfs_quota", "dry_run"), 1);
	cr_assert_eq(actuator__count(act, "test", "cpuset", "dry_run"), 2);
}

Test(actuator, vanished_cgroup_is_counted_and_the_rest_applied)
{
	struct snap_enforce se = { 0 };

	plan_set_quota(&plan, "/kubepods/besteffort/gone", 3000, "gone");
	plan_set_quota(&plan, BE, 20000, "why");
	cr_assert_eq(actuator__apply(act, &plan, 7), 0);
	expect(BE, "cpu.max", "20000 100000");
	cr_assert_eq(actuator__count(act, "test", "cfs_quota", "vanished"), 1);
	actuator__fill(act, &se);
	cr_assert_eq(se.write_errors, 1);
	cr_assert_eq(se.nr_recent, 2);
	cr_assert_str_eq(se.recent[0].cgroup, BE, "newest first");
	cr_assert_eq(se.recent[0].wall_ns, 7);
	cr_assert_str_eq(se.recent[0].result, "ok");
	cr_assert_str_eq(se.recent[1].result, "vanished");
	cr_assert_eq(actuator__nr_journal(act), 1);
}

Test(actuator, bad_journal_lines_are_skipped)
{
	struct actuator_opts o = { .state_dir = state_dir };
	struct actuator *next;
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/journal", state_dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("# kqos journal v1\ncfs_quota\t" BE "\t-1 100000\nbogus\t/x\t1\n"
	      "idle\t/../etc\t0\nshares\t" BE "\tw 100\n",
	      f);
	fclose(f);
	cr_assert_eq(actuator__new(cg, &o, &next), 0);
	cr_assert_eq(actuator__nr_journal(next), 2);
	actuator__free(next);
	/* the next save replaces the file: the one with the bad lines is kept for a human */
	snprintf(path, sizeof(path), "%s/journal.bad", state_dir);
	cr_assert_eq(access(path, F_OK), 0, "journal.bad missing");
}

/* The enforcer over the fake tree: a canned snapshot, cfsQuota suppress, then restore. */

/*
 * A journal cut inside its last line ("w 10" of "w 100") holds no value for that knob, and a
 * line longer than any the journal writes is one bad line, however it ends.
 */
Test(actuator, torn_and_overlong_journal_lines_are_skipped)
{
	struct actuator_opts o = { .state_dir = state_dir };
	struct actuator *next;
	char path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/journal", state_dir);
	f = fopen(path, "w");
	cr_assert_not_null(f);
	fputs("# kqos journal v1\ncfs_quota\t" BE "\t-1 100000\n", f);
	for (int i = 0; i < 20000; i++)
		fputc('x', f);
	fputs("\tshares\t" POD "\tw 100\n", f);
	fputs("shares\t" BE "\tw 10", f);
	fclose(f);
	cr_assert_eq(actuator__new(cg, &o, &next), 0);
	cr_assert_eq(actuator__nr_journal(next), 1, "only the whole first line is a value");
	actuator__free(next);
}

/*
 * A journal that cannot be saved (here its temp file's name is taken by a directory): nothing is
 * written, nothing stays journaled in memory only, a later pass does not write either, and once
 * the journal can be saved the plan goes through.
 */
Test(actuator, unsaved_originals_are_never_written)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/journal.tmp", state_dir);
	cr_assert_eq(mkdir(path, 0700), 0);
	plan_set_quota(&plan, BE, 20000, "why");
	for (int pass = 1; pass <= 2; pass++) {
		cr_assert_eq(actuator__apply(act, &plan, pass), 0);
		expect(BE, "cpu.max", "max 100000");
		cr_assert_eq(actuator__nr_journal(act), 0, "pass %d: an unsaved original", pass);
		cr_assert_eq(cgroupfs__nr_writes(cg), 0, "pass %d wrote", pass);
	}
	cr_assert_eq(actuator__count(act, "test", "cfs_quota", "no_journal"), 2);
	cr_assert_eq(rmdir(path), 0);
	cr_assert_eq(actuator__apply(act, &plan, 3), 0);
	expect(BE, "cpu.max", "20000 100000");
	cr_assert(journal_exists());
}

/*
 * A planned cgroup removed and made again under the same path: the old one's original leaves
 * the journal when the write finds it gone, so the new one's own value is what comes back.
 */
Test(actuator, a_remade_cgroup_keeps_its_own_original)
{
	char pod[PATH_MAX];

	plan_set_quota(&plan, POD, 20000, "why");
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	cr_assert_eq(actuator__nr_journal(act), 1);
	cr_assert_eq(fake_cg__path(fc, NULL, POD, NULL, pod, sizeof(pod)), 0);
	cr_assert_eq(fake_rmtree(pod), 0);
	cr_assert_eq(actuator__apply(act, &plan, 2), 0);
	cr_assert_eq(actuator__nr_journal(act), 0, "the gone cgroup stays journaled");
	cr_assert_eq(fake_cg__mkcg(fc, POD), 0);
	cr_assert_eq(fake_cg__write(fc, NULL, POD, "cpu.max", "50000 100000"), 0);
	cr_assert_eq(actuator__apply(act, &plan, 3), 0);
	expect(POD, "cpu.max", "20000 100000");
	cr_assert_eq(actuator__restore(act), 0);
	expect(POD, "cpu.max", "50000 100000");
}

/*
 * Entering cpu.idle drops cpu.shares (the kernel sets the idle weight, and 1024 on leaving), so
 * an idle plan journals the shares too and restore puts them back after idle is left; while
 * idle is planned, the journaled shares are not written (the kernel would refuse them).
 */
Test(actuator, idle_journals_the_shares_it_throws_away)
{
	char path[PATH_MAX], text[1024] = "";
	FILE *f;

	cr_assert_eq(fake_cg__write(fc, NULL, POD, "cpu.weight", "77"), 0);
	plan_set_idle(&plan, POD, true, "why");
	cr_assert_eq(actuator__apply(act, &plan, 1), 0);
	snprintf(path, sizeof(path), "%s/journal", state_dir);
	f = fopen(path, "r");
	cr_assert_not_null(f);
	text[fread(text, 1, sizeof(text) - 1, f)] = '\0';
	fclose(f);
	cr_assert_not_null(strstr(text, "shares\t" POD "\tw 77\n"), "journal: %s", text);
	cr_assert_eq(actuator__nr_journal(act), 2);
	/* what the kernel does to an idle group's weight */
	cr_assert_eq(fake_cg__write(fc, NULL, POD, "cpu.weight", "1"), 0);
	cr_assert_eq(actuator__apply(act, &plan, 2), 0);
	expect(POD, "cpu.weight", "1");
	cr_assert_eq(actuator__restore(act), 0);
	expect(POD, "cpu.idle", "0");
	expect(POD, "cpu.weight", "77");
}
