// SPDX-License-Identifier: GPL-2.0
/*
 * End to end: kqosd with bare-metal LS and BE groups holding real busy processes, cpu_suppress
 * with the cfsQuota policy and a low threshold. The BE quota drops to the 2000 us floor while
 * LS is busy, grows back (10 % of the node per round) once LS is gone, and SIGTERM restores
 * every file byte for byte.
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
#include "live.h"

static const char *const ctrls[] = { "cpu", "cpuacct", "cpuset" };
static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], state[DAEMON_TMP_LEN];
static char *state_dir;
static pid_t daemon_pid = -1, ls_pid = -1, be_pid = -1;
static bool made;

static void setup(void)
{
	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	state_dir = daemon_files_make(cfg, errlog, state);
	made = true; /* teardown removes what of them exists */
	live_cg_create_all(ctrls, 3, "ls");
	live_cg_create_all(ctrls, 3, "be");
}

static void teardown(void)
{
	daemon_kill(&daemon_pid);
	live_kill(ls_pid);
	live_kill(be_pid);
	ls_pid = be_pid = -1;
	for (size_t i = 0; made && i < 2; i++)
		live_cg_destroy_all(ctrls, 3, i ? "be" : "ls");
	made = false;
	daemon_files_remove(cfg, errlog, &state_dir);
}

static pid_t spawn_in(const char *tag)
{
	return live_spawn_in(ctrls, 3, tag, 100);
}

static void write_cfg(void)
{
	FILE *f = fopen(cfg, "w");
	int pid = (int)getpid();

	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"500ms\", \"stateDir\": \"%s\", \"export\": {\"socket\": \"\"},\n"
		" \"pods\": {\"source\": \"static\", \"groups\": [\n"
		"   {\"name\": \"ls\", \"cgroup\": \"kqos-test-%d-ls\", \"qosClass\": \"LS\"},\n"
		"   {\"name\": \"be\", \"cgroup\": \"kqos-test-%d-be\", \"qosClass\": \"BE\"}]},\n"
		" \"nodeSLO\": {\"resourceUsedThresholdWithBE\": {\"enable\": true,\n"
		"   \"cpuSuppressThresholdPercent\": 50, \"cpuSuppressPolicy\": \"cfsQuota\"}}}\n",
		state_dir, pid, pid);
	fclose(f);
}

static long be_quota(void)
{
	char buf[64];

	live_file_read("cpu", "be", "cpu.cfs_quota_us", buf, sizeof(buf));
	return strtol(buf, NULL, 10);
}

/* Poll the BE quota until @ok(quota) or @ms pass; returns the last value. */
static long wait_quota(bool (*ok)(long), int ms)
{
	long q = be_quota();

	for (int t = 0; t < ms && !ok(q); t += 100) {
		live_sleep_ms(100);
		q = be_quota();
	}
	return q;
}

static bool at_floor(long q)
{
	return q == 2000;
}

static bool grown(long q)
{
	return q >= 42000; /* two growth rounds above the floor */
}

#define NFILES 4
static const struct {
	const char *ctrl, *file;
} files[NFILES] = {
	{ "cpu", "cpu.cfs_quota_us" },
	{ "cpu", "cpu.cfs_period_us" },
	{ "cpu", "cpu.shares" },
	{ "cpuset", "cpuset.cpus" },
};

static void read_all(char out[2][NFILES][64])
{
	for (size_t i = 0; i < NFILES; i++) {
		live_file_read(files[i].ctrl, "ls", files[i].file, out[0][i], 64);
		live_file_read(files[i].ctrl, "be", files[i].file, out[1][i], 64);
	}
}

Test(enforce_kqosd, be_quota_follows_ls_load_and_sigterm_restores, .init = setup, .fini = teardown,
     .timeout = 90)
{
	char before[2][NFILES][64], after[2][NFILES][64], path[PATH_MAX];
	int status;
	long q;

	if (!live_require_root())
		return;
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	cr_assert(made);
	read_all(before);
	ls_pid = spawn_in("ls");
	be_pid = spawn_in("be");
	write_cfg();
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);

	/* LS busy on one of two CPUs: 1000m budget - LS usage leaves nothing -> the floor */
	q = wait_quota(at_floor, 20000);
	cr_assert_eq(q, 2000, "BE quota not suppressed while LS is busy (%ld)", q);

	/* LS gone: the budget frees up and the quota ramps up by 20000 us per round */
	live_kill(ls_pid);
	ls_pid = -1;
	q = wait_quota(grown, 20000);
	cr_assert_geq(q, 42000, "BE quota did not grow back when LS went idle (%ld)", q);
	cr_assert_lt(q, 200000, "quota must stay a limit under a 50 %% threshold");

	kill(daemon_pid, SIGTERM);
	cr_assert_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
	daemon_pid = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "kqosd exit status %d", status);
	read_all(after);
	for (size_t g = 0; g < 2; g++)
		for (size_t i = 0; i < NFILES; i++)
			cr_assert_str_eq(after[g][i], before[g][i], "%s %s not restored",
					 g ? "be" : "ls", files[i].file);
	snprintf(path, sizeof(path), "%s/journal", state_dir);
	cr_assert_neq(access(path, F_OK), 0, "journal left behind");
}
