// SPDX-License-Identifier: GPL-2.0
/*
 * cpu_burst end to end on this host's v1 cpu controller: a kubepods-like tree of real cgroups
 * (nested under a test directory) holding an LS pod whose container has a 500m limit (quota
 * 50000, as kubelet writes it) and a busy process, so it is throttled. kqosd with
 * cpuBurstStrategy auto must write cpu.cfs_burst_us clamped to the quota (the default 1000 %
 * asks for 500000, which the kernel refuses), log the clamp once, export both values, raise
 * the throttled container's quota x1.2 (the pod's by the same delta), and on SIGTERM put every
 * file back.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "https_server.h"
#include "live.h"

#define CID "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

static char kqosd[512], uid[64], pods_file[64], cfg[64], errlog[64], state[64], prom[64];
static char procd[64];
static char base[256], pod_dir[512], ctr_dir[600], acct_base[256];
static char *state_dir, *prom_dir, *proc_dir;
static pid_t load_pid = -1, daemon_pid = -1;

static void mk(const char *p)
{
	cr_assert(!mkdir(p, 0755) || errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
}

static int put(const char *dir, const char *file, const char *val)
{
	char p[700];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "w");
	if (!f)
		return -errno;
	fputs(val, f);
	return fclose(f) ? -errno : 0;
}

static long long get(const char *dir, const char *file)
{
	char p[700];
	long long v = -999;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, file);
	f = fopen(p, "r");
	if (f) {
		if (fscanf(f, "%lld", &v) != 1)
			v = -998;
		fclose(f);
	}
	return v;
}

/* Poll until the file holds @want or @ms pass. */
static bool wait_for(const char *dir, const char *file, long long want, unsigned int ms)
{
	for (unsigned int t = 0; t <= ms; t += 50) {
		if (get(dir, file) == want)
			return true;
		live_sleep_ms(50);
	}
	return false;
}

static const char *const file_slo =
	"{\"cpuBurstStrategy\": {\"policy\": \"auto\", \"sharePoolThresholdPercent\": 100}}";

/* The PodList, and the config with @node_slo as its nodeSLO object. */
static void write_files(const char *node_slo)
{
	FILE *f = fopen(pods_file, "w");

	cr_assert_not_null(f);
	fprintf(f,
		"{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[{"
		"\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\",\"uid\":\"%s\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"LS\"}},"
		"\"spec\":{\"containers\":[{\"name\":\"web\",\"resources\":"
		"{\"requests\":{\"cpu\":\"250m\"},\"limits\":{\"cpu\":\"500m\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\","
		"\"containerStatuses\":[{\"name\":\"web\",\"containerID\":\"containerd://%s\"}]}"
		"}]}",
		uid, CID);
	fclose(f);
	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"300ms\", \"stateDir\": \"%s\", \"logLevel\": \"debug\",\n"
		" \"export\": {\"socket\": \"\", \"textfileDir\": \"%s\", \"textfileInterval\": "
		"\"300ms\"},\n"
		" \"procRoot\": \"%s\",\n"
		" \"pods\": {\"source\": \"file\", \"file\": {\"path\": \"%s\", \"interval\": "
		"\"300ms\"}},\n"
		" \"nodeSLO\": %s}\n",
		state_dir, prom_dir, proc_dir, pods_file, node_slo);
	fclose(f);
}

/*
 * The host is shared and often saturated, which would hold the quota burst (a busy share pool
 * means cooling or overload). A procRoot with a frozen /proc/stat makes node usage 0: the
 * share pool idle, so only the container's own throttling drives its quota.
 */
static void freeze_proc(void)
{
	static const char *const files[] = { "stat", "meminfo", "cgroups" };
	char cmd[256];

	for (size_t i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), "cat /proc/%s > '%s/%s'", files[i], proc_dir, files[i]);
		cr_assert_eq(system(cmd), 0, "%s", cmd);
	}
}

/* <root>/kubepods/burstable/pod<uid>/<container id>; pod_dir and ctr_dir name it. */
static void mk_tree(const char *root)
{
	snprintf(pod_dir, sizeof(pod_dir), "%s/kubepods", root);
	mk(pod_dir);
	snprintf(pod_dir, sizeof(pod_dir), "%s/kubepods/burstable", root);
	mk(pod_dir);
	snprintf(pod_dir, sizeof(pod_dir), "%s/kubepods/burstable/pod%s", root, uid);
	mk(pod_dir);
	snprintf(ctr_dir, sizeof(ctr_dir), "%s/%s", pod_dir, CID);
	mk(ctr_dir);
}

static void rm_tree(const char *root)
{
	char p[700];

	snprintf(p, sizeof(p), "%s/kubepods/burstable/pod%s/%s", root, uid, CID);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/kubepods/burstable/pod%s", root, uid);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/kubepods/burstable", root);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/kubepods", root);
	rmdir(p);
}

static void setup(void)
{
	if (!live_require_root())
		return;
	live_sweep_stale();
	daemon_path(kqosd, sizeof(kqosd));
	snprintf(uid, sizeof(uid), "b0b50000-0000-4000-8000-%012d", (int)getpid());
	live_cg_path(base, sizeof(base), "cpu", "kp");
	cr_assert_eq(live_cg_create("cpu", "kp"), 0);
	/* kubelet makes the tree in every controller; cpu.stat is read with cpuacct.usage */
	live_cg_path(acct_base, sizeof(acct_base), "cpuacct", "kp");
	cr_assert_eq(live_cg_create("cpuacct", "kp"), 0);
	mk_tree(acct_base);
	mk_tree(base);
	/* what kubelet writes for a 500m limit */
	cr_assert_eq(put(pod_dir, "cpu.cfs_quota_us", "50000"), 0);
	cr_assert_eq(put(ctr_dir, "cpu.cfs_quota_us", "50000"), 0);
	load_pid = live_spawn(100);
	{
		char v[32];

		snprintf(v, sizeof(v), "%d\n", (int)load_pid);
		cr_assert_eq(put(ctr_dir, "cgroup.procs", v), 0);
	}
	live_go(load_pid);
	snprintf(pods_file, sizeof(pods_file), "/tmp/kqos-pods-XXXXXX");
	snprintf(cfg, sizeof(cfg), "/tmp/kqosd-cfg-XXXXXX");
	snprintf(errlog, sizeof(errlog), "/tmp/kqosd-err-XXXXXX");
	snprintf(state, sizeof(state), "/tmp/kqos-state-XXXXXX");
	snprintf(prom, sizeof(prom), "/tmp/kqos-prom-XXXXXX");
	close(mkstemp(pods_file));
	close(mkstemp(cfg));
	close(mkstemp(errlog));
	state_dir = mkdtemp(state);
	prom_dir = mkdtemp(prom);
	snprintf(procd, sizeof(procd), "/tmp/kqos-proc-XXXXXX");
	proc_dir = mkdtemp(procd);
	cr_assert(state_dir && prom_dir && proc_dir);
	freeze_proc();
	write_files(file_slo);
}

static void teardown(void)
{
	char p[700];

	if (daemon_pid > 0)
		daemon_stop(daemon_pid);
	live_kill(load_pid);
	live_sleep_ms(100); /* the killed load leaves its cgroup */
	rm_tree(base);
	rm_tree(acct_base);
	live_cg_destroy("cpu", "kp");
	live_cg_destroy("cpuacct", "kp");
	unlink(pods_file);
	unlink(cfg);
	if (getenv("KQOS_KEEP_LOG"))
		fprintf(stderr, "log: %s\n", errlog);
	else
		unlink(errlog);
	if (state_dir) {
		snprintf(p, sizeof(p), "rm -rf '%s' '%s' '%s'", state_dir, prom_dir,
			 proc_dir ? proc_dir : "");
		if (system(p))
			fprintf(stderr, "cleanup of %s failed\n", state_dir);
	}
}

/* The textfile's sample of @family for the web container, or -1 when absent. */
static double prom_value(const char *family)
{
	char p[128], line[1024], want[160];
	double v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/kqos.prom", prom_dir);
	snprintf(want, sizeof(want), "%s{", family);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *sp = strrchr(line, ' ');

		if (!strncmp(line, want, strlen(want)) && strstr(line, "container=\"web\"") && sp)
			v = strtod(sp + 1, NULL);
	}
	fclose(f);
	return v;
}

static double prom_value_state(const char *which)
{
	char p[128], line[1024], want[160];
	double v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/kqos.prom", prom_dir);
	snprintf(want, sizeof(want), "kqos_burst_share_pool_state{state=\"%s\"} ", which);
	f = fopen(p, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, want, strlen(want)))
			v = strtod(line + strlen(want), NULL);
	fclose(f);
	return v;
}

Test(burst_live, cfs_burst_clamped_quota_scaled_and_restored, .init = setup, .fini = teardown,
     .timeout = 60)
{
	long long q;

	if (!live_require_root())
		return;
	cr_assert_eq(get(ctr_dir, "cpu.cfs_burst_us"), 0, "the kernel's default");
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
	/* 1000 % of 500m asks for 500000 us; the kernel takes at most the quota */
	cr_assert(wait_for(ctr_dir, "cpu.cfs_burst_us", 50000, 10000), "container burst %lld",
		  get(ctr_dir, "cpu.cfs_burst_us"));
	cr_assert(wait_for(pod_dir, "cpu.cfs_burst_us", 50000, 3000), "pod burst %lld",
		  get(pod_dir, "cpu.cfs_burst_us"));
	/* a busy loop in 500m is throttled: the quota grows x1.2 per round, up to 150000 */
	for (int i = 0; i < 100 && get(ctr_dir, "cpu.cfs_quota_us") <= 50000; i++)
		live_sleep_ms(100);
	q = get(ctr_dir, "cpu.cfs_quota_us");
	cr_assert(q >= 60000 && q <= 150000, "container quota %lld, share pool idle %g", q,
		  prom_value_state("idle"));
	cr_assert_geq(get(pod_dir, "cpu.cfs_quota_us"), q, "the pod moves first on increase");
	live_sleep_ms(1500);
	cr_assert_eq(daemon_log_count(errlog, "cpu burst clamped to the quota", "asked_us=500000"),
		     1, "logged once per pod");
	cr_expect_float_eq(prom_value("kqos_burst_cfs_burst_asked_seconds"), 0.5, 1e-9);
	cr_expect_float_eq(prom_value("kqos_burst_cfs_burst_seconds"), 0.05, 1e-9);
	cr_expect_float_eq(prom_value("kqos_burst_cfs_quota_base_seconds"), 0.05, 1e-9);
	cr_expect_geq(prom_value("kqos_burst_cfs_quota_seconds"), 0.06);

	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	cr_expect_eq(get(ctr_dir, "cpu.cfs_burst_us"), 0);
	cr_expect_eq(get(pod_dir, "cpu.cfs_burst_us"), 0);
	cr_expect_eq(get(ctr_dir, "cpu.cfs_quota_us"), 50000);
	cr_expect_eq(get(pod_dir, "cpu.cfs_quota_us"), 50000);
}

/* --- nodeSLO from the local HTTPS server playing the API server -------------------------- */

#define R_SLO "get_apis_slo.koordinator.sh_v1alpha1_nodeslos_node-1"

static struct https_server *api;
static char api_token[256];

static void put_slo(const char *burst_json)
{
	char doc[512];

	snprintf(doc, sizeof(doc),
		 "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
		 "\"metadata\":{\"name\":\"node-1\"},\"spec\":{\"cpuBurstStrategy\":%s}}",
		 burst_json);
	cr_assert_eq(https_server__write(api, R_SLO, doc), 0);
}

static void api_setup(void)
{
	char slo[1024];

	setup();
	if (!live_require_root())
		return;
	cr_assert_eq(https_server__start(true, &api), 0);
	snprintf(api_token, sizeof(api_token), "%s/sa-token", https_server__dir(api));
	cr_assert_eq(https_server__write(api, api_token, "tok-A\n"), 0);
	cr_assert_eq(https_server__write(api, "expect_token", "tok-A"), 0);
	put_slo("{\"policy\":\"none\"}");
	/* the file's nodeSLO says nothing but where the spec comes from */
	snprintf(slo, sizeof(slo),
		 "{\"source\": \"apiserver\", \"apiserver\": {\"url\": \"%s\", \"nodeName\": "
		 "\"node-1\", \"tokenFile\": \"%s\", \"caFile\": \"%s\", \"interval\": \"300ms\"}}",
		 https_server__base(api), api_token, https_server__ca(api));
	write_files(slo);
}

static void api_teardown(void)
{
	teardown();
	https_server__free(api);
	api = NULL;
}

Test(burst_live, nodeslo_from_the_api_server_applied_kept_and_followed, .init = api_setup,
     .fini = api_teardown, .timeout = 60)
{
	if (!live_require_root())
		return;
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
	cr_assert(wait_for(ctr_dir, "cpu.cfs_quota_us", 50000, 3000));
	live_sleep_ms(1000);
	cr_assert_eq(get(ctr_dir, "cpu.cfs_burst_us"), 0, "policy none: nothing written");
	/* the cluster turns burst on: applied within one poll (300 ms) and a tick */
	put_slo("{\"policy\":\"cpuBurstOnly\",\"cpuBurstPercent\":40}");
	cr_assert(wait_for(ctr_dir, "cpu.cfs_burst_us", 20000, 2000), "burst %lld",
		  get(ctr_dir, "cpu.cfs_burst_us"));
	/* 404, then garbage: the last good spec stays in force, stale said once */
	{
		char p[512];

		snprintf(p, sizeof(p), "%s/%s", https_server__dir(api), R_SLO);
		cr_assert_eq(unlink(p), 0);
	}
	live_sleep_ms(1500);
	cr_assert_eq(get(ctr_dir, "cpu.cfs_burst_us"), 20000);
	cr_assert_eq(https_server__write(api, R_SLO, "<html>"), 0);
	live_sleep_ms(1500);
	cr_assert_eq(get(ctr_dir, "cpu.cfs_burst_us"), 20000);
	cr_assert_eq(daemon_log_count(errlog, "NodeSLO source stale", "http status 404"), 1);
	cr_assert_eq(daemon_log_count(errlog, "NodeSLO source stale", "not a JSON object"), 1);
	cr_expect_float_eq(prom_value_state("idle"), 1, 1e-9);
	/* the token rotates on both sides; the next spec is read with the new one */
	cr_assert_eq(https_server__write(api, "expect_token", "tok-B"), 0);
	cr_assert_eq(https_server__write(api, api_token, "tok-B\n"), 0);
	put_slo("{\"policy\":\"cpuBurstOnly\",\"cpuBurstPercent\":60}");
	cr_assert(wait_for(ctr_dir, "cpu.cfs_burst_us", 30000, 2000), "burst %lld",
		  get(ctr_dir, "cpu.cfs_burst_us"));
	cr_assert_eq(daemon_log_count(errlog, "NodeSLO source recovered", NULL), 1);
	/* a reload keeps the cluster's spec: the file's nodeSLO would turn burst off */
	cr_assert_eq(kill(daemon_pid, SIGHUP), 0);
	live_sleep_ms(1000);
	cr_assert_eq(daemon_log_count(errlog, "config reloaded", NULL), 1);
	cr_assert_eq(get(ctr_dir, "cpu.cfs_burst_us"), 30000);
	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	cr_expect_eq(get(ctr_dir, "cpu.cfs_burst_us"), 0);
	cr_expect_eq(get(pod_dir, "cpu.cfs_burst_us"), 0);
}
