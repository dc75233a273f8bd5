// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "fake_cgroup.h"

#define POD "kubepods/burstable/pod0f1e2d3c-aaaa-bbbb-cccc-0123456789ab"

static struct fake_cg *fc;
static struct cgroupfs *cg;

static void open_layout(enum fake_cg_layout layout)
{
	cr_assert_eq(fake_cg__new(layout, &fc), 0);
	cr_assert_eq(fake_cg__mkcg(fc, POD), 0);
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_AUTO, &cg), 0);
}

static void setup_v2(void)
{
	open_layout(FAKE_CG_V2);
}

static void setup_v1(void)
{
	open_layout(FAKE_CG_V1);
}

static void setup_v1_split(void)
{
	open_layout(FAKE_CG_V1_SPLIT);
}

static void teardown(void)
{
	cgroupfs__free(cg);
	cg = NULL;
	fake_cg__free(fc);
	fc = NULL;
}

static void put(const char *ctrl, const char *file, const char *content)
{
	cr_assert_eq(fake_cg__write(fc, ctrl, POD, file, content), 0);
}

static const char *get(const char *ctrl, const char *file)
{
	static char buf[4096];

	cr_assert_eq(fake_cg__read(fc, ctrl, POD, file, buf, sizeof(buf)), 0);
	return buf;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Old mtime so that a skipped write is visible as an unchanged stamp. */
static void age(const char *ctrl, const char *file)
{
	struct timespec ts[2] = { { 1000, 0 }, { 1000, 0 } };
	char path[PATH_MAX];

	cr_assert_eq(fake_cg__path(fc, ctrl, POD, file, path, sizeof(path)), 0);
	cr_assert_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static time_t mtime(const char *ctrl, const char *file)
{
	char path[PATH_MAX];
	struct stat st;

	cr_assert_eq(fake_cg__path(fc, ctrl, POD, file, path, sizeof(path)), 0);
	cr_assert_eq(stat(path, &st), 0);
	return st.st_mtim.tv_sec;
}

/* ---- detection ---- */

Test(cgroupfs_detect, fake_layouts)
{
	static const struct {
		enum fake_cg_layout layout;
		enum cgfs_mode mode;
	} cases[] = {
		{ FAKE_CG_V2, CGFS_MODE_V2 },
		{ FAKE_CG_V1, CGFS_MODE_V1 },
		{ FAKE_CG_V1_SPLIT, CGFS_MODE_V1 },
		{ FAKE_CG_HYBRID, CGFS_MODE_HYBRID },
	};
	char want[PATH_MAX], a[PATH_MAX], b[PATH_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_eq(fake_cg__new(cases[i].layout, &fc), 0);
		cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_AUTO, &cg), 0);
		cr_assert_eq(cgroupfs__mode(cg), cases[i].mode, "layout %d", cases[i].layout);
		cr_assert_eq(cgroupfs__is_v2(cg), cases[i].mode == CGFS_MODE_V2);
		fake_cg__path(fc, "cpu", "", NULL, want, sizeof(want));
		/* "cpu" may be a symlink to "cpu,cpuacct": the same mount either way. */
		cr_assert_not_null(realpath(cgroupfs__walk_root(cg), a));
		cr_assert_not_null(realpath(want, b));
		cr_assert_str_eq(a, b);
		if (cases[i].mode == CGFS_MODE_V1)
			cr_assert_null(cgroupfs__unified_root(cg));
		else
			cr_assert_not_null(cgroupfs__unified_root(cg));
		teardown();
	}
}

Test(cgroupfs_detect, explicit_mode_overrides_detection)
{
	cr_assert_eq(fake_cg__new(FAKE_CG_V1, &fc), 0);
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_V2, &cg), 0);
	cr_assert_eq(cgroupfs__mode(cg), CGFS_MODE_V2);
	cr_assert_str_eq(cgroupfs__knob_file(cg, CG_KNOB_CPU_SHARES), "cpu.weight");
	teardown();
}

Test(cgroupfs_detect, missing_or_empty_root)
{
	char dir[] = "/tmp/kqos-empty-XXXXXX";

	cr_assert_eq(cgroupfs__open("/nonexistent/kqos", CGFS_MODE_AUTO, &cg), -ENOENT);
	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(cgroupfs__open(dir, CGFS_MODE_AUTO, &cg), -EOPNOTSUPP);
	cr_assert_eq(cgroupfs__open(dir, CGFS_MODE_V1, &cg), -EOPNOTSUPP);
	rmdir(dir);
}

Test(cgroupfs_detect, this_host)
{
	struct cg_cpu_weight w;

	cr_assert_eq(cgroupfs__open(NULL, CGFS_MODE_AUTO, &cg), 0);
	cr_assert_neq(cgroupfs__mode(cg), CGFS_MODE_AUTO);
	cr_assert_not_null(cgroupfs__walk_root(cg));
	/* The root cgroup always has a weight file on any hierarchy with the cpu controller. */
	if (cgroupfs__mode(cg) != CGFS_MODE_V2) {
		struct cg_cpu_stat st;
		struct cg_cpu_max m;

		cr_assert_eq(cgroupfs__read_cpu_weight(cg, "/", &w), 0);
		cr_assert_eq(cgroupfs__read_cpu_stat(cg, "/", &st), 0, "%s",
			     cgroupfs__last_path(cg));
		cr_assert_gt(st.usage_ns, 0);
		cr_assert_eq(cgroupfs__read_cpu_max(cg, "/", &m), 0);
		cr_assert_eq(m.quota_us, CG_QUOTA_UNLIMITED);
	}
	cgroupfs__free(cg);
}

/* Real kernel files: only where this host mounts v1 controllers and we may create cgroups. */
Test(cgroupfs_detect, this_host_v1_writes)
{
	static const enum cg_ctrl ctrls[] = { CG_CTRL_CPU, CG_CTRL_CPUACCT, CG_CTRL_CPUSET,
					      CG_CTRL_MEMORY };
	struct cg_cpu_max m = { .quota_us = 50000, .period_us = 100000 }, got;
	char rel[64], dir[PATH_MAX];
	struct cg_cpu_weight w;
	struct cg_stat_reader *r;
	struct cg_cpu_stat st;
	struct cpumask cpus;
	uint64_t mem, n;

	if (geteuid() != 0)
		cr_skip_test("needs root");
	cr_assert_eq(cgroupfs__open(NULL, CGFS_MODE_AUTO, &cg), 0);
	if (cgroupfs__mode(cg) == CGFS_MODE_V2) {
		cgroupfs__free(cg);
		cr_skip_test("v2 host: covered by the fake trees");
	}
	snprintf(rel, sizeof(rel), "kqos-unit-%d", (int)getpid());
	for (size_t i = 0; i < 4; i++) {
		cr_assert_eq(cgroupfs__dir(cg, ctrls[i], rel, dir, sizeof(dir)), 0);
		cr_assert(mkdir(dir, 0755) == 0 || errno == EEXIST, "mkdir %s", dir);
	}
	cr_expect_eq(cgroupfs__write_cpu_max(cg, rel, &m), 1, "%s", cgroupfs__last_path(cg));
	cr_expect_eq(cgroupfs__read_cpu_max(cg, rel, &got), 0);
	cr_expect_eq(got.quota_us, 50000);
	n = cgroupfs__nr_writes(cg);
	cr_expect_eq(cgroupfs__write_cpu_max(cg, rel, &m), 0);
	cr_expect_eq(cgroupfs__nr_writes(cg), n);
	cr_expect_eq(cgroupfs__write_cpu_shares(cg, rel, 512, CG_WEIGHT_LOG), 1);
	cr_expect_eq(cgroupfs__read_cpu_weight(cg, rel, &w), 0);
	cr_expect_eq(w.value, 512);
	cpulist_parse("0", &cpus);
	cr_expect_eq(cgroupfs__write_cpuset(cg, rel, &cpus), 1, "%s", cgroupfs__last_path(cg));
	cr_expect_eq(cgroupfs__write_cpuset(cg, rel, &cpus), 0);
	cr_expect_eq(cgroupfs__read_memory_max(cg, rel, &mem), 0);
	cr_expect_eq(mem, CG_MEMORY_UNLIMITED);
	cr_expect_eq(cgroupfs__write_memory_max(cg, rel, 1ULL << 30), 1);
	cr_expect_eq(cgroupfs__write_memory_max(cg, rel, CG_MEMORY_UNLIMITED), 1);
	cr_expect_eq(cgroupfs__read_memory_max(cg, rel, &mem), 0);
	cr_expect_eq(mem, CG_MEMORY_UNLIMITED);
	cr_expect_eq(cg_stat_reader__open(cg, rel, &r), 0);
	cr_expect_eq(cg_stat_reader__read(r, &st), 0);
	cr_expect_eq(cg_stat_reader__read(r, &st), 0);
	cg_stat_reader__free(r);
	for (size_t i = 0; i < 4; i++) {
		cgroupfs__dir(cg, ctrls[i], rel, dir, sizeof(dir));
		cr_expect_eq(rmdir(dir), 0, "rmdir %s", dir);
	}
	cgroupfs__free(cg);
}

/* ---- paths ---- */

Test(cgroupfs_paths, v1_picks_controller_dirs, .init = setup_v1, .fini = teardown)
{
	char path[PATH_MAX], want[PATH_MAX];

	cr_assert_eq(cgroupfs__knob_path(cg, CG_KNOB_CPU_USAGE, POD, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/cpuacct/%s/cpuacct.usage", fake_cg__root(fc), POD);
	cr_assert_str_eq(path, want);
	cr_assert_eq(cgroupfs__knob_path(cg, CG_KNOB_MEMORY_MAX, "/" POD "/", path, sizeof(path)),
		     0);
	snprintf(want, sizeof(want), "%s/memory/%s/memory.limit_in_bytes", fake_cg__root(fc), POD);
	cr_assert_str_eq(path, want);
	cr_assert_eq(cgroupfs__knob_path(cg, CG_KNOB_THREADS, "", path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/cpu/tasks", fake_cg__root(fc));
	cr_assert_str_eq(path, want);
}

Test(cgroupfs_paths, v1_combined_dir_only, .fini = teardown)
{
	char path[PATH_MAX], want[PATH_MAX], link[PATH_MAX];

	cr_assert_eq(fake_cg__new(FAKE_CG_V1, &fc), 0);
	snprintf(link, sizeof(link), "%s/cpu", fake_cg__root(fc));
	unlink(link);
	snprintf(link, sizeof(link), "%s/cpuacct", fake_cg__root(fc));
	unlink(link);
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_AUTO, &cg), 0);
	cr_assert_eq(cgroupfs__knob_path(cg, CG_KNOB_CPU_USAGE, "a", path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/cpu,cpuacct/a/cpuacct.usage", fake_cg__root(fc));
	cr_assert_str_eq(path, want);
}

Test(cgroupfs_paths, v2_files_under_root, .init = setup_v2, .fini = teardown)
{
	char path[PATH_MAX], want[PATH_MAX];

	cr_assert_eq(cgroupfs__knob_path(cg, CG_KNOB_CPUSET_EFFECTIVE, POD, path, sizeof(path)), 0);
	snprintf(want, sizeof(want), "%s/%s/cpuset.cpus.effective", fake_cg__root(fc), POD);
	cr_assert_str_eq(path, want);
}

Test(cgroupfs_paths, unsafe_paths_rejected, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_max m;

	cr_assert_eq(cgroupfs__read_cpu_max(cg, "../etc", &m), -EINVAL);
	cr_assert_eq(cgroupfs__read_cpu_max(cg, "kubepods/../../x", &m), -EINVAL);
	cr_assert_eq(cgroupfs__read_cpu_max(cg, "kubepods/./x", &m), -EINVAL);
	cr_assert_eq(cgroupfs__read_cpu_max(cg, "kubepods//x", &m), -EINVAL);
}

Test(cgroupfs_paths, missing_controller_is_eopnotsupp, .fini = teardown)
{
	char path[PATH_MAX];
	uint64_t v;

	cr_assert_eq(fake_cg__new(FAKE_CG_V1_SPLIT, &fc), 0);
	cr_assert_eq(fake_cg__path(fc, "memory", "", NULL, path, sizeof(path)), 0);
	cr_assert_eq(fake_rmtree(path), 0);
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_AUTO, &cg), 0);
	cr_assert_null(cgroupfs__ctrl_root(cg, CG_CTRL_MEMORY));
	cr_assert_eq(cgroupfs__read_memory_max(cg, "", &v), -EOPNOTSUPP);
}

struct path_case {
	char rel[48];
	bool safe;
};

ParameterizedTestParameters(cgpath, is_safe)
{
	static struct path_case cases[] = {
		{ "", true },
		{ "/", true },
		{ "kubepods", true },
		{ "/kubepods/burstable/pod1/", true },
		{ "kubepods.slice/kubepods-pod1_2.slice", true },
		{ "..", false },
		{ "../x", false },
		{ "a/..", false },
		{ "a/../b", false },
		{ ".", false },
		{ "a/./b", false },
		{ "a//b", false },
		{ "//a", false },
		{ "a\nb", false },
		{ "a/\x7f", false },
		{ "..a/b..", true },
	};
	return cr_make_param_array(struct path_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct path_case *c, cgpath, is_safe)
{
	cr_assert_eq(cgpath_is_safe(c->rel), c->safe, "\"%s\"", c->rel);
}

Test(cgpath, null_and_too_long)
{
	static char big[PATH_MAX + 1];

	cr_assert_not(cgpath_is_safe(NULL));
	memset(big, 'a', PATH_MAX);
	cr_assert_not(cgpath_is_safe(big));
}

/* ---- reads of realistic contents ---- */

Test(cgroupfs_v2, reads_defaults, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_weight w;
	struct cg_cpu_max m;
	struct cpumask cpus;
	uint64_t mem;
	bool idle;

	cr_assert_eq(cgroupfs__read_cpu_max(cg, POD, &m), 0);
	cr_assert_eq(m.quota_us, CG_QUOTA_UNLIMITED);
	cr_assert_eq(m.period_us, 100000);
	cr_assert_eq(cgroupfs__read_cpu_weight(cg, POD, &w), 0);
	cr_assert(w.is_weight);
	cr_assert_eq(w.value, 100);
	cr_assert_eq(cgroupfs__read_cpu_idle(cg, POD, &idle), 0);
	cr_assert_not(idle);
	cr_assert_eq(cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_CPUS, POD, &cpus), 0);
	cr_assert(cpumask_empty(&cpus));
	cr_assert_eq(cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_EFFECTIVE, POD, &cpus), 0);
	cr_assert_eq(cpumask_count(&cpus), 4);
	cr_assert_eq(cgroupfs__read_memory_max(cg, POD, &mem), 0);
	cr_assert_eq(mem, CG_MEMORY_UNLIMITED);
}

Test(cgroupfs_v2, cpu_stat_normalised_to_ns, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_stat st;

	put("cpu", "cpu.stat",
	    "usage_usec 123456\nuser_usec 100000\nsystem_usec 23456\nnr_periods 50\n"
	    "nr_throttled 7\nthrottled_usec 789\nnr_bursts 0\nburst_usec 0\n");
	cr_assert_eq(cgroupfs__read_cpu_stat(cg, POD, &st), 0);
	cr_assert_eq(st.usage_ns, 123456000ULL);
	cr_assert_eq(st.nr_periods, 50);
	cr_assert_eq(st.nr_throttled, 7);
	cr_assert_eq(st.throttled_ns, 789000ULL);
	/* Without the cpu controller only the usage lines exist. */
	put("cpu", "cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\n");
	cr_assert_eq(cgroupfs__read_cpu_stat(cg, POD, &st), 0);
	cr_assert_eq(st.usage_ns, 5000);
	cr_assert_eq(st.nr_throttled, 0);
}

Test(cgroupfs_v1, reads_defaults, .init = setup_v1, .fini = teardown)
{
	struct cg_cpu_weight w;
	struct cg_cpu_max m;
	struct cpumask cpus;
	uint64_t mem;

	cr_assert_eq(cgroupfs__read_cpu_max(cg, POD, &m), 0);
	cr_assert_eq(m.quota_us, CG_QUOTA_UNLIMITED);
	cr_assert_eq(m.period_us, 100000);
	cr_assert_eq(cgroupfs__read_cpu_weight(cg, POD, &w), 0);
	cr_assert_not(w.is_weight);
	cr_assert_eq(w.value, 1024);
	cr_assert_eq(cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_EFFECTIVE, POD, &cpus), 0);
	cr_assert_eq(cpumask_count(&cpus), 4);
	cr_assert_eq(cgroupfs__read_memory_max(cg, POD, &mem), 0);
	cr_assert_eq(mem, CG_MEMORY_UNLIMITED);
	put("memory", "memory.limit_in_bytes", "1073741824\n");
	cr_assert_eq(cgroupfs__read_memory_max(cg, POD, &mem), 0);
	cr_assert_eq(mem, 1073741824ULL);
}

Test(cgroupfs_v1, cpu_stat_from_cpu_and_cpuacct, .init = setup_v1_split, .fini = teardown)
{
	struct cg_cpu_stat st;

	put("cpuacct", "cpuacct.usage", "5000000000\n");
	put("cpu", "cpu.stat",
	    "nr_periods 10\nnr_throttled 3\nthrottled_time 42000\nnr_bursts 0\nburst_time 0\n");
	cr_assert_eq(cgroupfs__read_cpu_stat(cg, POD, &st), 0);
	cr_assert_eq(st.usage_ns, 5000000000ULL);
	cr_assert_eq(st.nr_periods, 10);
	cr_assert_eq(st.nr_throttled, 3);
	cr_assert_eq(st.throttled_ns, 42000);
}

Test(cgroupfs_v1, pids_and_threads, .init = setup_v1, .fini = teardown)
{
	pid_t pids[2];

	put("cpu", "cgroup.procs", "12\n34\n56\n");
	put("cpu", "tasks", "12\n13\n");
	cr_assert_eq(cgroupfs__read_pids(cg, CG_KNOB_PROCS, POD, pids, 2), 3);
	cr_assert_eq(pids[0], 12);
	cr_assert_eq(pids[1], 34);
	cr_assert_eq(cgroupfs__read_pids(cg, CG_KNOB_THREADS, POD, pids, 2), 2);
	cr_assert_eq(pids[1], 13);
	put("cpu", "cgroup.procs", "");
	cr_assert_eq(cgroupfs__read_pids(cg, CG_KNOB_PROCS, POD, pids, 2), 0);
	put("cpu", "cgroup.procs", "12\nabc\n");
	cr_assert_eq(cgroupfs__read_pids(cg, CG_KNOB_PROCS, POD, pids, 2), -EINVAL);
	cr_assert(ends_with(cgroupfs__last_path(cg), "/cgroup.procs"));
	cr_assert_eq(cgroupfs__read_pids(cg, CG_KNOB_CPU_STAT, POD, pids, 2), -EINVAL);
}

Test(cgroupfs_v2, big_procs_file, .init = setup_v2, .fini = teardown)
{
	static char content[20000];
	pid_t pids[8];
	size_t len = 0;

	for (int i = 1; i <= 3000; i++)
		len += (size_t)snprintf(content + len, sizeof(content) - len, "%d\n", i);
	put("cpu", "cgroup.threads", content);
	cr_assert_eq(cgroupfs__read_pids(cg, CG_KNOB_THREADS, POD, pids, 8), 3000);
	cr_assert_eq(pids[7], 8);
}

/* ---- strict parsing ---- */

enum reader { R_CPU_MAX, R_WEIGHT, R_IDLE, R_CPUSET, R_MEM, R_STAT };

struct bad_read {
	enum fake_cg_layout layout;
	char ctrl[8];
	char file[24];
	char content[48];
	enum reader reader;
};

ParameterizedTestParameters(cgroupfs_strict, rejects_garbage)
{
	static struct bad_read cases[] = {
		{ FAKE_CG_V2, "cpu", "cpu.max", "max\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "100000\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "max 100000 1\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "abc 100000\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "0 100000\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "max  100000\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "-1 100000\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.max", "max 0\n", R_CPU_MAX },
		{ FAKE_CG_V2, "cpu", "cpu.weight", "abc\n", R_WEIGHT },
		{ FAKE_CG_V2, "cpu", "cpu.weight", "", R_WEIGHT },
		{ FAKE_CG_V2, "cpu", "cpu.weight", "1 2\n", R_WEIGHT },
		{ FAKE_CG_V2, "cpu", "cpu.weight", "18446744073709551616\n", R_WEIGHT },
		{ FAKE_CG_V2, "cpu", "cpu.idle", "2\n", R_IDLE },
		{ FAKE_CG_V2, "cpu", "cpuset.cpus", "3-1\n", R_CPUSET },
		{ FAKE_CG_V2, "cpu", "memory.max", "maxx\n", R_MEM },
		{ FAKE_CG_V2, "cpu", "memory.max", "-1\n", R_MEM },
		{ FAKE_CG_V2, "cpu", "cpu.stat", "user_usec 1\n", R_STAT },
		{ FAKE_CG_V2, "cpu", "cpu.stat", "usage_usec x\n", R_STAT },
		{ FAKE_CG_V2, "cpu", "cpu.stat", "usage_usec  1\n", R_STAT },
		{ FAKE_CG_V2, "cpu", "cpu.stat", "usage_usec 1\nbroken\n", R_STAT },
		{ FAKE_CG_V1, "cpu", "cpu.cfs_quota_us", "-2\n", R_CPU_MAX },
		{ FAKE_CG_V1, "cpu", "cpu.cfs_quota_us", "0\n", R_CPU_MAX },
		{ FAKE_CG_V1, "cpu", "cpu.cfs_quota_us", "1.5\n", R_CPU_MAX },
		{ FAKE_CG_V1, "cpu", "cpu.cfs_period_us", "\n", R_CPU_MAX },
		{ FAKE_CG_V1, "cpu", "cpu.shares", "-1024\n", R_WEIGHT },
		{ FAKE_CG_V1, "cpuset", "cpuset.effective_cpus", "0-\n", R_CPUSET },
		{ FAKE_CG_V1, "memory", "memory.limit_in_bytes", "max\n", R_MEM },
		{ FAKE_CG_V1, "cpu", "cpu.stat", "nr_periods 1\nnr_throttled 0\n", R_STAT },
		{ FAKE_CG_V1, "cpuacct", "cpuacct.usage", "12 \n", R_STAT },
	};
	return cr_make_param_array(struct bad_read, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct bad_read *c, cgroupfs_strict, rejects_garbage, .fini = teardown)
{
	struct cg_cpu_weight w;
	struct cg_cpu_stat st;
	struct cg_cpu_max m;
	struct cpumask cpus;
	uint64_t mem;
	bool idle;
	int err = 0;

	open_layout(c->layout);
	put(c->ctrl, c->file, c->content);
	switch (c->reader) {
	case R_CPU_MAX:
		err = cgroupfs__read_cpu_max(cg, POD, &m);
		break;
	case R_WEIGHT:
		err = cgroupfs__read_cpu_weight(cg, POD, &w);
		break;
	case R_IDLE:
		err = cgroupfs__read_cpu_idle(cg, POD, &idle);
		break;
	case R_CPUSET:
		err = cgroupfs__read_cpuset(cg,
					    strcmp(c->file, "cpuset.cpus") ?
						    CG_KNOB_CPUSET_EFFECTIVE :
						    CG_KNOB_CPUSET_CPUS,
					    POD, &cpus);
		break;
	case R_MEM:
		err = cgroupfs__read_memory_max(cg, POD, &mem);
		break;
	case R_STAT:
		err = cgroupfs__read_cpu_stat(cg, POD, &st);
		break;
	}
	cr_assert_eq(err, -EINVAL, "%s=\"%s\" gave %d", c->file, c->content, err);
	cr_assert(ends_with(cgroupfs__last_path(cg), c->file), "last_path %s",
		  cgroupfs__last_path(cg));
}

Test(cgroupfs_strict, missing_cgroup_names_file, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_max m;

	cr_assert_eq(cgroupfs__read_cpu_max(cg, "kubepods/podgone", &m), -ENOENT);
	cr_assert(ends_with(cgroupfs__last_path(cg), "kubepods/podgone/cpu.max"));
}

/* ---- writes ---- */

Test(cgroupfs_v2, write_cpu_max_and_skip, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_max m = { .quota_us = 50000, .period_us = 100000 };
	uint64_t n;

	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), 1);
	cr_assert_str_eq(get("cpu", "cpu.max"), "50000 100000");
	n = cgroupfs__nr_writes(cg);
	age("cpu", "cpu.max");
	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), 0);
	cr_assert_eq(cgroupfs__nr_writes(cg), n);
	cr_assert_eq(mtime("cpu", "cpu.max"), 1000);
	m.quota_us = CG_QUOTA_UNLIMITED;
	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), 1);
	cr_assert_str_eq(get("cpu", "cpu.max"), "max 100000");
	cr_assert_neq(mtime("cpu", "cpu.max"), 1000);
}

Test(cgroupfs_v1, write_cpu_max_touches_only_changed_files, .init = setup_v1, .fini = teardown)
{
	struct cg_cpu_max m = { .quota_us = 50000, .period_us = 100000 };

	age("cpu", "cpu.cfs_period_us");
	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), 1);
	cr_assert_str_eq(get("cpu", "cpu.cfs_quota_us"), "50000");
	cr_assert_eq(cgroupfs__nr_writes(cg), 1);
	cr_assert_eq(mtime("cpu", "cpu.cfs_period_us"), 1000);
	m.quota_us = CG_QUOTA_UNLIMITED;
	m.period_us = 50000;
	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), 1);
	cr_assert_str_eq(get("cpu", "cpu.cfs_quota_us"), "-1");
	cr_assert_str_eq(get("cpu", "cpu.cfs_period_us"), "50000");
	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), 0);
	cr_assert_eq(cgroupfs__nr_writes(cg), 3);
}

Test(cgroupfs_write, rejects_out_of_range_cpu_max, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_max m = { .quota_us = 500, .period_us = 100000 };

	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), -EINVAL);
	m.quota_us = 1000;
	m.period_us = 2000000;
	cr_assert_eq(cgroupfs__write_cpu_max(cg, POD, &m), -EINVAL);
	cr_assert_eq(cgroupfs__nr_writes(cg), 0);
}

Test(cgroupfs_v2, write_shares_converts_by_formula, .init = setup_v2, .fini = teardown)
{
	struct cg_cpu_weight w;

	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 1024, CG_WEIGHT_LINEAR), 1);
	cr_assert_str_eq(get("cpu", "cpu.weight"), "39");
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 1024, CG_WEIGHT_LOG), 1);
	cr_assert_str_eq(get("cpu", "cpu.weight"), "100");
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 1024, CG_WEIGHT_LOG), 0);
	cr_assert_eq(cgroupfs__read_cpu_weight(cg, POD, &w), 0);
	cr_assert_eq(w.value, 100);
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 1, CG_WEIGHT_LOG), 1);
	cr_assert_str_eq(get("cpu", "cpu.weight"), "1");
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 0, CG_WEIGHT_LOG), -EINVAL);
}

Test(cgroupfs_v1, write_shares_raw, .init = setup_v1, .fini = teardown)
{
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 1024, CG_WEIGHT_LOG), 0);
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 2, CG_WEIGHT_LOG), 1);
	cr_assert_str_eq(get("cpu", "cpu.shares"), "2");
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 1000000, CG_WEIGHT_LOG), 1);
	cr_assert_str_eq(get("cpu", "cpu.shares"), "262144");
}

static void write_misc(const char *mem_file, const char *unlimited_text)
{
	struct cpumask cpus;
	bool idle;

	cr_assert_eq(cgroupfs__write_cpu_idle(cg, POD, true), 1);
	cr_assert_eq(cgroupfs__read_cpu_idle(cg, POD, &idle), 0);
	cr_assert(idle);
	cr_assert_eq(cgroupfs__write_cpu_idle(cg, POD, true), 0);

	cpulist_parse("0-1,3", &cpus);
	cr_assert_eq(cgroupfs__write_cpuset(cg, POD, &cpus), 1);
	cr_assert_str_eq(get("cpuset", "cpuset.cpus"), "0-1,3");
	cr_assert_eq(cgroupfs__write_cpuset(cg, POD, &cpus), 0);
	cpumask_zero(&cpus);
	cr_assert_eq(cgroupfs__write_cpuset(cg, POD, &cpus), 1);
	cr_assert_str_eq(get("cpuset", "cpuset.cpus"), "\n");

	cr_assert_eq(cgroupfs__write_memory_max(cg, POD, CG_MEMORY_UNLIMITED), 0);
	cr_assert_eq(cgroupfs__write_memory_max(cg, POD, 1ULL << 30), 1);
	cr_assert_str_eq(get("memory", mem_file), "1073741824");
	cr_assert_eq(cgroupfs__write_memory_max(cg, POD, CG_MEMORY_UNLIMITED), 1);
	cr_assert_str_eq(get("memory", mem_file), unlimited_text);
}

Test(cgroupfs_v2, write_idle_cpuset_memory, .init = setup_v2, .fini = teardown)
{
	write_misc("memory.max", "max");
}

Test(cgroupfs_v1, write_idle_cpuset_memory, .init = setup_v1_split, .fini = teardown)
{
	write_misc("memory.limit_in_bytes", "-1");
}

/* Hybrid keeps every controller on v1: the unified mount only lends its cgroup ids. */
Test(cgroupfs_hybrid, uses_v1_files, .fini = teardown)
{
	struct cg_cpu_weight w;
	struct cg_cpu_stat st;

	open_layout(FAKE_CG_HYBRID);
	cr_assert_eq(cgroupfs__mode(cg), CGFS_MODE_HYBRID);
	cr_assert_str_eq(cgroupfs__knob_file(cg, CG_KNOB_CPU_SHARES), "cpu.shares");
	cr_assert_eq(cgroupfs__read_cpu_weight(cg, POD, &w), 0);
	cr_assert_not(w.is_weight);
	cr_assert_eq(w.value, 1024);
	put("cpuacct", "cpuacct.usage", "99\n");
	cr_assert_eq(cgroupfs__read_cpu_stat(cg, POD, &st), 0);
	cr_assert_eq(st.usage_ns, 99);
	write_misc("memory.limit_in_bytes", "-1");
}

Test(cgroupfs_write, garbage_is_overwritten, .init = setup_v2, .fini = teardown)
{
	put("cpu", "cpu.weight", "garbage\n");
	cr_assert_eq(cgroupfs__write_cpu_shares(cg, POD, 2, CG_WEIGHT_LINEAR), 1);
	cr_assert_str_eq(get("cpu", "cpu.weight"), "1");
}

Test(cgroupfs_write, errors_carry_errno_and_path, .init = setup_v2, .fini = teardown)
{
	char path[PATH_MAX];

	cr_assert_eq(cgroupfs__write_cpu_idle(cg, "kubepods/podgone", true), -ENOENT);
	cr_assert(ends_with(cgroupfs__last_path(cg), "podgone/cpu.idle"));
	/* A read-only file system stands in for a rejected write: a directory in place. */
	fake_cg__path(fc, "cpu", POD, "cpu.idle", path, sizeof(path));
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(mkdir(path, 0755), 0);
	cr_assert_lt(cgroupfs__write_cpu_idle(cg, POD, true), 0);
	cr_assert(ends_with(cgroupfs__last_path(cg), "/cpu.idle"));
}

Test(cgroupfs_v1, attach_pid_every_hierarchy, .init = setup_v1_split, .fini = teardown)
{
	cr_assert_eq(cgroupfs__attach_pid(cg, POD, 4242), 1);
	cr_assert_str_eq(get("cpu", "cgroup.procs"), "4242");
	cr_assert_str_eq(get("cpuacct", "cgroup.procs"), "4242");
	cr_assert_str_eq(get("cpuset", "cgroup.procs"), "4242");
	cr_assert_str_eq(get("memory", "cgroup.procs"), "4242");
	cr_assert_eq(cgroupfs__attach_pid(cg, POD, 0), -EINVAL);
}

/* ---- hot reader ---- */

static void reader_follows_updates(const char *usage_ctrl, const char *usage_file,
				   const char *usage_text, const char *stat_text,
				   uint64_t want_usage_ns, uint64_t want_throttled_ns)
{
	struct cg_stat_reader *r = NULL;
	struct cg_cpu_stat st;

	cr_assert_eq(cg_stat_reader__open(cg, POD, &r), 0);
	cr_assert_eq(cg_stat_reader__read(r, &st), 0);
	cr_assert_eq(st.usage_ns, 0);
	if (usage_file)
		put(usage_ctrl, usage_file, usage_text);
	put("cpu", "cpu.stat", stat_text);
	cr_assert_eq(cg_stat_reader__read(r, &st), 0);
	cr_assert_eq(st.usage_ns, want_usage_ns);
	cr_assert_eq(st.throttled_ns, want_throttled_ns);
	put("cpu", "cpu.stat", "junk\n");
	cr_assert_eq(cg_stat_reader__read(r, &st), -EINVAL);
	cg_stat_reader__free(r);
	cg_stat_reader__free(NULL);
}

Test(cg_stat_reader, v2, .init = setup_v2, .fini = teardown)
{
	reader_follows_updates(NULL, NULL, NULL,
			       "usage_usec 2000\nuser_usec 1000\nsystem_usec 1000\nnr_periods 4\n"
			       "nr_throttled 2\nthrottled_usec 30\n",
			       2000000, 30000);
}

Test(cg_stat_reader, v1, .init = setup_v1, .fini = teardown)
{
	reader_follows_updates("cpuacct", "cpuacct.usage", "777\n",
			       "nr_periods 4\nnr_throttled 2\nthrottled_time 30\n", 777, 30);
}

Test(cg_stat_reader, missing_cgroup, .init = setup_v2, .fini = teardown)
{
	struct cg_stat_reader *r = NULL;

	cr_assert_eq(cg_stat_reader__open(cg, "nope", &r), -ENOENT);
	cr_assert_null(r);
}

/* ---- shares <-> weight (ecosystem.md §2.2 table) ---- */

struct weight_row {
	uint64_t shares, linear, log;
};

ParameterizedTestParameters(cg_weight, matches_reference_table)
{
	static struct weight_row rows[] = {
		{ 2, 1, 1 },	       { 102, 4, 17 },
		{ 256, 10, 35 },       { 512, 20, 59 },
		{ 1024, 39, 100 },     { 2048, 79, 174 },
		{ 4096, 157, 303 },    { 16384, 625, 942 },
		{ 65536, 2500, 3023 }, { 262144, 10000, 10000 },
		{ 1, 1, 1 },
	};
	return cr_make_param_array(struct weight_row, rows, sizeof(rows) / sizeof(rows[0]));
}

ParameterizedTest(struct weight_row *r, cg_weight, matches_reference_table)
{
	cr_assert_eq(cg_shares_to_weight(r->shares, CG_WEIGHT_LINEAR), r->linear, "shares %lu",
		     (unsigned long)r->shares);
	cr_assert_eq(cg_shares_to_weight(r->shares, CG_WEIGHT_LOG), r->log, "shares %lu",
		     (unsigned long)r->shares);
}

Test(cg_weight, zero_is_unset_and_names_parse)
{
	enum cg_weight_formula f;

	cr_assert_eq(cg_shares_to_weight(0, CG_WEIGHT_LOG), 0);
	cr_assert_eq(cg_weight_formula_parse("linear", &f), 0);
	cr_assert_eq(f, CG_WEIGHT_LINEAR);
	cr_assert_eq(cg_weight_formula_parse("log", &f), 0);
	cr_assert_eq(f, CG_WEIGHT_LOG);
	cr_assert_eq(cg_weight_formula_parse("runc", &f), -EINVAL);
}

/* ---- /proc/<pid>/cgroup ---- */

Test(cg_proc_line, parses_v1_and_v2_lines)
{
	char ctrls[64], path[256];
	unsigned int id;

	cr_assert_eq(cg_proc_line_parse("4:memory:/process_api/x\n", &id, ctrls, sizeof(ctrls),
					path, sizeof(path)),
		     0);
	cr_assert_eq(id, 4);
	cr_assert_str_eq(ctrls, "memory");
	cr_assert_str_eq(path, "/process_api/x");
	cr_assert_eq(cg_proc_line_parse("0::/", &id, ctrls, sizeof(ctrls), path, sizeof(path)), 0);
	cr_assert_eq(id, 0);
	cr_assert_str_eq(ctrls, "");
	cr_assert_str_eq(path, "/");
	cr_assert_eq(cg_proc_line_parse("3:cpu,cpuacct:/kubepods/pod1", &id, ctrls, sizeof(ctrls),
					path, sizeof(path)),
		     0);
	cr_assert_str_eq(ctrls, "cpu,cpuacct");
}

Test(cg_proc_line, rejects_malformed)
{
	static const char *const bad[] = { "",		"x::/",		"4:memory",
					   "4:memory:", "4:memory:rel", "4:memory:/a\nb",
					   "-1::/" };
	char ctrls[64], path[4];
	unsigned int id;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_eq(cg_proc_line_parse(bad[i], &id, ctrls, sizeof(ctrls), path,
						sizeof(path)),
			     -EINVAL, "\"%s\"", bad[i]);
	cr_assert_eq(cg_proc_line_parse("1:cpu:/long", &id, ctrls, sizeof(ctrls), path,
					sizeof(path)),
		     -ENAMETOOLONG);
}
