// SPDX-License-Identifier: GPL-2.0
/*
 * kqosd end to end on the FUSE resctrl fake (no RDT here): kqosd, unmodified, creates kqos-BE
 * and kqos-LS for the enabled classes with koordinator's masks, places a real process of a
 * real v1 BE cgroup in kqos-BE, and SIGTERM leaves the tree as it was before it started. After
 * a SIGKILL, a restart with resctrl control off removes what the killed run left.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "fakefs.h"
#include "live.h"

static const char *const ctrls[] = { "cpu", "cpuacct" };
static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], state[DAEMON_TMP_LEN], mnt[64];
static char *state_dir, *mnt_dir;
static pid_t daemon_pid = -1, be_pid = -1, fs_pid = -1;
static bool made;

static void setup(void)
{
	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	state_dir = daemon_files_make(cfg, errlog, state);
	mnt_dir = daemon_tmp_dir(mnt, sizeof(mnt), "kqos-resctrl-fs");
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(live_cg_create(ctrls[i], "rdtfs"), 0);
	made = true;
}

static void teardown(void)
{
	daemon_kill(&daemon_pid);
	live_kill(be_pid);
	be_pid = -1;
	for (size_t i = 0; made && i < 2; i++)
		live_cg_destroy(ctrls[i], "rdtfs");
	made = false;
	if (fs_pid > 0)
		fakefs_stop(fs_pid, mnt_dir);
	fs_pid = -1;
	if (mnt_dir)
		rmdir(mnt_dir);
	daemon_files_remove(cfg, errlog, &state_dir);
}

static void mount_fake(void)
{
	char fakefs[512];

	fakefs_path(fakefs, sizeof(fakefs));
	cr_assert_eq(access(fakefs, X_OK), 0, "%s not built (libfuse3 missing?)", fakefs);
	fs_pid = fakefs_start("skx2s", mnt_dir, NULL);
	cr_assert_gt(fs_pid, 0, "fake resctrl not mounted");
}

static void write_cfg(bool rdt_on)
{
	FILE *f = fopen(cfg, "w");

	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"1s\", \"stateDir\": \"%s\", \"export\": {\"socket\": \"\"},\n"
		" \"resctrl\": {\"root\": \"%s\"},\n"
		" \"pods\": {\"source\": \"static\", \"groups\": [\n"
		"   {\"name\": \"be\", \"cgroup\": \"kqos-test-%d-rdtfs\", \"qosClass\": \"BE\"}]},\n"
		" \"nodeSLO\": {\"resourceQOSStrategy\": {"
		"\"beClass\": {\"resctrlQOS\": {\"enable\": %s}},"
		"\"lsClass\": {\"resctrlQOS\": {\"enable\": %s, \"catRangeEndPercent\": 50,"
		" \"mbaPercent\": 60}}}}}\n",
		state_dir, mnt_dir, (int)getpid(), rdt_on ? "true" : "false",
		rdt_on ? "true" : "false");
	fclose(f);
}

static void slurp(const char *rel, char *buf, size_t n)
{
	fakefs_read(mnt_dir, rel, buf, n);
}

static bool exists(const char *rel)
{
	return fakefs_exists(mnt_dir, rel);
}

static bool has_pid(const char *rel, pid_t pid)
{
	return fakefs_has_pid(mnt_dir, rel, pid);
}

static bool wait_for(bool (*ok)(void), int ms)
{
	return live_wait_for(ok, ms, 50);
}

static bool be_placed(void)
{
	return exists("kqos-BE") && has_pid("kqos-BE/tasks", be_pid);
}

static bool groups_gone(void)
{
	return !exists("kqos-BE") && !exists("kqos-LS");
}

Test(rdt_kqosd, groups_schemata_placement_and_restore_on_fuse, .init = setup, .fini = teardown,
     .timeout = 90)
{
	char root_before[512], root_after[512], buf[512];

	if (!live_require_root())
		return;
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	mount_fake();
	slurp("schemata", root_before, sizeof(root_before));
	be_pid = live_spawn(0);
	cr_assert_gt(be_pid, 0);
	cr_assert_eq(live_cg_attach("cpu", "rdtfs", be_pid), 0);
	cr_assert_eq(live_cg_attach("cpuacct", "rdtfs", be_pid), 0);
	live_go(be_pid);
	write_cfg(true);
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);

	cr_assert(wait_for(be_placed, 15000), "BE process not in kqos-BE/tasks");
	slurp("kqos-BE/schemata", buf, sizeof(buf));
	cr_assert(strstr(buf, "L3:0=00f;1=00f") || strstr(buf, "L3:0=f;1=f"), "BE: %s", buf);
	slurp("kqos-LS/schemata", buf, sizeof(buf));
	cr_assert(strstr(buf, "L3:0=03f;1=03f") || strstr(buf, "L3:0=3f;1=3f"), "LS: %s", buf);
	cr_assert(strstr(buf, "MB:0=60;1=60") || strstr(buf, "MB:0= 60;1= 60"), "LS: %s", buf);
	cr_assert_not(exists("kqos-LSR"), "LSR is not enabled");

	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	cr_assert(groups_gone(), "kqos groups left after SIGTERM");
	cr_assert(has_pid("tasks", be_pid), "BE process not back in the root group");
	slurp("schemata", root_after, sizeof(root_after));
	cr_assert_str_eq(root_after, root_before);

	/* SIGKILL leaves the groups; a restart with resctrl control off removes them */
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert(wait_for(be_placed, 15000), "not placed after the restart");
	kill(daemon_pid, SIGKILL);
	waitpid(daemon_pid, NULL, 0);
	cr_assert(exists("kqos-BE"));
	write_cfg(false);
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert(wait_for(groups_gone, 10000), "a killed run's groups not removed at restart");
	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	cr_assert(has_pid("tasks", be_pid));
	slurp("schemata", root_after, sizeof(root_after));
	cr_assert_str_eq(root_after, root_before);
}
