// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup faults against the real kqosd: BE cgroups removed while it enforces on a 50 ms
 * interval (between the plan and the write), and a cgroupRoot without the cpuset controller.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "daemon.h"
#include "faultenv.h"
#include "live.h"

static struct faultenv *fe;
static pid_t fighter = -1;

static void teardown(void)
{
	live_kill(fighter);
	fighter = -1;
	faultenv__free(fe);
	fe = NULL;
}

static bool env(unsigned int nr_be, unsigned int flags)
{
	if (!live_require_root())
		return false;
	live_sweep_stale();
	cr_assert_eq(faultenv__new(nr_be, flags, &fe), 0, "fault env");
	cr_assert_eq(access(fe->kqosd, X_OK), 0, "%s not built", fe->kqosd);
	return true;
}

/*
 * Someone else writing the originals back into be1..be<n>'s cpu.shares every 2 ms, so that
 * kqosd writes them again every tick: each tick has writes a removal can fall between.
 */
static pid_t fight(unsigned int n)
{
	char paths[FAULTENV_MAX_BE][512], vals[FAULTENV_MAX_BE][16];
	pid_t pid;

	for (unsigned int i = 1; i <= n; i++) {
		char tag[32];

		snprintf(tag, sizeof(tag), "top/be%u", i);
		live_cg_path(paths[i - 1], sizeof(paths[0]) - 16, "cpu", tag);
		strcat(paths[i - 1], "/cpu.shares");
		snprintf(vals[i - 1], sizeof(vals[0]), "%u", 700 + i);
	}
	pid = fork();
	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (;;) {
		for (unsigned int i = 0; i < n; i++) {
			int fd = open(paths[i], O_WRONLY | O_CLOEXEC);

			if (fd < 0)
				continue;
			if (write(fd, vals[i], strlen(vals[i])) < 0)
				(void)0; /* removed under us: the point */
			close(fd);
		}
		usleep(2000);
	}
}

/* Lines holding @needle above debug (KQOS_TEST_DEBUG=1 turns debug on). */
static int said(const char *needle)
{
	return daemon_log_count(fe->errlog, needle, NULL) -
	       daemon_log_count(fe->errlog, "level=debug", needle);
}

/* enforcement.write_errors of a snapshot, -1 without one */
static long write_errors(void)
{
	json_t *root, *e;
	char *line = NULL;
	long n = -1;

	if (faultenv_request(fe, "snapshot\n", 5000, &line))
		return -1;
	root = json_loads(line, 0, NULL);
	e = json_object_get(json_object_get(root, "enforcement"), "write_errors");
	if (json_is_integer(e))
		n = (long)json_integer_value(e);
	json_decref(root);
	free(line);
	return n;
}

#define NR_BE  12
#define KEEP   6 /* be1..be6 stay, be7..be12 go */
#define NKNOBS 3 /* what weight suppress writes: shares, quota, cpuset */

Test(faults_cgroup, be_cgroups_removed_while_enforcing, .fini = teardown, .timeout = 30)
{
	struct faultenv_knobs before, after;
	char diff[256], journal[8192], needle[32];
	long errs;
	int n;

	if (!env(NR_BE, 0))
		return;
	faultenv_knobs_read(fe, &before);
	cr_assert_eq(faultenv_write_suppress(fe, "50ms", "weight", 2, "restore"), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	cr_assert(faultenv_wait_file(fe, "cpu", NR_BE, "cpu.shares", "2", 5000), "no enforcement");
	fighter = fight(NR_BE);
	live_sleep_ms(300);
	for (unsigned int i = KEEP + 1; i <= NR_BE; i++) {
		cr_assert_eq(faultenv_remove_be(fe, i), 0, "rmdir be%u", i);
		live_sleep_ms(20); /* a few ticks apart, so removals fall at several points */
		memset(before.v[i], 0, sizeof(before.v[i]));
	}
	live_sleep_ms(1500);

	cr_expect(faultenv_alive(fe), "kqosd died");
	n = said("cgroup write failed");
	/* one line per vanished (cgroup, knob) when it first fails; a storm is one per tick */
	cr_expect_leq(n, 2 * (NR_BE - KEEP) * NKNOBS, "%d write-failure lines: a storm", n);
	cr_expect_eq(daemon_log_count(fe->errlog, "level=error", NULL), 0, "an error line");
	/* the rmdir events made the group look again: the plan let go of them */
	errs = write_errors();
	live_sleep_ms(500);
	cr_expect_eq(write_errors(), errs, "failed writes go on after the removal");
	faultenv_journal(fe, journal, sizeof(journal));
	for (unsigned int i = KEEP + 1; i <= NR_BE; i++) {
		snprintf(needle, sizeof(needle), "\t/be%u\t", i);
		cr_expect_null(strstr(journal, needle), "journal keeps removed be%u", i);
	}
	snprintf(needle, sizeof(needle), "\t/be%u\t", KEEP);
	cr_expect_not_null(strstr(journal, needle), "journal lost be%u, still enforced", KEEP);

	/* be7 again, with a value of its own: that is what must come back, not the old be7's */
	live_kill(fighter);
	fighter = -1;
	cr_assert_eq(faultenv_readd_be(fe, KEEP + 1, "900"), 0);
	faultenv_knobs_read_one(fe, KEEP + 1, &before);
	cr_assert_str_eq(before.v[KEEP + 1][0], "900");
	/* its mkdir event makes the static group look again (it polls only every 10 s) */
	cr_expect(faultenv_wait_file(fe, "cpu", KEEP + 1, "cpu.shares", "2", 3000),
		  "the new be%u is not enforced", KEEP + 1);
	cr_expect_eq(faultenv_stop(fe), 0);
	faultenv_knobs_read(fe, &after);
	cr_expect_not(faultenv_knobs_diff(fe, &after, &before, diff, sizeof(diff)),
		      "not restored: %s", diff);
}

/*
 * A cgroupRoot with cpu and cpuacct but no cpuset (the cpuset hierarchy is simply not there):
 * kqosd says so, keeps monitoring, enforces what it can (shares), never writes the real cpuset
 * files, and restores on SIGTERM.
 */
Test(faults_cgroup, missing_cpuset_controller, .fini = teardown, .timeout = 30)
{
	struct faultenv_knobs before, after;
	char diff[256], *line = NULL;
	int n;

	if (!env(2, FAULTENV_NO_CPUSET))
		return;
	faultenv_knobs_read(fe, &before);
	cr_assert_eq(faultenv_write_suppress(fe, "100ms", "weight", 2, "restore"), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	cr_expect(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", "2", 5000),
		  "shares not enforced without cpuset");
	cr_expect_eq(daemon_log_count(fe->errlog, "controller=cpuset", "not mounted"), 1,
		     "the missing cpuset controller is not said once");
	live_sleep_ms(1000);
	n = said("cpuset");
	cr_expect_leq(n, 4, "%d lines about cpuset in ten ticks", n);
	cr_expect(faultenv_alive(fe), "kqosd died");
	for (int t = 0; t < 50; t++) {
		cr_assert_eq(faultenv_request(fe, "snapshot\n", 5000, &line), 0, "no answer");
		if (!strstr(line, "no snapshot yet"))
			break;
		free(line);
		line = NULL;
		live_sleep_ms(100);
	}
	cr_expect(line && strstr(line, "\"cgroups\""), "no snapshot");
	free(line);
	faultenv_knobs_read(fe, &after);
	for (unsigned int i = 0; i <= 2; i++)
		for (size_t f = 4; f < FAULTENV_NR_KNOBS; f++)
			cr_expect_str_eq(after.v[i][f], before.v[i][f], "cpuset written (%u %zu)",
					 i, f);
	cr_expect_eq(faultenv_stop(fe), 0);
	faultenv_knobs_read(fe, &after);
	cr_expect_not(faultenv_knobs_diff(fe, &after, &before, diff, sizeof(diff)),
		      "not restored: %s", diff);
}
