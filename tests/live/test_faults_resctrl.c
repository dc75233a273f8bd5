// SPDX-License-Identifier: GPL-2.0
/*
 * resctrl faults against kqosd, unmodified, on the FUSE fake (no RDT here): the fake's
 * --faults file makes mkdir, schemata or tasks writes fail with EBUSY, ENOSPC or EINVAL (with
 * a last_cmd_status). kqosd must log each once with errno and status, count it, keep running,
 * and get there once the fault clears; SIGTERM then leaves the tree as it was before it
 * started (the root's and a foreign group's schemata, the group list). When the fake vanishes
 * under it, kqosd says so once, keeps monitoring cgroups, and stops cleanly.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "daemon.h"
#include "fakefs.h"
#include "live.h"

#define WAIT_MS 20000 /* generous: others build and test on this machine */

static const char *const ctrls[] = { "cpu", "cpuacct" };
static char kqosd[512], cfg[DAEMON_TMP_LEN], errlog[DAEMON_TMP_LEN], state[DAEMON_TMP_LEN], mnt[64],
	prom[64], faults[64];
static char *state_dir, *mnt_dir, *prom_dir;
static pid_t daemon_pid = -1, be_pid = -1, fs_pid = -1;
static bool made;

/* What kqosd must leave as it found it. */
static char root_before[512], foreign_before[512], list_before[1024];

static void setup(void)
{
	if (!daemon_prepare(kqosd, sizeof(kqosd)))
		return;
	state_dir = daemon_files_make(cfg, errlog, state);
	daemon_tmp_file(faults, sizeof(faults), "kqos-faults");
	mnt_dir = daemon_tmp_dir(mnt, sizeof(mnt), "kqos-resctrl-fs");
	prom_dir = daemon_tmp_dir(prom, sizeof(prom), "kqos-prom");
	for (size_t i = 0; i < 2; i++)
		cr_assert_eq(live_cg_create(ctrls[i], "rdtflt"), 0);
	made = true;
}

static void teardown(void)
{
	char hits_path[80];

	daemon_kill(&daemon_pid);
	live_kill(be_pid);
	be_pid = -1;
	for (size_t i = 0; made && i < 2; i++)
		live_cg_destroy(ctrls[i], "rdtflt");
	made = false;
	if (mnt_dir)
		fakefs_stop(fs_pid, mnt_dir);
	fs_pid = -1;
	if (mnt_dir)
		rmdir(mnt_dir);
	if (prom_dir) {
		daemon_rm_in(prom_dir, "kqos.prom");
		rmdir(prom_dir);
	}
	unlink(faults);
	snprintf(hits_path, sizeof(hits_path), "%s.hits", faults);
	unlink(hits_path);
	daemon_files_remove(cfg, errlog, &state_dir);
}

static void set_faults(const char *rules)
{
	char tmp[80];
	FILE *f;

	/* a new inode each time: the fake re-reads on any change */
	snprintf(tmp, sizeof(tmp), "%s.new", faults);
	f = fopen(tmp, "w");
	cr_assert_not_null(f);
	fputs(rules, f);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, faults), 0);
}

/* How often the fake failed @op so far (its FILE.hits). */
static unsigned long hits(const char *op)
{
	char path[80], name[16];
	unsigned long n, total = 0;
	long left;
	FILE *f;

	snprintf(path, sizeof(path), "%s.hits", faults);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fscanf(f, "%15s %lu %ld", name, &n, &left) == 3)
		if (!strcmp(name, op))
			total = n;
	fclose(f);
	return total;
}

static bool exists(const char *rel)
{
	return fakefs_exists(mnt_dir, rel);
}

static void slurp(const char *rel, char *buf, size_t n)
{
	fakefs_read(mnt_dir, rel, buf, n);
}

static bool has_pid(const char *rel, pid_t pid)
{
	return fakefs_has_pid(mnt_dir, rel, pid);
}

/* The root's entries, sorted, one per line: the group list. */
/* The root's entries; @no_kqos leaves out kqos's own groups (kqos-*), which a stop removes. */
static void group_list(char *buf, size_t len, bool no_kqos)
{
	struct dirent **de;
	size_t off = 0;
	int n;

	buf[0] = '\0';
	n = scandir(mnt_dir, &de, NULL, alphasort);
	for (int i = 0; i < n; i++) {
		if (off < len && !(no_kqos && !strncmp(de[i]->d_name, "kqos-", 5)))
			off += snprintf(buf + off, len - off, "%s\n", de[i]->d_name);
		free(de[i]);
	}
	if (n >= 0)
		free(de);
}

/* The fake with a group kqos did not create, then kqosd managing a real BE process. */
static void start_all(const char *initial_faults)
{
	FILE *f;
	char path[PATH_MAX];

	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	set_faults("");
	fs_pid = fakefs_start("skx2s", mnt_dir, faults);
	cr_assert_gt(fs_pid, 0, "the FUSE fake did not come up (libfuse3, /dev/fuse?)");
	snprintf(path, sizeof(path), "%s/LS", mnt_dir);
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_eq(fakefs_write(mnt_dir, "LS/schemata", "L3:0=3;1=3\nMB:0=50\n"), 0);
	slurp("schemata", root_before, sizeof(root_before));
	slurp("LS/schemata", foreign_before, sizeof(foreign_before));
	group_list(list_before, sizeof(list_before), false);
	set_faults(initial_faults);

	be_pid = live_spawn(0);
	cr_assert_gt(be_pid, 0);
	cr_assert_eq(live_cg_attach("cpu", "rdtflt", be_pid), 0);
	cr_assert_eq(live_cg_attach("cpuacct", "rdtflt", be_pid), 0);
	live_go(be_pid);

	f = fopen(cfg, "w");
	cr_assert_not_null(f);
	fprintf(f,
		"{\"interval\": \"500ms\", \"stateDir\": \"%s\",\n"
		" \"export\": {\"socket\": \"\", \"textfileDir\": \"%s\","
		" \"textfileInterval\": \"500ms\"},\n"
		" \"resctrl\": {\"root\": \"%s\", \"interval\": \"500ms\"},\n"
		" \"pods\": {\"source\": \"static\", \"groups\": [\n"
		"   {\"name\": \"be\", \"cgroup\": \"kqos-test-%d-rdtflt\", \"qosClass\": \"BE\"}]},\n"
		" \"nodeSLO\": {\"resourceQOSStrategy\": {"
		"\"beClass\": {\"resctrlQOS\": {\"enable\": true}},"
		"\"lsClass\": {\"resctrlQOS\": {\"enable\": true, \"catRangeEndPercent\": 50,"
		" \"mbaPercent\": 60}}}}}\n",
		state_dir, prom_dir, mnt_dir, (int)getpid());
	fclose(f);
	daemon_pid = daemon_start(kqosd, cfg, errlog);
	cr_assert_gt(daemon_pid, 0);
}

static bool alive(void)
{
	return daemon_pid > 0 && waitpid(daemon_pid, NULL, WNOHANG) == 0;
}

/* A series' value in kqosd's textfile, or -1. */
static double prom_value(const char *series)
{
	char path[PATH_MAX], line[1024];
	double v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "%s/kqos.prom", prom_dir);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, series, strlen(series)) && line[strlen(series)] == ' ')
			v = strtod(line + strlen(series) + 1, NULL);
	fclose(f);
	return v;
}

static bool wait_hits(const char *op, unsigned long n)
{
	for (int t = 0; t < WAIT_MS && hits(op) < n; t += 50)
		live_sleep_ms(50);
	return hits(op) >= n;
}

static bool wait_for(bool (*ok)(void), int ms)
{
	return live_wait_for(ok, ms, 50);
}

static bool be_placed(void)
{
	return exists("kqos-BE") && has_pid("kqos-BE/tasks", be_pid);
}

static bool be_schemata_ok(void)
{
	char buf[256];

	slurp("kqos-BE/schemata", buf, sizeof(buf));
	return strstr(buf, "L3:0=f;1=f");
}

static bool ls_made(void)
{
	return exists("kqos-LS");
}

static bool errors_counted(void)
{
	return prom_value("kqos_resctrl_errors_total") >= 3;
}

/* SIGTERM: kqos' groups gone, the rest byte-identical, the BE process back in the root. */
static void stop_and_check_restored(void)
{
	char buf[1024];

	cr_assert_eq(daemon_stop(daemon_pid), 0, "kqosd did not exit cleanly");
	daemon_pid = -1;
	slurp("schemata", buf, sizeof(buf));
	cr_assert_str_eq(buf, root_before, "root schemata changed");
	slurp("LS/schemata", buf, sizeof(buf));
	cr_assert_str_eq(buf, foreign_before, "a foreign group's schemata changed");
	group_list(buf, sizeof(buf), false);
	cr_assert_str_eq(buf, list_before, "the group list changed");
	cr_assert(has_pid("tasks", be_pid), "BE process not back in the root group");
}

/*
 * @rules fail @op until cleared: kqosd retries (the fake sees >= 3 tries), logs one line
 * naming @op with @errstr and the status, counts each, lives; then it gets there.
 */
static void fault_then_recover(const char *rules, const char *op, const char *errstr,
			       const char *status)
{
	char want_status[160], want_op[48];

	start_all(rules);
	cr_assert(wait_hits(op, 3), "kqosd did not retry the failing %s (hits %lu)", op, hits(op));
	cr_assert(alive(), "kqosd died on a failing %s", op);
	cr_assert(wait_for(errors_counted, WAIT_MS), "errors not counted: %f",
		  prom_value("kqos_resctrl_errors_total"));
	/* one line per (group, op, errno): kqos-LS fails the same way for mkdir and schemata */
	snprintf(want_op, sizeof(want_op), "group=kqos-BE op=%s", op);
	snprintf(want_status, sizeof(want_status), "last_cmd_status=\"%s\"", status);
	cr_assert_eq(daemon_log_count(errlog, "resctrl write failed", want_op), 1,
		     "one line per failure while it lasts");
	cr_assert_eq(daemon_log_count(errlog, want_op, errstr), 1, "no %s in the log", errstr);
	cr_assert_eq(daemon_log_count(errlog, want_op, want_status), 1, "no %s in the log",
		     want_status);

	set_faults("");
	cr_assert(wait_for(be_placed, WAIT_MS), "BE not placed after the fault cleared");
	cr_assert(wait_for(be_schemata_ok, WAIT_MS), "BE schemata not written after the fault");
	/* the file may change between the two mkdirs of a pass: LS may come a pass later */
	cr_assert(wait_for(ls_made, WAIT_MS), "kqos-LS not made after the fault");
	cr_assert_geq(daemon_log_wait(errlog, "resctrl write works again", want_op, WAIT_MS), 1,
		      "the recovery is not in the log");
	cr_assert(alive());
	stop_and_check_restored();
}

Test(faults_resctrl, mkdir_ebusy, .init = setup, .fini = teardown, .timeout = 120)
{
	if (!live_require_root())
		return;
	fault_then_recover("mkdir EBUSY -1 Device busy\n", "mkdir", "err=-16", "Device busy");
}

Test(faults_resctrl, mkdir_enospc, .init = setup, .fini = teardown, .timeout = 120)
{
	if (!live_require_root())
		return;
	fault_then_recover("mkdir ENOSPC -1 Out of CLOSIDs\n", "mkdir", "err=-28",
			   "Out of CLOSIDs");
}

Test(faults_resctrl, schemata_einval_with_status, .init = setup, .fini = teardown, .timeout = 120)
{
	if (!live_require_root())
		return;
	fault_then_recover("schemata EINVAL -1 Mask out of range\n", "schemata", "err=-22",
			   "Mask out of range");
}

Test(faults_resctrl, tasks_ebusy, .init = setup, .fini = teardown, .timeout = 120)
{
	if (!live_require_root())
		return;
	fault_then_recover("tasks EBUSY -1\n", "tasks", "err=-16", "ok");
}

/* A fault that runs out by itself: the next writes succeed without any change from outside. */
Test(faults_resctrl, schemata_enospc_twice, .init = setup, .fini = teardown, .timeout = 120)
{
	if (!live_require_root())
		return;
	start_all("schemata ENOSPC 2\n");
	cr_assert(wait_for(be_schemata_ok, WAIT_MS), "BE schemata not written after 2 failures");
	cr_assert_eq(hits("schemata"), 2);
	cr_assert_geq(daemon_log_count(errlog, "resctrl write failed", "err=-28"), 1);
	cr_assert(wait_for(be_placed, WAIT_MS));
	stop_and_check_restored();
}

static struct timespec prom_mtime(void)
{
	char path[PATH_MAX];
	struct stat st = { 0 };

	snprintf(path, sizeof(path), "%s/kqos.prom", prom_dir);
	stat(path, &st);
	return st.st_mtim;
}

/* The textfile is rewritten after @since. */
static bool prom_rewritten(struct timespec since)
{
	for (int t = 0; t < WAIT_MS; t += 50) {
		struct timespec now = prom_mtime();

		if (now.tv_sec != since.tv_sec || now.tv_nsec != since.tv_nsec)
			return true;
		live_sleep_ms(50);
	}
	return false;
}

/* The fake dies and is unmounted under a running kqosd. */
Test(faults_resctrl, fake_vanishes, .init = setup, .fini = teardown, .timeout = 120)
{
	int status;

	if (!live_require_root())
		return;
	start_all("");
	cr_assert(wait_for(be_placed, WAIT_MS), "BE not placed");
	kill(fs_pid, SIGKILL);
	waitpid(fs_pid, NULL, 0);
	fs_pid = -1;
	fakefs_stop(-1, mnt_dir);
	cr_assert_neq(daemon_log_wait(errlog, "resctrl unreachable", NULL, WAIT_MS), 0,
		      "kqosd did not say resctrl went away");
	cr_assert_neq(daemon_log_wait(errlog, "resctrl monitoring paused", NULL, WAIT_MS), 0,
		      "the monitor did not say it stopped");
	/* it keeps monitoring: the textfile is rewritten */
	cr_assert(prom_rewritten(prom_mtime()), "textfile no longer written");
	cr_assert_gt(prom_value("kqos_resctrl_errors_total"), 0, "the lost passes not counted");
	cr_assert(alive(), "kqosd died when resctrl vanished");
	live_sleep_ms(2000);
	cr_assert_eq(daemon_log_count(errlog, "resctrl unreachable", NULL), 1, "said once");
	cr_assert(alive());
	kill(daemon_pid, SIGTERM);
	cr_assert_eq(waitpid(daemon_pid, &status, 0), daemon_pid);
	daemon_pid = -1;
	cr_assert(WIFEXITED(status), "kqosd killed by signal %d", WTERMSIG(status));
}

/* The fake dies, and a new one is mounted at the same place: kqosd goes on on it. */
Test(faults_resctrl, fake_vanishes_and_comes_back, .init = setup, .fini = teardown, .timeout = 120)
{
	char buf[1024];

	if (!live_require_root())
		return;
	start_all("");
	cr_assert(wait_for(be_placed, WAIT_MS), "BE not placed");
	kill(fs_pid, SIGKILL);
	waitpid(fs_pid, NULL, 0);
	fs_pid = -1;
	fakefs_stop(-1, mnt_dir);
	cr_assert_neq(daemon_log_wait(errlog, "resctrl unreachable", NULL, WAIT_MS), 0);
	fs_pid = fakefs_start("skx2s", mnt_dir, faults);
	cr_assert_gt(fs_pid, 0);
	slurp("schemata", root_before, sizeof(root_before));
	/* kqosd may already be at work on the new mount: what it makes is not the reference */
	group_list(list_before, sizeof(list_before), true);
	cr_assert_neq(daemon_log_wait(errlog, "resctrl mounted again", NULL, WAIT_MS), 0,
		      "the new mount was not taken up");
	cr_assert(wait_for(be_placed, WAIT_MS), "BE not placed in the new mount's kqos-BE");
	cr_assert(wait_for(be_schemata_ok, WAIT_MS));
	cr_assert_neq(daemon_log_wait(errlog, "resctrl monitoring works again", NULL, WAIT_MS), 0,
		      "monitoring stayed on the dead mount");
	cr_assert(alive());
	/* the first mount's foreign group went with it: the new mount's tree is the reference */
	cr_assert_eq(daemon_stop(daemon_pid), 0);
	daemon_pid = -1;
	slurp("schemata", buf, sizeof(buf));
	cr_assert_str_eq(buf, root_before);
	group_list(buf, sizeof(buf), false);
	cr_assert_str_eq(buf, list_before);
	cr_assert(has_pid("tasks", be_pid));
}
