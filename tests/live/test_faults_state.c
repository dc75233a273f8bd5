// SPDX-License-Identifier: GPL-2.0
/*
 * Faults of the state dir (the journal) against the real kqosd: full, read-only, a corrupted
 * and a truncated journal. kqosd never writes a knob whose original it could not journal, says
 * so in one line naming the file, keeps serving snapshots, and enforces once the journal can be
 * written again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "faultenv.h"
#include "live.h"

#define NR_BE 3

static struct faultenv *fe;

static void setup(void)
{
	if (!live_require_root())
		return;
	live_sweep_stale();
	cr_assert_eq(faultenv__new(NR_BE, 0, &fe), 0, "fault env");
	cr_assert_eq(access(fe->kqosd, X_OK), 0, "%s not built", fe->kqosd);
}

static void teardown(void)
{
	faultenv__free(fe);
	fe = NULL;
}

/* Fill the state dir's tmpfs to the last byte. */
static void fill_state(void)
{
	char path[PATH_MAX + 8], block[512] = { 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/fill", fe->state);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	while (write(fd, block, sizeof(block)) > 0)
		;
	/* a tmpfs page may hold what a block did not: fill the tail byte by byte */
	while (write(fd, block, 1) > 0)
		;
	close(fd);
}

static void unfill_state(void)
{
	char path[PATH_MAX + 8];

	snprintf(path, sizeof(path), "%s/fill", fe->state);
	cr_assert_eq(unlink(path), 0);
}

/* The socket answers with a snapshot (after the first tick: polled until then). */
static void expect_snapshot(void)
{
	char *line = NULL;

	for (int t = 0; t < 50; t++) {
		cr_assert_eq(faultenv_request(fe, "snapshot\n", 5000, &line), 0,
			     "socket did not answer");
		if (!strstr(line, "no snapshot yet"))
			break;
		free(line);
		line = NULL;
		live_sleep_ms(100);
	}
	cr_assert_not_null(line, "no snapshot in 5 s");
	cr_expect(strstr(line, "\"cgroups\"") && strstr(line, "\"agent\""),
		  "not a snapshot: %.200s", line);
	free(line);
}

/*
 * With the journal unwritable, several ticks pass and nothing changes; one error line names
 * the journal; then @repair makes it writable and kqosd enforces; SIGTERM restores everything.
 */
static void unwritable_journal(void (*repair)(void))
{
	struct faultenv_knobs before, now;
	char diff[256], journal[PATH_MAX + 16];
	int n;

	faultenv_knobs_read(fe, &before);
	cr_assert_eq(faultenv_write_suppress(fe, "100ms", "weight", 2, "restore"), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	snprintf(journal, sizeof(journal), "%s/journal", fe->state);
	cr_assert_geq(daemon_log_wait(fe->errlog, "level=error", journal, 5000), 1,
		      "no error line names %s", journal);
	live_sleep_ms(1000); /* ten ticks that each want to write */
	faultenv_knobs_read(fe, &now);
	cr_expect_not(faultenv_knobs_diff(fe, &now, &before, diff, sizeof(diff)),
		      "written without a journal: %s", diff);
	n = daemon_log_count(fe->errlog, "journal", NULL);
	cr_expect_eq(n, 1, "%d journal lines in ten ticks, one was wanted", n);
	cr_expect(faultenv_alive(fe), "kqosd died");
	expect_snapshot();

	repair();
	cr_expect(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", "2", 5000),
		  "no enforcement once the journal is writable");
	cr_expect_eq(faultenv_stop(fe), 0);
	faultenv_knobs_read(fe, &now);
	cr_expect_not(faultenv_knobs_diff(fe, &now, &before, diff, sizeof(diff)),
		      "not restored: %s", diff);
}

static void repair_full(void)
{
	unfill_state();
}

static void repair_ro(void)
{
	cr_assert_eq(faultenv_remount_state(fe, 0, NULL), 0);
}

/* fe->state is <mount>/sub here */
static void repair_ro_parent(void)
{
	char sub[PATH_MAX];

	snprintf(sub, sizeof(sub), "%s", fe->state);
	*strrchr(fe->state, '/') = '\0';
	repair_ro();
	snprintf(fe->state, sizeof(fe->state), "%s", sub);
}

Test(faults_state, full_state_dir_writes_nothing, .init = setup, .fini = teardown, .timeout = 30)
{
	if (!fe)
		return;
	cr_assert_eq(faultenv_mount_state(fe, "size=8k"), 0);
	fill_state();
	unwritable_journal(repair_full);
}

Test(faults_state, read_only_state_dir_writes_nothing, .init = setup, .fini = teardown,
     .timeout = 30)
{
	if (!fe)
		return;
	cr_assert_eq(faultenv_mount_state(fe, "ro"), 0);
	unwritable_journal(repair_ro);
}

/* stateDir under a read-only mount, not there yet: kqosd runs, and makes it once it can. */
Test(faults_state, state_dir_that_cannot_be_made_writes_nothing, .init = setup, .fini = teardown,
     .timeout = 30)
{
	if (!fe)
		return;
	cr_assert_eq(faultenv_mount_state(fe, "ro"), 0);
	cr_assert_lt(strlen(fe->state) + 4, sizeof(fe->state));
	strcat(fe->state, "/sub");
	unwritable_journal(repair_ro_parent);
}

static void write_journal(const char *text, size_t len)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/journal", fe->state);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static bool same_bytes(const char *path, const char *want, size_t len)
{
	char buf[8192];
	ssize_t n = -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf));
		close(fd);
	}
	return n == (ssize_t)len && !memcmp(buf, want, len);
}

/*
 * A crashed run left be1 and be2 at shares 2; the journal holds be1's original, then garbage
 * (binary, a wrong knob, an unsafe path, a line too long), then be2's. Without enforcement,
 * the start restores both good lines, names the bad ones, and leaves be3 alone.
 */
Test(faults_state, corrupted_journal_restores_the_good_lines, .init = setup, .fini = teardown,
     .timeout = 30)
{
	static const char garbage[] = "\x01\x02\xff\xfe garbage\n"
				      "nosuchknob\t/be1\ts 5\n"
				      "shares\t/../etc\ts 5\n"
				      "shares\t/be3\n";
	char text[8192], path[PATH_MAX + 16], buf[64];
	int n, len;

	if (!fe)
		return;
	n = snprintf(text, sizeof(text), "# kqos journal v1\nshares\t/be1\ts 701\n%s", garbage);
	memset(text + n, 'x', 3000); /* one line longer than any the journal writes */
	n += 3000;
	n += snprintf(text + n, sizeof(text) - (size_t)n, "\nshares\t/be2\ts 702\n");
	len = n;
	write_journal(text, (size_t)n);
	cr_assert_eq(faultenv_write(fe, "cpu", 1, "cpu.shares", "2"), 0);
	cr_assert_eq(faultenv_write(fe, "cpu", 2, "cpu.shares", "2"), 0);
	cr_assert_eq(faultenv_write_cfg(fe, "100ms", "", "", ""), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	snprintf(path, sizeof(path), "%s/journal", fe->state);
	n = daemon_log_count(fe->errlog, "line malformed", path);
	cr_expect_eq(n, 5, "%d malformed lines named, 5 wanted", n);
	/* what the bad lines held is not lost with the next save: the file stays as found */
	snprintf(path, sizeof(path), "%s/journal.bad", fe->state);
	cr_expect(same_bytes(path, text, (size_t)len), "journal.bad is not the journal as found");
	faultenv_read(fe, "cpu", 1, "cpu.shares", buf, sizeof(buf));
	cr_expect_str_eq(buf, "701", "be1 not restored");
	faultenv_read(fe, "cpu", 2, "cpu.shares", buf, sizeof(buf));
	cr_expect_str_eq(buf, "702", "be2 (after the garbage) not restored");
	faultenv_read(fe, "cpu", 3, "cpu.shares", buf, sizeof(buf));
	cr_expect_str_eq(buf, "703", "be3 touched");
	cr_expect(faultenv_alive(fe));
	expect_snapshot();
	cr_expect_eq(faultenv_stop(fe), 0);
}

/*
 * A journal cut short in its last line ("s 70" of "s 702"): that line is torn, not a value.
 * kqosd restores be1 from the whole line and leaves be2 as it is: 70 would be a value nobody
 * ever had.
 */
Test(faults_state, truncated_journal_never_writes_a_torn_value, .init = setup, .fini = teardown,
     .timeout = 30)
{
	static const char text[] = "# kqos journal v1\nshares\t/be1\ts 701\nshares\t/be2\ts 702\n";
	char path[PATH_MAX + 16], buf[64];

	if (!fe)
		return;
	write_journal(text, sizeof(text) - 3); /* "2\n" and the NUL cut */
	cr_assert_eq(faultenv_write(fe, "cpu", 1, "cpu.shares", "2"), 0);
	cr_assert_eq(faultenv_write(fe, "cpu", 2, "cpu.shares", "2"), 0);
	cr_assert_eq(faultenv_write_cfg(fe, "100ms", "", "", ""), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	faultenv_read(fe, "cpu", 1, "cpu.shares", buf, sizeof(buf));
	cr_expect_str_eq(buf, "701", "be1 not restored");
	faultenv_read(fe, "cpu", 2, "cpu.shares", buf, sizeof(buf));
	cr_expect_str_eq(buf, "2", "be2 got a torn value");
	snprintf(path, sizeof(path), "%s/journal", fe->state);
	cr_expect_eq(daemon_log_count(fe->errlog, "line malformed", path), 1,
		     "the torn line is not named");
	cr_expect(faultenv_alive(fe));
	expect_snapshot();
	cr_expect_eq(faultenv_stop(fe), 0);
}
