// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE resctrl fake serving trees it was given (resctrl_fake__new_dir), through syscalls
 * only, as kqosd meets it: an AMD-like CDP tree and a 20-bit tree with min_cbm_bits 2 and
 * cache ids 0 and 2. mkdir creates a group's files, schemata writes are checked with the rules
 * info/ gives (last_cmd_status), tasks move, CLOSID and RMID limits apply, and the source
 * directory is never written. Also scripts/fake-resctrl-fs.sh DIR|PROFILE and --stop.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <criterion/criterion.h>

#include "fakefs.h"

static char src[64], mnt[64];
static bool has_src, has_mnt;
static pid_t fs_pid = -1;
static bool by_script;

#define AMD_ROOT \
	"L3CODE:0=ffff;1=ffff\nL3DATA:0=ffff;1=ffff\n    MB:0=2048;1=2048\n  SMBA:0=2048;1=2048\n"

/* AMD-like: sparse 16-bit masks, min_cbm_bits 0, CDP (8 CLOSIDs), MB and SMBA in 1/8 GB/s. */
/* one file per line */
/* clang-format off */
static const char *const amd_cdp[] = {
	"info/L3CODE/cbm_mask", "ffff\n",
	"info/L3CODE/min_cbm_bits", "0\n",
	"info/L3CODE/num_closids", "8\n",
	"info/L3CODE/shareable_bits", "0\n",
	"info/L3CODE/sparse_masks", "1\n",
	"info/L3DATA/cbm_mask", "ffff\n",
	"info/L3DATA/min_cbm_bits", "0\n",
	"info/L3DATA/num_closids", "8\n",
	"info/L3DATA/shareable_bits", "0\n",
	"info/L3DATA/sparse_masks", "1\n",
	"info/MB/num_closids", "16\n",
	"info/MB/min_bandwidth", "0\n",
	"info/MB/bandwidth_gran", "1\n",
	"info/MB/delay_linear", "0\n",
	"info/SMBA/num_closids", "16\n",
	"info/SMBA/min_bandwidth", "0\n",
	"info/SMBA/bandwidth_gran", "1\n",
	"info/SMBA/delay_linear", "0\n",
	"info/L3_MON/num_rmids", "64\n",
	"info/L3_MON/mon_features", "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n",
	"info/last_cmd_status", "ok\n",
	"schemata", AMD_ROOT,
	"mon_data/mon_L3_00/llc_occupancy", "4096\n",
	"mon_data/mon_L3_01/llc_occupancy", "Unavailable\n",
	NULL, NULL,
};

/* Intel-like: 20-bit mask, min_cbm_bits 2, 4 CLOSIDs, 6 RMIDs, cache ids 0 and 2. */
static const char *const skx20[] = {
	"info/L3/cbm_mask", "fffff\n",
	"info/L3/min_cbm_bits", "2\n",
	"info/L3/num_closids", "4\n",
	"info/L3/shareable_bits", "0\n",
	"info/MB/num_closids", "4\n",
	"info/MB/min_bandwidth", "10\n",
	"info/MB/bandwidth_gran", "10\n",
	"info/MB/delay_linear", "1\n",
	"info/L3_MON/num_rmids", "6\n",
	"info/L3_MON/mon_features", "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n",
	"schemata", "L3:0=fffff;2=fffff\nMB:0=100;2=100\n",
	"cpus", "f\n",
	"cpus_list", "0-3\n",
	"mon_data/mon_L3_00/llc_occupancy", "1000\n",
	"mon_data/mon_L3_02/llc_occupancy", "2222\n",
	"mon_data/mon_L3_02/mbm_total_bytes", "777\n",
	NULL, NULL,
};
/* clang-format on */

static void setup(void)
{
	snprintf(src, sizeof(src), "/tmp/kqos-fakefs-src-XXXXXX");
	snprintf(mnt, sizeof(mnt), "/tmp/kqos-fakefs-mnt-XXXXXX");
	has_src = mkdtemp(src);
	has_mnt = mkdtemp(mnt);
	cr_assert(has_src && has_mnt);
}

static void teardown(void)
{
	char cmd[256];

	if (by_script) {
		snprintf(cmd, sizeof(cmd), "scripts/fake-resctrl-fs.sh --stop %s 2>/dev/null", mnt);
		if (system(cmd))
			fakefs_stop(-1, mnt);
	}
	fakefs_stop(fs_pid, mnt);
	fs_pid = -1;
	by_script = false;
	if (has_mnt)
		rmdir(mnt);
	if (has_src) {
		snprintf(cmd, sizeof(cmd), "rm -rf %s", src);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", src);
	}
	has_mnt = has_src = false;
}

static bool serve(const char *const *tree)
{
	char bin[PATH_MAX];

	if (geteuid() != 0) {
		cr_skip_test("needs root (FUSE mount)");
		return false;
	}
	fakefs_path(bin, sizeof(bin));
	cr_assert_eq(access(bin, X_OK), 0, "%s not built (libfuse3 missing?)", bin);
	cr_assert_eq(fakefs_tree_write(src, tree), 0);
	fs_pid = fakefs_start(src, mnt, NULL);
	cr_assert_gt(fs_pid, 0, "fake did not come up on %s", src);
	return true;
}

static const char *status(void)
{
	static char buf[512];

	fakefs_read(mnt, "info/last_cmd_status", buf, sizeof(buf));
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

/* A write the fake must reject with @err and, when @want is not NULL, that status. */
static void reject(const char *rel, const char *text, int err, const char *want)
{
	cr_assert_eq(fakefs_write(mnt, rel, text), err, "%s <- %s", rel, text);
	if (want)
		cr_assert_str_eq(status(), want, "%s <- %s", rel, text);
}

static void accept(const char *rel, const char *text)
{
	cr_assert_eq(fakefs_write(mnt, rel, text), 0, "%s <- %s: %s", rel, text, status());
	cr_assert_str_eq(status(), "ok");
}

static void want_file(const char *rel, const char *want)
{
	char buf[1024];

	cr_assert_geq(fakefs_read(mnt, rel, buf, sizeof(buf)), 0, "%s", rel);
	cr_assert_str_eq(buf, want, "%s", rel);
}

static bool has_pid(const char *rel, pid_t pid)
{
	return fakefs_has_pid(mnt, rel, pid);
}

static void mkgroup(const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	cr_assert_eq(mkdir(path, 0755), 0, "mkdir %s: %s (%s)", rel, strerror(errno), status());
}

static void mkgroup_fails(const char *rel, int err, const char *want)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", mnt, rel);
	cr_assert_eq(mkdir(path, 0755), -1, "mkdir %s", rel);
	cr_assert_eq(errno, err, "mkdir %s: %s", rel, strerror(errno));
	cr_assert_str_eq(status(), want);
}

Test(rdt_fakefs, amd_cdp_tree, .init = setup, .fini = teardown, .timeout = 60)
{
	static const char *const files[] = { "schemata",
					     "tasks",
					     "cpus",
					     "cpus_list",
					     "mode",
					     "size",
					     "mon_groups",
					     "mon_data/mon_L3_00/llc_occupancy",
					     "mon_data/mon_L3_01/mbm_local_bytes" };
	char buf[64], name[PATH_MAX];
	int i;

	if (!serve(amd_cdp))
		return;
	/* the root as given, its counters too (a state stays a state) */
	want_file("schemata", AMD_ROOT);
	want_file("mon_data/mon_L3_00/llc_occupancy", "4096\n");
	want_file("mon_data/mon_L3_01/llc_occupancy", "Unavailable\n");

	mkgroup("g1");
	for (i = 0; i < (int)(sizeof(files) / sizeof(files[0])); i++) {
		snprintf(name, sizeof(name), "g1/%s", files[i]);
		cr_assert(fakefs_exists(mnt, name), "mkdir made no %s", name);
	}
	/* a new group gets the whole mask and the maximum, on both CDP halves */
	want_file("g1/schemata", AMD_ROOT);
	snprintf(name, sizeof(name), "%s/g1", src);
	cr_assert_neq(access(name, F_OK), 0, "the source directory was written");

	reject("g1/schemata", "L3:0=f\n", -EINVAL, "Unknown or unsupported resource name 'L3'");
	reject("g1/schemata", "L3CODE:0=f", -EINVAL, "Unknown or unsupported resource name 'L3'");
	reject("g1/schemata", "L3CODE:0=1ffff\n", -EINVAL, "Mask out of range");
	reject("g1/schemata", "MB:0=4096\n", -EINVAL, "MB value 4096 out of range [0,2048]");
	reject("g1/schemata", "L3CODE:0=ff;0=f\n", -EINVAL, "Duplicate domain 0");
	/* sparse_masks 1 and min_cbm_bits 0: a gap and an empty mask are fine */
	accept("g1/schemata", "L3CODE:0=f0f;1=0\nL3DATA:1=ff00\nSMBA:1=512\n");
	want_file("g1/schemata", "L3CODE:0=f0f;1=0\nL3DATA:0=ffff;1=ff00\n    MB:0=2048;1=2048\n"
				 "  SMBA:0=2048;1=512\n");
	/* a failed write changes nothing */
	reject("g1/schemata", "L3DATA:0=f\nMB:1=9999\n", -EINVAL, NULL);
	cr_assert(strstr(status(), "out of range"), "%s", status());
	want_file("g1/schemata", "L3CODE:0=f0f;1=0\nL3DATA:0=ffff;1=ff00\n    MB:0=2048;1=2048\n"
				 "  SMBA:0=2048;1=512\n");

	/* a task leaves the root for the group */
	snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	accept("g1/tasks", buf);
	cr_assert(has_pid("g1/tasks", getpid()));
	cr_assert_not(has_pid("tasks", getpid()));
	reject("g1/tasks", "abc\n", -EINVAL, "Task list parsing error pid abc");

	/* CDP halves the CLOSIDs: L3CODE's 8 bound the groups, root included */
	for (i = 2; i < 8; i++) {
		snprintf(name, sizeof(name), "g%d", i);
		mkgroup(name);
	}
	mkgroup_fails("g8", ENOSPC, "Out of CLOSIDs");
	/* rmdir gives the task back to the root and the CLOSID back */
	snprintf(name, sizeof(name), "%s/g1", mnt);
	cr_assert_eq(rmdir(name), 0);
	cr_assert(has_pid("tasks", getpid()));
	mkgroup("g8");
}

Test(rdt_fakefs, skx20_noncontiguous_ids_by_script, .init = setup, .fini = teardown, .timeout = 60)
{
	char cmd[256], path[PATH_MAX];

	if (geteuid() != 0) {
		cr_skip_test("needs root (FUSE mount)");
		return;
	}
	cr_assert_eq(fakefs_tree_write(src, skx20), 0);
	snprintf(cmd, sizeof(cmd), "scripts/fake-resctrl-fs.sh %s %s", src, mnt);
	by_script = true;
	cr_assert_eq(system(cmd), 0, "%s", cmd);

	want_file("schemata", "L3:0=fffff;2=fffff\nMB:0=100;2=100\n");
	want_file("cpus_list", "0-3\n");
	want_file("mon_data/mon_L3_02/llc_occupancy", "2222\n");
	want_file("mon_data/mon_L3_02/mbm_total_bytes", "777\n");
	cr_assert_not(fakefs_exists(mnt, "mon_data/mon_L3_01"));

	mkgroup("g1");
	want_file("g1/schemata", "L3:0=fffff;2=fffff\nMB:0=100;2=100\n");
	cr_assert(fakefs_exists(mnt, "g1/mon_data/mon_L3_02/llc_occupancy"));
	cr_assert_not(fakefs_exists(mnt, "g1/mon_data/mon_L3_01"));
	reject("g1/schemata", "L3:2=1\n", -EINVAL, "Need at least 2 bits in the mask");
	reject("g1/schemata", "L3:2=f0f\n", -EINVAL, "The mask f0f has non-consecutive 1-bits");
	reject("g1/schemata", "L3:0=100000\n", -EINVAL, "Mask out of range");
	/* cache id 1 does not exist here: EINVAL, and the kernel leaves no reason */
	reject("g1/schemata", "L3:1=3\n", -EINVAL, "ok");
	reject("g1/schemata", "MB:0=5\n", -EINVAL, "MB value 5 out of range [10,100]");
	accept("g1/schemata", "L3:0=3;2=ffc00\nMB:2=25\n");
	want_file("g1/schemata", "L3:0=3;2=ffc00\nMB:0=100;2=30\n");

	/* 4 CLOSIDs, root included; then 6 RMIDs run out on monitoring groups */
	mkgroup("g2");
	mkgroup("g3");
	mkgroup_fails("g4", ENOSPC, "Out of CLOSIDs");
	mkgroup("g1/mon_groups/m1");
	mkgroup("g1/mon_groups/m2");
	cr_assert(fakefs_exists(mnt, "g1/mon_groups/m1/mon_data/mon_L3_02/llc_occupancy"));
	mkgroup_fails("g1/mon_groups/m3", ENOSPC, "Out of RMIDs");
	/* a freed RMID sits in limbo: EBUSY while nothing else is free */
	snprintf(path, sizeof(path), "%s/g1/mon_groups/m2", mnt);
	cr_assert_eq(rmdir(path), 0);
	mkgroup_fails("g1/mon_groups/m3", EBUSY, "Out of RMIDs");

	snprintf(cmd, sizeof(cmd), "scripts/fake-resctrl-fs.sh --stop %s", mnt);
	cr_assert_eq(system(cmd), 0);
	by_script = false;
	cr_assert_not(fakefs_exists(mnt, "info"), "still mounted after --stop");
}

/* A profile name still works: the fake builds that tree. */
Test(rdt_fakefs, profile_by_script, .init = setup, .fini = teardown, .timeout = 60)
{
	char cmd[256];

	if (geteuid() != 0) {
		cr_skip_test("needs root (FUSE mount)");
		return;
	}
	snprintf(cmd, sizeof(cmd), "scripts/fake-resctrl-fs.sh cdp %s", mnt);
	by_script = true;
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	want_file("schemata", "L3CODE:0=7ff;1=7ff\nL3DATA:0=7ff;1=7ff\n    MB:0=100;1=100\n");
	mkgroup("g1");
	reject("g1/schemata", "L3DATA:0=5\n", -EINVAL, "The mask 5 has non-consecutive 1-bits");
}
