// SPDX-License-Identifier: GPL-2.0
/*
 * Pod level end to end on the FUSE resctrl fake (no RDT here): a kubepods tree of real v1
 * cgroups (nested under a test dir) and a PodList file with two BE pods, one annotated with
 * node.koordinator.sh/resctrl. kqosd gives the annotated pod kqos-pod-<uid> with its range
 * (per-cache override included) and its process, the other pod's process goes to kqos-BE;
 * when the annotated pod leaves the list its group goes after the grace, and SIGTERM leaves
 * no kqos group.
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
#include "fakefs.h"
#include "kubetree.h"
#include "live.h"

#define NCTRL 2
#define NDIRS 5

static const char *const ctrls[NCTRL] = { "cpu", "cpuacct" };
static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], pods_file[64],
	state[DAEMON_TMP_LEN], mnt[64];
static char *state_dir, *mnt_dir;
static char a_uid[64], b_uid[64], g_uid[64];
static char dirs[NDIRS][KUBETREE_DIR_LEN]; /* relative to the test dir, parents first */
static pid_t daemon_pid = -1, a_pid = -1, b_pid = -1, fs_pid = -1;
static bool made;

static void path_of(char *buf, size_t len, const char *ctrl, const char *rel, const char *file)
{
	kubetree_path(buf, len, "rkp", ctrl, rel, file);
}

static int put(const char *ctrl, const char *rel, const char *file, const char *val)
{
	return kubetree_write("rkp", ctrl, rel, file, val);
}

static void setup(void)
{
	char p[PATH_MAX];

	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	kubetree_uid(a_uid, sizeof(a_uid), "aa000000");
	kubetree_uid(b_uid, sizeof(b_uid), "bb000000");
	kubetree_uid(g_uid, sizeof(g_uid), "9a000000");
	kubetree_dirs(dirs, g_uid);
	snprintf(dirs[3], sizeof(dirs[3]), "/kubepods/besteffort/pod%s", a_uid);
	snprintf(dirs[4], sizeof(dirs[4]), "/kubepods/besteffort/pod%s", b_uid);
	state_dir = daemon_files_make(cfg, errlog, state);
	daemon_tmp_file(pods_file, sizeof(pods_file), "kqos-pods");
	mnt_dir = daemon_tmp_dir(mnt, sizeof(mnt), "kqos-resctrl-fs");
	for (size_t c = 0; c < NCTRL; c++) {
		cr_assert_eq(live_cg_create(ctrls[c], "rkp"), 0, "%s", ctrls[c]);
		for (size_t d = 0; d < NDIRS; d++) {
			path_of(p, sizeof(p), ctrls[c], dirs[d], NULL);
			cr_assert_eq(kubetree_mkdir("rkp", ctrls[c], dirs[d]), 0, "mkdir %s", p);
		}
	}
	made = true;
}

static void teardown(void)
{
	daemon_kill(&daemon_pid);
	live_kill(a_pid);
	live_kill(b_pid);
	a_pid = b_pid = -1;
	for (size_t c = 0; made && c < NCTRL; c++)
		kubetree_remove("rkp", ctrls[c], dirs, NDIRS);
	made = false;
	if (fs_pid > 0)
		fakefs_stop(fs_pid, mnt_dir);
	fs_pid = -1;
	if (mnt_dir)
		rmdir(mnt_dir);
	unlink(pods_file);
	daemon_files_remove(cfg, errlog, &state_dir);
}

static const char *const annotation =
	"{\\\"llc\\\":{\\\"schemata\\\":{\\\"range\\\":[50,100]},"
	"\\\"schemataPerCache\\\":[{\\\"cacheID\\\":1,\\\"range\\\":[0,50]}]},"
	"\\\"mb\\\":{\\\"schemata\\\":{\\\"percent\\\":40}}}";

static void pod_json(FILE *f, const char *name, const char *uid, bool annotated)
{
	fprintf(f,
		"{\"metadata\":{\"name\":\"%s\",\"namespace\":\"jobs\",\"uid\":\"%s\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"BE\"}%s%s%s},"
		"\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"BestEffort\"}}",
		name, uid, annotated ? ",\"annotations\":{\"node.koordinator.sh/resctrl\":\"" : "",
		annotated ? annotation : "", annotated ? "\"}" : "");
}

static void write_pods(bool with_a)
{
	char tmp[80];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.new", pods_file);
	f = fopen(tmp, "w");
	cr_assert_not_null(f);
	fprintf(f, "{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[");
	if (with_a) {
		pod_json(f, "be-a", a_uid, true);
		fputc(',', f);
	}
	pod_json(f, "be-b", b_uid, false);
	fprintf(f,
		",{\"metadata\":{\"name\":\"g-0\",\"namespace\":\"shop\",\"uid\":\"%s\"},"
		"\"spec\":{\"containers\":[{\"name\":\"g\",\"resources\":"
		"{\"requests\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"},"
		"\"limits\":{\"cpu\":\"100m\",\"memory\":\"64Mi\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Guaranteed\"}}]}",
		g_uid);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, pods_file), 0);
}

static void write_cfg(void)
{
	FILE *f = fopen(cfg, "w");

	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"500ms\", \"stateDir\": \"%s\", \"export\": {\"socket\": \"\"},\n"
		" \"resctrl\": {\"root\": \"%s\"},\n"
		" \"pods\": {\"source\": \"file\", \"file\": {\"path\": \"%s\", \"interval\": "
		"\"500ms\"}},\n"
		" \"nodeSLO\": {\"resourceQOSStrategy\": {\"beClass\": {\"resctrlQOS\": "
		"{\"enable\": true}}}},\n"
		" \"strategies\": {\"resctrlPodLevel\": true}}\n",
		state_dir, mnt_dir, pods_file);
	fclose(f);
}

static void slurp(const char *rel, char *buf, size_t n)
{
	fakefs_read(mnt_dir, rel, buf, n);
}

static bool has_pid(const char *rel, pid_t pid)
{
	return fakefs_has_pid(mnt_dir, rel, pid);
}

static bool exists(const char *rel)
{
	return fakefs_exists(mnt_dir, rel);
}

static char a_group[128];

static bool placed(void)
{
	char tasks[160];

	snprintf(tasks, sizeof(tasks), "%s/tasks", a_group);
	return has_pid(tasks, a_pid) && has_pid("kqos-BE/tasks", b_pid);
}

static bool a_gone(void)
{
	return !exists(a_group);
}

static bool wait_for(bool (*ok)(void), int ms)
{
	return live_wait_for(ok, ms, 100);
}

static pid_t spawn_in(const char *rel)
{
	pid_t pid = live_spawn(0);
	char v[32];

	cr_assert_gt(pid, 0);
	snprintf(v, sizeof(v), "%d\n", (int)pid);
	for (size_t c = 0; c < NCTRL; c++)
		cr_assert_eq(put(ctrls[c], rel, "cgroup.procs", v), 0, "%s %s", ctrls[c], rel);
	live_go(pid);
	return pid;
}

Test(rdt_pods_kqosd, annotated_pod_gets_its_group_and_loses_it_after_the_grace, .init = setup,
     .fini = teardown, .timeout = 90)
{
	char buf[512], fakefs[512], path[PATH_MAX];

	if (!live_require_root())
		return;
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	fakefs_path(fakefs, sizeof(fakefs));
	cr_assert_eq(access(fakefs, X_OK), 0, "%s not built (libfuse3 missing?)", fakefs);
	fs_pid = fakefs_start("skx2s", mnt_dir, NULL);
	snprintf(a_group, sizeof(a_group), "kqos-pod-%s", a_uid);
	a_pid = spawn_in(dirs[3]);
	b_pid = spawn_in(dirs[4]);
	write_pods(true);
	write_cfg();
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);

	cr_assert(wait_for(placed, 15000), "pods not placed in kqos-pod-<uid> and kqos-BE");
	snprintf(path, sizeof(path), "%s/schemata", a_group);
	slurp(path, buf, sizeof(buf));
	/* 50-100 % of 7ff is 7c0; cache 1 overridden with 0-50 %: 3f; MB 40 */
	cr_assert(strstr(buf, "L3:0=7c0;1=03f") || strstr(buf, "L3:0=7c0;1=3f"), "%s", buf);
	cr_assert(strstr(buf, "MB:0=40;1=40") || strstr(buf, "MB:0= 40;1= 40"), "%s", buf);
	slurp("kqos-BE/schemata", buf, sizeof(buf));
	cr_assert(strstr(buf, "L3:0=00f;1=00f") || strstr(buf, "L3:0=f;1=f"), "%s", buf);

	/* the pod leaves the list: its group stays within the 10 s grace, then goes */
	write_pods(false);
	live_sleep_ms(4000);
	cr_assert(exists(a_group), "removed within the grace");
	cr_assert(wait_for(a_gone, 20000), "pod group not removed after the grace");
	cr_assert(has_pid("tasks", a_pid), "the pod's process is back in the root group");

	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	cr_assert_not(exists("kqos-BE"));
}
