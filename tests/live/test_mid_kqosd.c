// SPDX-License-Identifier: GPL-2.0
/*
 * Mid+LS inside besteffort, end to end on real v1 cgroups: a kubepods tree (nested under a test
 * dir, as a kind node nests kubelet's root) with a busy BE pod and a busy Mid+LS pod (the
 * webhook's shape: Kubernetes BestEffort, mid-cpu request 1000 and limit 1500), pods from a
 * PodList file, kqosd with cfsQuota suppress and the mid tier on. The BE pod is suppressed on
 * its own cgroup, the Mid+LS pod gets shares 1024 and quota 150000 and no suppression, it gets
 * its limit's CPU; when it leaves, suppression goes back to the dir with no gap and no refused
 * write; and SIGTERM restores every file.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "kubetree.h"
#include "live.h"

#define BE_CID	"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"
#define MID_CID "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"
#define NCTRL	4
#define NDIRS	7
#define NLOAD	4

static const char *const ctrls[NCTRL] = { "cpu", "cpuacct", "cpuset", "memory" };
static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], pods_file[64],
	state[DAEMON_TMP_LEN], *state_dir;
static char be_uid[64], mid_uid[64], g_uid[64];
static char dirs[NDIRS][KUBETREE_DIR_LEN]; /* relative to the test dir, parents first */
static pid_t daemon_pid = -1, loads[NLOAD] = { -1, -1, -1, -1 };
static bool made;

enum { D_KUBEPODS, D_GUARANTEED, D_BE_DIR, D_BE_POD, D_BE_CTR, D_MID_POD, D_MID_CTR };

static void path_of(char *buf, size_t len, const char *ctrl, const char *rel, const char *file)
{
	kubetree_path(buf, len, "kp", ctrl, rel, file);
}

static int put(const char *ctrl, const char *rel, const char *file, const char *val)
{
	return kubetree_write("kp", ctrl, rel, file, val);
}

static void get(const char *ctrl, const char *rel, const char *file, char *buf, size_t n)
{
	kubetree_read("kp", ctrl, rel, file, buf, n);
}

static long get_long(const char *ctrl, const char *rel, const char *file)
{
	char buf[64];

	get(ctrl, rel, file, buf, sizeof(buf));
	return strtol(buf, NULL, 10);
}

static void mk_tree(void)
{
	char root_cpus[64], root_mems[64], p[PATH_MAX];
	FILE *f;

	f = fopen(LIVE_CG_ROOT "/cpuset/cpuset.cpus", "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(root_cpus, sizeof(root_cpus), f));
	fclose(f);
	f = fopen(LIVE_CG_ROOT "/cpuset/cpuset.mems", "r");
	cr_assert_not_null(f);
	cr_assert_not_null(fgets(root_mems, sizeof(root_mems), f));
	fclose(f);
	for (size_t c = 0; c < NCTRL; c++) {
		cr_assert_eq(live_cg_create(ctrls[c], "kp"), 0, "%s", ctrls[c]);
		for (size_t d = 0; d <= NDIRS; d++) {
			const char *rel = d ? dirs[d - 1] : "";

			if (d) {
				path_of(p, sizeof(p), ctrls[c], rel, NULL);
				cr_assert_eq(kubetree_mkdir("kp", ctrls[c], rel), 0, "mkdir %s", p);
			}
			/* a v1 cpuset takes no task before it has cpus and mems */
			if (!strcmp(ctrls[c], "cpuset")) {
				cr_assert_eq(put("cpuset", rel, "cpuset.mems", root_mems), 0);
				cr_assert_eq(put("cpuset", rel, "cpuset.cpus", root_cpus), 0);
			}
		}
	}
	/*
	 * kubelet gives kubepods the node's weight; here it also keeps the machine's other work
	 * from deciding the CPU figure below
	 */
	cr_assert_eq(put("cpu", "", "cpu.shares", "10240"), 0);
}

static void setup(void)
{
	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	kubetree_uid(be_uid, sizeof(be_uid), "be000000");
	kubetree_uid(mid_uid, sizeof(mid_uid), "4d1d0000");
	kubetree_uid(g_uid, sizeof(g_uid), "9a000000");
	kubetree_dirs(dirs, g_uid); /* D_KUBEPODS, D_GUARANTEED, D_BE_DIR */
	snprintf(dirs[D_BE_POD], sizeof(dirs[0]), "/kubepods/besteffort/pod%s", be_uid);
	snprintf(dirs[D_BE_CTR], sizeof(dirs[0]), "/kubepods/besteffort/pod%s/%s", be_uid, BE_CID);
	snprintf(dirs[D_MID_POD], sizeof(dirs[0]), "/kubepods/besteffort/pod%s", mid_uid);
	snprintf(dirs[D_MID_CTR], sizeof(dirs[0]), "/kubepods/besteffort/pod%s/%s", mid_uid,
		 MID_CID);
	state_dir = daemon_files_make(cfg, errlog, state);
	daemon_tmp_file(pods_file, sizeof(pods_file), "kqos-pods");
	made = true; /* from here on teardown removes whatever exists */
	mk_tree();
}

static void teardown(void)
{
	daemon_kill(&daemon_pid);
	for (size_t i = 0; i < NLOAD; i++) {
		live_kill(loads[i]);
		loads[i] = -1;
	}
	for (size_t c = 0; made && c < NCTRL; c++)
		live_cg_destroy(ctrls[c], "kp");
	made = false;
	unlink(pods_file);
	daemon_files_remove(cfg, errlog, &state_dir);
}

/* Two spinners per pod: each pod wants both CPUs. */
static void start_loads(void)
{
	char v[32];

	for (size_t i = 0; i < NLOAD; i++) {
		const char *rel = dirs[i < 2 ? D_BE_CTR : D_MID_CTR];

		loads[i] = live_spawn(100);
		cr_assert_gt(loads[i], 0);
		snprintf(v, sizeof(v), "%d\n", (int)loads[i]);
		for (size_t c = 0; c < NCTRL; c++)
			cr_assert_eq(put(ctrls[c], rel, "cgroup.procs", v), 0, "%s %s", ctrls[c],
				     rel);
		live_go(loads[i]);
	}
}

/* @mid_phase: "Running", or "Succeeded" for the Mid+LS pod that has left. */
static void write_pods(const char *mid_phase)
{
	char tmp[80];
	FILE *f;

	/* whole or not at all: the file source must never read half a list */
	snprintf(tmp, sizeof(tmp), "%s.new", pods_file);
	f = fopen(tmp, "w");

	cr_assert_not_null(f);
	fprintf(f,
		"{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":["
		/* koord-batch/BE with batch resources */
		"{\"metadata\":{\"name\":\"be-0\",\"namespace\":\"jobs\",\"uid\":\"%s\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"BE\"}},"
		"\"spec\":{\"priority\":5500,\"containers\":[{\"name\":\"be\",\"resources\":"
		"{\"requests\":{\"kubernetes.io/batch-cpu\":\"1000\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"BestEffort\","
		"\"containerStatuses\":[{\"name\":\"be\",\"containerID\":\"containerd://%s\"}]}},"
		/* koord-mid/LS, BestEffort: native resources moved to mid-* */
		"{\"metadata\":{\"name\":\"mid-0\",\"namespace\":\"shop\",\"uid\":\"%s\","
		"\"labels\":{\"koordinator.sh/priority-class\":\"koord-mid\"}},"
		"\"spec\":{\"priority\":7500,\"containers\":[{\"name\":\"mid\",\"resources\":"
		"{\"requests\":{\"kubernetes.io/mid-cpu\":\"1000\"},"
		"\"limits\":{\"kubernetes.io/mid-cpu\":\"1500\"}}}]},"
		"\"status\":{\"phase\":\"%s\",\"qosClass\":\"BestEffort\","
		"\"containerStatuses\":[{\"name\":\"mid\",\"containerID\":\"containerd://%s\"}]}},"
		"{\"metadata\":{\"name\":\"g-0\",\"namespace\":\"shop\",\"uid\":\"%s\"},"
		"\"spec\":{\"priority\":9500,\"containers\":[{\"name\":\"g\",\"resources\":"
		"{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"},"
		"\"limits\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Guaranteed\"}}]}",
		be_uid, BE_CID, mid_uid, mid_phase, MID_CID, g_uid);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, pods_file), 0);
}

static void write_cfg(void)
{
	FILE *f = fopen(cfg, "w");

	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"500ms\", \"stateDir\": \"%s\", \"export\": {\"socket\": \"\"},\n"
		" \"pods\": {\"source\": \"file\", \"file\": {\"path\": \"%s\", \"interval\": "
		"\"500ms\"}},\n"
		" \"nodeSLO\": {\"resourceUsedThresholdWithBE\": {\"enable\": true,\n"
		"   \"cpuSuppressThresholdPercent\": 65, \"cpuSuppressPolicy\": \"cfsQuota\"}},\n"
		" \"strategies\": {\"midResource\": {\"enable\": true}}}\n",
		state_dir, pods_file);
	fclose(f);
}

static pid_t start_kqosd(void)
{
	/* debug: the log shows every cgroup write in the order it was made */
	char *argv[] = { kqosd, "--config", cfg, "--log-level", "debug", NULL };
	pid_t pid = fork();

	if (pid == 0) {
		int e = open(errlog, O_WRONLY | O_TRUNC);

		dup2(e, 2);
		execv(kqosd, argv);
		_exit(127);
	}
	return pid;
}

/* Every file kqosd may write, in every dir of the tree. */
static const struct {
	const char *ctrl, *file;
} files[] = {
	{ "cpu", "cpu.cfs_quota_us" },
	{ "cpu", "cpu.cfs_period_us" },
	{ "cpu", "cpu.shares" },
	{ "cpuset", "cpuset.cpus" },
	{ "memory", "memory.limit_in_bytes" },
};

#define NFILES (sizeof(files) / sizeof(files[0]))

static void read_all(char out[NDIRS][NFILES][64])
{
	for (size_t d = 0; d < NDIRS; d++)
		for (size_t i = 0; i < NFILES; i++)
			get(files[i].ctrl, dirs[d], files[i].file, out[d][i], 64);
}

/* The state the test waits for: the Mid+LS pod translated, the BE pod suppressed on its own. */
static bool settled(void)
{
	long be_q = get_long("cpu", dirs[D_BE_POD], "cpu.cfs_quota_us");

	return get_long("cpu", dirs[D_MID_POD], "cpu.shares") == 1024 &&
	       get_long("cpu", dirs[D_MID_POD], "cpu.cfs_quota_us") == 150000 &&
	       get_long("cpu", dirs[D_MID_CTR], "cpu.cfs_quota_us") == 150000 && be_q > 0 &&
	       be_q <= 100000;
}

static double usage_s(const char *rel)
{
	char p[PATH_MAX];
	__u64 ns = 0;

	path_of(p, sizeof(p), "cpuacct", rel, "cpuacct.usage");
	cr_assert_eq(live_read_u64(p, &ns), 0, "%s", p);
	return ns / 1e9;
}

static bool log_has(const char *needle)
{
	char line[2048];
	bool found = false;
	FILE *f = fopen(errlog, "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = strstr(line, needle) && strstr(line, "level=warn");
	if (f)
		fclose(f);
	return found;
}

static long log_size(void)
{
	struct stat st;

	return stat(errlog, &st) ? 0 : (long)st.st_size;
}

/*
 * From byte @from of the log: the line number of the dir's first positive quota write and of
 * the BE pod's first return to unlimited (-1 restored, or max); -1 when absent.
 */
static void write_order(long from, int *ret_dir, int *ret_pod)
{
	char line[2048], dir_key[400], pod_key[400];
	FILE *f = fopen(errlog, "r");
	int n = 0;

	*ret_dir = *ret_pod = -1;
	snprintf(dir_key, sizeof(dir_key), "cgroup=/kqos-test-%d-kp%s knob=cfs_quota value=\"",
		 (int)getpid(), dirs[D_BE_DIR]);
	snprintf(pod_key, sizeof(pod_key), "cgroup=/kqos-test-%d-kp%s knob=cfs_quota value=\"",
		 (int)getpid(), dirs[D_BE_POD]);
	if (!f)
		return;
	fseek(f, from, SEEK_SET);
	for (; fgets(line, sizeof(line), f); n++) {
		const char *d = strstr(line, dir_key), *p = strstr(line, pod_key);

		if (!strstr(line, "cgroup written"))
			continue;
		if (d && *ret_dir < 0 && d[strlen(dir_key)] >= '1' && d[strlen(dir_key)] <= '9')
			*ret_dir = n;
		if (p && *ret_pod < 0 &&
		    (!strncmp(p + strlen(pod_key), "-1 ", 3) ||
		     !strncmp(p + strlen(pod_key), "max\"", 4)))
			*ret_pod = n;
	}
	fclose(f);
}

/*
 * The Mid+LS pod leaves: suppression goes back to the besteffort dir. The dir's quota is
 * written before the BE pod's own is let go (a later pass, per kqosd's write log), sampled
 * every 20 ms the BE pod is never without a limit on one of the two levels, and v1 refuses
 * no write.
 */
static void switch_back(void)
{
	long dir_q = -1, pod_q = 0, from = log_size();
	int t, gaps = 0, dir_at, pod_at;

	write_pods("Succeeded");
	for (t = 0; t < 20000; t += 20) {
		dir_q = get_long("cpu", dirs[D_BE_DIR], "cpu.cfs_quota_us");
		pod_q = get_long("cpu", dirs[D_BE_POD], "cpu.cfs_quota_us");
		if (dir_q == -1 && pod_q == -1) {
			fprintf(stderr, "mid_kqosd: gap at %d ms (dir %ld, BE pod %ld)\n", t, dir_q,
				pod_q);
			gaps++;
		}
		if (dir_q > 0 && pod_q == -1)
			break;
		live_sleep_ms(20);
	}
	live_sleep_ms(300); /* the log line of the last write */
	write_order(from, &dir_at, &pod_at);
	fprintf(stderr,
		"mid_kqosd: back at the dir in %d ms: dir quota %ld, BE pod quota %ld; "
		"write log lines: dir quota %d, BE pod released %d\n",
		t, dir_q, pod_q, dir_at, pod_at);
	cr_expect(dir_q > 0 && pod_q == -1, "not back at the dir: dir %ld, BE pod %ld", dir_q,
		  pod_q);
	cr_expect_eq(gaps, 0, "BE unsuppressed in %d samples", gaps);
	/* KQOS_KEEP_LOG=path keeps kqosd's write log of a run with a gap */
	if (gaps && getenv("KQOS_KEEP_LOG") && link(errlog, getenv("KQOS_KEEP_LOG")))
		fprintf(stderr, "mid_kqosd: cannot keep the log: %s\n", strerror(errno));
	cr_expect(dir_at >= 0 && pod_at > dir_at,
		  "the BE pod was let go (line %d) before the dir held it (line %d)", pod_at,
		  dir_at);
	cr_expect_not(log_has("cgroup write failed"), "a write was refused: see %s", errlog);
}

Test(mid_kqosd, mid_ls_translated_not_suppressed_be_suppressed_sigterm_restores, .init = setup,
     .fini = teardown, .timeout = 120)
{
	char before[NDIRS][NFILES][64], after[NDIRS][NFILES][64], path[PATH_MAX];
	double mid0, be0, mid_s, be_s, want;
	long ncpu;
	long be_q;
	int status, t;

	if (!live_require_root())
		return;
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	cr_assert(made);
	read_all(before);
	start_loads();
	write_pods("Running");
	write_cfg();
	daemon_pid = start_kqosd();
	cr_assert_gt(daemon_pid, 0);

	for (t = 0; t < 30000 && !settled(); t += 200)
		live_sleep_ms(200);
	be_q = get_long("cpu", dirs[D_BE_POD], "cpu.cfs_quota_us");
	cr_assert(
		settled(),
		"not settled after %d ms: mid shares %ld quota %ld ctr quota %ld, BE pod quota %ld",
		t, get_long("cpu", dirs[D_MID_POD], "cpu.shares"),
		get_long("cpu", dirs[D_MID_POD], "cpu.cfs_quota_us"),
		get_long("cpu", dirs[D_MID_CTR], "cpu.cfs_quota_us"), be_q);
	/* the besteffort dir is left unlimited: the Mid+LS pod is not under any suppress quota */
	cr_assert_eq(get_long("cpu", dirs[D_BE_DIR], "cpu.cfs_quota_us"), -1);
	cr_assert_eq(get_long("cpu", dirs[D_MID_CTR], "cpu.shares"), 1024);

	/* over 5 s the Mid+LS pod gets its limit (1.5 of 2 CPUs) less 10 % of the node */
	live_sleep_ms(1000);
	ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	mid0 = usage_s(dirs[D_MID_POD]);
	be0 = usage_s(dirs[D_BE_POD]);
	live_sleep_ms(5000);
	mid_s = usage_s(dirs[D_MID_POD]) - mid0;
	be_s = usage_s(dirs[D_BE_POD]) - be0;
	/* another live test may take a CPU offline meanwhile: the node is what stayed online */
	if (sysconf(_SC_NPROCESSORS_ONLN) < ncpu)
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	want = ((ncpu < 1.5 ? (double)ncpu : 1.5) - 0.1 * (double)ncpu) * 5.0;
	be_q = get_long("cpu", dirs[D_BE_POD], "cpu.cfs_quota_us");
	fprintf(stderr,
		"mid_kqosd: settled in %d ms; over 5 s on %ld CPUs Mid+LS %.2f CPU-s (want >= %.2f), "
		"BE %.2f CPU-s; BE pod quota %ld us, Mid+LS shares %ld quota %ld us\n",
		t, ncpu, mid_s, want, be_s, be_q, get_long("cpu", dirs[D_MID_POD], "cpu.shares"),
		get_long("cpu", dirs[D_MID_POD], "cpu.cfs_quota_us"));
	cr_expect_geq(mid_s, want, "Mid+LS got %.2f CPU-s in 5 s", mid_s);
	cr_expect_leq(mid_s, 1.5 * 5.0 * 1.05, "Mid+LS above its 1.5-CPU limit: %.2f", mid_s);
	cr_expect_lt(be_s, mid_s / 4, "BE not suppressed: %.2f CPU-s", be_s);

	switch_back();

	kill(daemon_pid, SIGTERM);
	cr_assert_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
	daemon_pid = -1;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0, "kqosd exit status %d", status);
	read_all(after);
	for (size_t d = 0; d < NDIRS; d++)
		for (size_t i = 0; i < NFILES; i++)
			cr_expect_str_eq(after[d][i], before[d][i], "%s %s not restored", dirs[d],
					 files[i].file);
	snprintf(path, sizeof(path), "%s/journal", state_dir);
	cr_assert_neq(access(path, F_OK), 0, "journal left behind");
}
