// SPDX-License-Identifier: GPL-2.0
/*
 * kqosd end to end on real cgroups, with a 10 s tick so that only the event path can act in
 * time: an LS group of periodic tasks next to a BE group that starts burning. The guard must
 * push BE back within 100 ms of the first breach, step back after the quiet window, and leave
 * every file as it found it on SIGTERM. A new BE group matching the glob gets the static
 * policy at once, not at the next tick.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "live.h"

static const char *const ctrls[] = { "cpu", "cpuacct", "cpuset" };
static const char *const tags[] = { "ls", "be", "be2" };
static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], state[DAEMON_TMP_LEN];
static char *state_dir;
static pid_t daemon_pid = -1, kids[8];
static int nkids;
static bool made;

static void setup(void)
{
	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	state_dir = daemon_files_make(cfg, errlog, state);
	for (size_t t = 0; t < 2; t++)
		live_cg_create_all(ctrls, 3, tags[t]);
	made = true;
}

static void teardown(void)
{
	daemon_kill(&daemon_pid);
	for (int i = 0; i < nkids; i++)
		live_kill(kids[i]);
	nkids = 0;
	for (size_t t = 0; made && t < 3; t++)
		live_cg_destroy_all(ctrls, 3, tags[t]);
	made = false;
	daemon_files_remove(cfg, errlog, &state_dir);
}

TestSuite(guard_kqosd, .init = setup, .fini = teardown, .timeout = 60);

static void spawn_in(const char *tag, int n, int duty)
{
	for (int k = 0; k < n; k++)
		kids[nkids++] = live_spawn_in(ctrls, 3, tag, duty);
}

static void write_cfg(const char *strategies, const char *node_slo)
{
	FILE *f = fopen(cfg, "w");
	int pid = (int)getpid();

	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"10s\", \"logLevel\": \"debug\", \"stateDir\": \"%s\",\n"
		" \"export\": {\"socket\": \"\"},\n"
		" \"pods\": {\"source\": \"static\", \"groups\": [\n"
		"   {\"name\": \"ls\", \"cgroup\": \"/kqos-test-%d-ls\", \"qosClass\": \"LS\",\n"
		"    \"waitTarget\": \"1ms\"},\n"
		"   {\"name\": \"be\", \"cgroup\": \"/kqos-test-%d-be*\", \"qosClass\": \"BE\"}]},\n"
		" \"nodeSLO\": %s, \"strategies\": %s}\n",
		state_dir, pid, pid, node_slo, strategies);
	fclose(f);
}

#define NFILES 4
static const struct {
	const char *ctrl, *file;
} files[NFILES] = {
	{ "cpu", "cpu.idle" },
	{ "cpu", "cpu.shares" },
	{ "cpu", "cpu.cfs_quota_us" },
	{ "cpuset", "cpuset.cpus" },
};

static void read_all(char out[NFILES][64])
{
	for (size_t i = 0; i < NFILES; i++)
		live_file_read(files[i].ctrl, "be", files[i].file, out[i], 64);
}

/* The slowest "reacted" line's kernel event -> write done, in us; -1 without one. */
static long slowest_reaction_us(void)
{
	char line[2048], *p;
	long worst = -1;
	FILE *f;

	/* the line follows the write it reports */
	for (int i = 0; i < 100 && daemon_log_count(errlog, "msg=\"reacted\"", NULL) < 1; i++)
		live_sleep_ms(10);
	f = fopen(errlog, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "msg=\"reacted\"") && (p = strstr(line, "event_to_write_us="))) {
			long us = strtol(p + strlen("event_to_write_us="), NULL, 10);

			worst = us > worst ? us : worst;
		}
	fclose(f);
	return worst;
}

Test(guard_kqosd, tightens_between_ticks_relaxes_after_quiet_and_restores)
{
	char before[NFILES][64], after[NFILES][64];
	unsigned int ms;
	long us;

	if (!live_require_root())
		return;
	read_all(before);
	spawn_in("ls", 2, 30); /* periodic LS work: woken every 10 ms */
	write_cfg("{\"latencyGuard\": {\"enable\": true, \"quietWindow\": \"1s\"}}", "{}");
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
	live_sleep_ms(500); /* the first tick (100 ms) hands the kernel its watches */
	cr_assert_eq(daemon_log_count(errlog, "latency guard", "escalate"), 0, "nothing yet");
	spawn_in("be", 3, 100); /* BE burns both CPUs and more */
	cr_assert(live_file_wait("cpu", "be", "cpu.idle", "1", 3000, &ms),
		  "BE not pushed back within 3 s of its start (the tick is 10 s away)");
	us = slowest_reaction_us();
	cr_log_info("BE cpu.idle=1 %u ms after BE started; event -> write %ld us", ms, us);
	cr_assert_geq(us, 0, "the write came from the event path");
	cr_assert_lt(us, 100000, "event -> write took %ld us", us);
	for (int i = 0; i < nkids; i++)
		if (i >= 2)
			live_kill(kids[i]);
	nkids = 2;
	cr_assert(live_file_wait("cpu", "be", "cpu.idle", "0", 5000, &ms),
		  "the guard did not step back after BE went quiet");
	cr_assert_geq(daemon_log_count(errlog, "latency guard", "move=relax"), 1);
	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	read_all(after);
	for (size_t i = 0; i < NFILES; i++)
		cr_assert_str_eq(after[i], before[i], "%s", files[i].file);
}

Test(guard_kqosd, a_new_group_matching_the_glob_is_enforced_without_a_tick)
{
	unsigned int ms;

	if (!live_require_root())
		return;
	write_cfg("{\"cpuSuppress\": {\"policy\": \"weight\"}}",
		  "{\"resourceUsedThresholdWithBE\": {\"enable\": true}}");
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
	cr_assert(live_file_wait("cpu", "be", "cpu.shares", "2", 2000, NULL),
		  "the first tick comes 100 ms after start, not an interval later");
	cr_assert_eq(live_cg_create("cpu", "be2"), 0);
	cr_assert(live_file_wait("cpu", "be2", "cpu.shares", "2", 1000, &ms),
		  "a new group waited for the 10 s tick");
	cr_log_info("new group's shares=2 %u ms after mkdir", ms);
	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	cr_assert(live_file_wait("cpu", "be2", "cpu.shares", "1024", 0, NULL), "restored on stop");
}
