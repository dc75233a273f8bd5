// SPDX-License-Identifier: GPL-2.0
/*
 * Signals against the real kqosd: a SIGHUP storm over a config flipping between good and bad,
 * SIGTERM while many BE cgroups are being written, and SIGKILL at random points of 50 short
 * runs, each restart repairing or adopting from the journal. Every file ends byte-identical.
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

#include "daemon.h"
#include "faultenv.h"
#include "live.h"

static struct faultenv *fe;

static void teardown(void)
{
	faultenv__free(fe);
	fe = NULL;
}

static bool env(unsigned int nr_be)
{
	if (!live_require_root())
		return false;
	live_sweep_stale();
	cr_assert_eq(faultenv__new(nr_be, 0, &fe), 0, "fault env");
	cr_assert_eq(access(fe->kqosd, X_OK), 0, "%s not built", fe->kqosd);
	return true;
}

static unsigned int ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned int)(t.tv_sec * 1000 + t.tv_nsec / 1000000);
}

/* --- SIGHUP ---------------------------------------------------------------------------------- */

/* The bad configs, each with the field its error must name. */
enum bad { BAD_KEY, BAD_TYPE, BAD_RANGE, NR_BAD };
static const char *const bad_field[NR_BAD] = { "bogusKey", "interval", "beShares" };

static void write_bad(enum bad b)
{
	int err = 0;

	switch (b) {
	case BAD_KEY:
		err = faultenv_write_cfg(fe, "100ms", "", "", "\"bogusKey\": 1");
		break;
	case BAD_TYPE:
		err = faultenv_write_cfg(fe, "soon", "", "", "");
		break;
	default:
		err = faultenv_write_suppress(fe, "100ms", "weight", 1, "restore");
		break;
	}
	cr_assert_eq(err, 0);
}

/* Lines saying how a reload ended, good or bad. */
static int reloads(void)
{
	return daemon_log_count(fe->errlog, "config reloaded", NULL) +
	       daemon_log_count(fe->errlog, "reload failed", NULL);
}

static bool wait_reloads(int want)
{
	for (unsigned int t0 = ms_now(); ms_now() - t0 < 5000;) {
		if (reloads() >= want)
			return true;
		live_sleep_ms(1);
	}
	return false;
}

/* Error lines naming both the config file and @field. */
static int rejected(const char *field)
{
	return daemon_log_count(fe->errlog, fe->cfg, field);
}

Test(faults_signals, sighup_storm_keeps_the_last_good_config, .fini = teardown, .timeout = 60)
{
	int nr_bad[NR_BAD] = { 0 }, shares = 2, done;
	char want[16];

	if (!env(2))
		return;
	srand((unsigned int)getpid());
	cr_assert_eq(faultenv_write_suppress(fe, "100ms", "weight", shares, "restore"), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	cr_assert(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", "2", 5000), "no enforcement");

	/* 200 reloads one after another: each bad one rejected on its own */
	done = reloads();
	for (int k = 0; k < 200; k++) {
		if (rand() % 2) {
			enum bad b = (enum bad)(rand() % NR_BAD);

			write_bad(b);
			nr_bad[b]++;
		} else {
			shares = 3 + rand() % 5;
			cr_assert_eq(faultenv_write_suppress(fe, "100ms", "weight", shares,
							     "restore"),
				     0);
		}
		cr_assert_eq(kill(fe->pid, SIGHUP), 0, "kqosd gone at reload %d", k);
		cr_assert(wait_reloads(++done), "reload %d not answered", k);
	}
	for (int b = 0; b < NR_BAD; b++)
		cr_expect_eq(rejected(bad_field[b]), nr_bad[b],
			     "%d of %d bad configs (%s) rejected naming file and field",
			     rejected(bad_field[b]), nr_bad[b], bad_field[b]);
	snprintf(want, sizeof(want), "%d", shares);
	cr_expect(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", want, 3000),
		  "the last good config (beShares %d) is not in force", shares);

	/* 200 more as fast as they go, while the file flips: signals merge, none may hurt */
	for (int k = 0; k < 200; k++) {
		if (k % 2)
			write_bad((enum bad)(k % NR_BAD));
		else
			faultenv_write_suppress(fe, "100ms", "weight", 3 + k % 5, "restore");
		kill(fe->pid, SIGHUP);
	}
	cr_assert_eq(faultenv_write_suppress(fe, "100ms", "weight", 9, "restore"), 0);
	kill(fe->pid, SIGHUP);
	cr_expect(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", "9", 5000),
		  "the good config after the storm is not in force");
	write_bad(BAD_RANGE);
	kill(fe->pid, SIGHUP);
	live_sleep_ms(500);
	cr_expect(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", "9", 100),
		  "a bad config after the storm changed what is enforced");
	cr_expect(faultenv_alive(fe), "kqosd died in the storm");
	cr_expect_eq(faultenv_stop(fe), 0);
}

/* --- SIGTERM --------------------------------------------------------------------------------- */

#define BURST_BE 40

/*
 * 40 BE cgroups, three knobs each to write on the first tick: SIGTERM right as the first of
 * them changes (or a few ms later), so that it falls into the burst, then every file as before.
 */
Test(faults_signals, sigterm_during_a_write_burst_restores_everything, .fini = teardown,
     .timeout = 60)
{
	static const char *const policies[] = { "weight", "idle", "weight" };
	static const unsigned int delay_us[] = { 0, 2000, 500 };
	struct faultenv_knobs *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
	char diff[256], path[PATH_MAX + 16];
	int st;

	cr_assert(before && after);
	if (!env(BURST_BE))
		goto out;
	faultenv_knobs_read(fe, before);
	for (size_t r = 0; r < sizeof(policies) / sizeof(policies[0]); r++) {
		const char *file = strcmp(policies[r], "idle") ? "cpu.shares" : "cpu.idle";
		const char *want = strcmp(policies[r], "idle") ? "2" : "1";
		unsigned int t0 = ms_now();
		bool hit = false;

		cr_assert_eq(faultenv_write_suppress(fe, "1s", policies[r], 2, "restore"), 0);
		cr_assert_gt(faultenv_start(fe, 0), 0);
		/* the highest be first: the actuator writes children bottom-up, by name */
		while (!hit && ms_now() - t0 < 15000 && faultenv_alive(fe)) {
			char buf[64];

			for (unsigned int i = 1; i <= BURST_BE && !hit; i++) {
				faultenv_read(fe, "cpu", i, file, buf, sizeof(buf));
				hit = !strcmp(buf, want);
			}
		}
		cr_assert(hit, "run %zu: no write seen", r);
		usleep(delay_us[r]);
		st = faultenv_stop(fe);
		cr_expect_eq(st, 0, "run %zu: exit status %d", r, st);
		faultenv_knobs_read(fe, after);
		cr_expect_not(faultenv_knobs_diff(fe, after, before, diff, sizeof(diff)),
			      "run %zu (%s): not restored: %s", r, policies[r], diff);
		snprintf(path, sizeof(path), "%s/journal", fe->state);
		cr_expect_neq(access(path, F_OK), 0, "run %zu: journal left behind", r);
	}
out:
	free(before);
	free(after);
}

/* --- SIGKILL --------------------------------------------------------------------------------- */

#define KILL_BE	    6
#define KILL_CYCLES 50

static const char *const kill_policies[] = { "weight", "idle" };
static const char *const kill_recovery[] = { "restore", "adopt" };

/*
 * 50 runs, each killed at a random point 0-300 ms after its pod source is up: while it restores
 * or adopts the journal of the run before (right after that line), in the first tick's writes,
 * or in the ticks after (every 50 ms). The BPF load before that point is the same every time
 * and touches nothing, so the wait starts after it. Each run asks for something else (policy,
 * shares, recovery), so each has writes to be killed in. After the last, a run that is stopped
 * with SIGTERM: every file of every test cgroup as at the start.
 */
Test(faults_signals, sigkill_at_random_points_then_restart, .fini = teardown, .timeout = 120)
{
	struct faultenv_knobs *before = malloc(sizeof(*before)), *after = malloc(sizeof(*after));
	char diff[256], path[PATH_MAX + 16];
	int st, dirty = 0;

	cr_assert(before && after);
	if (!env(KILL_BE))
		goto out;
	srand((unsigned int)getpid());
	faultenv_knobs_read(fe, before);
	for (int c = 0; c < KILL_CYCLES; c++) {
		cr_assert_eq(faultenv_write_suppress(fe, "50ms", kill_policies[rand() % 2],
						     2 + rand() % 50, kill_recovery[rand() % 2]),
			     0);
		cr_assert_gt(faultenv_start(fe, 0), 0);
		cr_assert_geq(daemon_log_wait(fe->errlog, "pod source", NULL, 20000), 1,
			      "cycle %d: kqosd did not get going", c);
		live_sleep_ms((unsigned int)(rand() % 301));
		cr_assert(faultenv_alive(fe), "cycle %d: kqosd exited before its kill", c);
		faultenv_kill(fe);
		snprintf(path, sizeof(path), "%s/journal", fe->state);
		dirty += !access(path, F_OK);
	}
	/* most kills must leave something to repair, or the test tests nothing */
	cr_log_info("%d of %d kills left a journal for the next start", dirty, KILL_CYCLES);
	cr_expect_geq(dirty, KILL_CYCLES / 5, "only %d kills left a journal", dirty);
	/* the last start repairs from the journal; its stop restores what it did itself */
	cr_assert_eq(faultenv_write_suppress(fe, "50ms", "weight", 2, "restore"), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start after the kills");
	live_sleep_ms(300);
	st = faultenv_stop(fe);
	cr_expect_eq(st, 0, "exit status %d", st);
	faultenv_knobs_read(fe, after);
	cr_expect_not(faultenv_knobs_diff(fe, after, before, diff, sizeof(diff)),
		      "after %d kills: %s", KILL_CYCLES, diff);
	snprintf(path, sizeof(path), "%s/journal", fe->state);
	cr_expect_neq(access(path, F_OK), 0, "journal left behind");
out:
	free(before);
	free(after);
}
