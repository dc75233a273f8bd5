// SPDX-License-Identifier: GPL-2.0
/*
 * End to end: kqosd with bare-metal LS and BE groups of real processes and a fake meminfo
 * (procRoot). BEMemoryEvict on: below the threshold nothing happens; above it the BE group
 * is killed (evictAction kill) or frozen and thawed once memory is back under it (freeze).
 * The LS group is never touched.
 */
#include <errno.h>
#include <fcntl.h>
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
#include "https_server.h"
#include "live.h"

static const char *const ctrls[] = { "cpu", "cpuacct", "freezer", "memory" };
#define NCTRLS 4

static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], state[DAEMON_TMP_LEN],
	proc[64];
static char *state_dir, *proc_dir;
static pid_t daemon_pid = -1, ls_pid = -1, be_pid[2] = { -1, -1 };
static bool made;

static void setup(void)
{
	char path[PATH_MAX];

	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	state_dir = daemon_files_make(cfg, errlog, state);
	proc_dir = daemon_tmp_dir(proc, sizeof(proc), "kqos-proc");
	cr_assert_not_null(proc_dir);
	/* the agent finds the v1 cpu hierarchy id there */
	snprintf(path, sizeof(path), "%s/cgroups", proc_dir);
	cr_assert_eq(symlink("/proc/cgroups", path), 0);
	live_cg_create_all(ctrls, NCTRLS, "ls");
	live_cg_create_all(ctrls, NCTRLS, "be");
	made = true;
}

static void teardown(void)
{
	daemon_kill(&daemon_pid);
	/* a frozen task cannot die: thaw first */
	if (made)
		live_file_write("freezer", "be", "freezer.state", "THAWED");
	live_kill(ls_pid);
	live_kill(be_pid[0]);
	live_kill(be_pid[1]);
	ls_pid = be_pid[0] = be_pid[1] = -1;
	for (size_t i = 0; made && i < 2; i++)
		live_cg_destroy_all(ctrls, NCTRLS, i ? "be" : "ls");
	made = false;
	if (state_dir)
		daemon_rm_in(state_dir, "evictions.log");
	if (proc_dir) {
		daemon_rm_in(proc_dir, "cgroups");
		daemon_rm_in(proc_dir, "meminfo");
		rmdir(proc_dir);
		proc_dir = NULL;
	}
	daemon_files_remove(cfg, errlog, &state_dir);
}

static pid_t spawn_in(const char *tag)
{
	return live_spawn_in(ctrls, NCTRLS, tag, 0);
}

/* MemTotal 10 GB; @used_pct of it in use. Atomic: the agent never reads half a file. */
static void set_meminfo(int used_pct)
{
	char tmp[PATH_MAX], path[PATH_MAX];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s/meminfo.tmp", proc_dir);
	snprintf(path, sizeof(path), "%s/meminfo", proc_dir);
	f = fopen(tmp, "w");
	cr_assert_not_null(f);
	fprintf(f,
		"MemTotal:       10000000 kB\nMemFree:         1000000 kB\n"
		"MemAvailable:   %8d kB\n",
		(100 - used_pct) * 100000);
	fclose(f);
	cr_assert_eq(rename(tmp, path), 0);
}

static void write_cfg(const char *action)
{
	FILE *f = fopen(cfg, "w");
	int pid = (int)getpid();

	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"500ms\", \"stateDir\": \"%s\", \"procRoot\": \"%s\",\n"
		" \"export\": {\"socket\": \"\"}, \"eviction\": {\"killGrace\": \"1s\"},\n"
		" \"pods\": {\"source\": \"static\", \"groups\": [\n"
		"   {\"name\": \"ls\", \"cgroup\": \"kqos-test-%d-ls\", \"qosClass\": \"LS\",\n"
		"    \"evictAction\": \"%s\"},\n"
		"   {\"name\": \"be\", \"cgroup\": \"kqos-test-%d-be\", \"qosClass\": \"BE\",\n"
		"    \"evictAction\": \"%s\"}]},\n"
		" \"nodeSLO\": {\"resourceUsedThresholdWithBE\": {\"enable\": true,\n"
		"   \"memoryEvictThresholdPercent\": 70}},\n"
		" \"strategies\": {\"eviction\": {\"features\": [\"BEMemoryEvict\"]}}}\n",
		state_dir, proc_dir, pid, action, pid, action);
	fclose(f);
}

/* Whether our child @pid has exited (reaped here). */
static bool exited(pid_t pid)
{
	return waitpid(pid, NULL, WNOHANG) == pid;
}

static bool wait_exit(pid_t pid, int ms)
{
	for (int t = 0; t < ms; t += 100) {
		if (exited(pid))
			return true;
		live_sleep_ms(100);
	}
	return exited(pid);
}

static void start_all(const char *action)
{
	if (!live_require_root())
		cr_skip_test("root and BTF needed");
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	cr_assert(made);
	ls_pid = spawn_in("ls");
	be_pid[0] = spawn_in("be");
	be_pid[1] = spawn_in("be");
	set_meminfo(50);
	write_cfg(action);
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
	/* 50 % for a few ticks: below 70 %, nobody is touched */
	live_sleep_ms(2500);
	cr_assert_eq(daemon_log_count(errlog, "kqosd started", NULL), 1, "kqosd did not start");
	cr_assert_not(exited(be_pid[0]) || exited(be_pid[1]), "BE killed below the threshold");
	cr_assert_eq(daemon_log_count(errlog, "msg=\"eviction\"", NULL), 0);
}

static void stop_daemon(void)
{
	cr_assert_eq(daemon_stop(daemon_pid), 0, "kqosd exit status");
	daemon_pid = -1;
}

Test(evict_kqosd, be_group_killed_above_the_memory_threshold_ls_untouched, .init = setup,
     .fini = teardown, .timeout = 60)
{
	start_all("kill");
	set_meminfo(80);
	/* the next tick sends SIGTERM to both BE tasks */
	cr_assert(wait_exit(be_pid[0], 5000), "BE task 1 not killed");
	be_pid[0] = -1;
	cr_assert(wait_exit(be_pid[1], 2000), "BE task 2 not killed");
	be_pid[1] = -1;
	cr_expect_geq(daemon_log_wait(errlog, "strategy=BEMemoryEvict action=kill result=ok",
				      "pod=bare-metal/be", 2000),
		      1);
	/* the LS group keeps running and is never a victim */
	live_sleep_ms(1500);
	cr_assert_not(exited(ls_pid), "LS killed");
	cr_expect_eq(daemon_log_count(errlog, "msg=\"eviction\"", "pod=bare-metal/ls"), 0);
	stop_daemon();
}

static void freezer_state(const char *tag, char *buf, size_t n)
{
	live_file_read("freezer", tag, "freezer.state", buf, n);
	buf[strcspn(buf, "\n")] = '\0';
}

Test(evict_kqosd, be_group_frozen_above_the_threshold_thawed_below, .init = setup, .fini = teardown,
     .timeout = 60)
{
	char st[32];
	unsigned int ms;

	start_all("freeze");
	set_meminfo(80);
	cr_assert(live_file_wait("freezer", "be", "freezer.state", "FROZEN", 5000, &ms),
		  "BE not frozen");
	freezer_state("ls", st, sizeof(st));
	cr_expect_str_eq(st, "THAWED", "LS frozen");
	cr_assert_not(exited(be_pid[0]) || exited(be_pid[1]), "freeze must not kill");
	/* back to 60 %: no pressure, thawed */
	set_meminfo(60);
	cr_assert(live_file_wait("freezer", "be", "freezer.state", "THAWED", 5000, &ms),
		  "BE not thawed once memory is back under the threshold");
	cr_expect_geq(daemon_log_wait(errlog, "action=thaw result=ok", "pod=bare-metal/be", 2000),
		      1);
	/* frozen again, then SIGTERM: kqos leaves nothing frozen behind */
	set_meminfo(80);
	/* after the 4 s memory cool-down, with room for a loaded machine */
	cr_assert(live_file_wait("freezer", "be", "freezer.state", "FROZEN", 10000, &ms),
		  "BE not frozen again");
	stop_daemon();
	freezer_state("be", st, sizeof(st));
	cr_expect_str_eq(st, "THAWED", "a frozen group outlived kqosd");
	freezer_state("ls", st, sizeof(st));
	cr_expect_str_eq(st, "THAWED");
	cr_expect_eq(daemon_log_count(errlog, "msg=\"eviction\"", "pod=bare-metal/ls"), 0);
}

/*
 * Kubernetes pods from a PodList file, the Eviction API played by the local HTTPS server:
 * kqosd posts the BE pod's eviction with its UID and leaves the LS pod alone. Tested only
 * against this local server, not a real API server.
 */
Test(evict_kqosd, kubernetes_be_pod_evicted_through_the_api, .init = setup, .fini = teardown,
     .timeout = 60)
{
	static const char pods[] =
		"{\"kind\":\"PodList\",\"items\":["
		"{\"metadata\":{\"name\":\"batch-0\",\"namespace\":\"jobs\",\"uid\":\"be01\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"BE\"}},\"spec\":{\"containers\":"
		"[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\",\"uid\":\"1501\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"LS\"}},\"spec\":{\"containers\":"
		"[{\"name\":\"c\"}]},\"status\":{\"phase\":\"Running\"}}]}";
	char podfile[PATH_MAX], token[PATH_MAX], base[128], *posts, *last;
	struct https_server *srv = NULL;
	FILE *f;

	if (!live_require_root())
		cr_skip_test("root and BTF needed");
	cr_assert_eq(https_server__start(true, &srv), 0, "cannot start the fake API server");
	snprintf(base, sizeof(base), "%s", https_server__base(srv));
	cr_assert_eq(https_server__write(srv, "token", "sa-token"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "sa-token"), 0);
	cr_assert_eq(https_server__write(srv, "podlist.json", pods), 0);
	snprintf(token, sizeof(token), "%s/token", https_server__dir(srv));
	snprintf(podfile, sizeof(podfile), "%s/podlist.json", https_server__dir(srv));
	set_meminfo(80);
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"500ms\", \"stateDir\": \"%s\", \"procRoot\": \"%s\",\n"
		" \"export\": {\"socket\": \"\"},\n"
		" \"eviction\": {\"apiServer\": \"%s\", \"tokenFile\": \"%s\", \"caFile\": \"%s\"},\n"
		" \"pods\": {\"source\": \"file\", \"file\": {\"path\": \"%s\"}},\n"
		" \"nodeSLO\": {\"resourceUsedThresholdWithBE\": {\"enable\": true}},\n"
		" \"strategies\": {\"eviction\": {\"features\": [\"BEMemoryEvict\"]}}}\n",
		state_dir, proc_dir, base, token, https_server__ca(srv), podfile);
	fclose(f);
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
	for (int t = 0; t < 8000; t += 200) {
		posts = https_server__read(srv, "posts");
		/* the Warning Event follows the eviction: wait for both */
		if (posts && strstr(posts, "/eviction") && strstr(posts, "/events"))
			break;
		free(posts);
		posts = NULL;
		live_sleep_ms(200);
	}
	cr_assert_not_null(posts, "no eviction posted");
	cr_expect(strstr(posts, "POST /api/v1/namespaces/jobs/pods/batch-0/eviction\n"), "%s",
		  posts);
	cr_expect_null(strstr(posts, "web-0"), "the LS pod was asked for: %s", posts);
	cr_expect(strstr(posts, "POST /api/v1/namespaces/jobs/events\n"), "no Warning Event");
	free(posts);
	last = https_server__read(srv, "last_auth");
	cr_expect_str_eq(last, "Bearer sa-token");
	free(last);
	/* accepted: pending while the pod is listed, so no second call within the run */
	live_sleep_ms(5000);
	posts = https_server__read(srv, "posts");
	cr_expect_eq(strstr(strstr(posts, "/eviction") + 1, "/eviction"), NULL,
		     "a pending eviction was asked again: %s", posts);
	free(posts);
	cr_expect_geq(daemon_log_wait(errlog, "strategy=BEMemoryEvict action=api result=ok",
				      "pod=jobs/batch-0", 2000),
		      1);
	stop_daemon();
	https_server__free(srv);
}
