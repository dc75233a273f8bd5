// SPDX-License-Identifier: GPL-2.0
/*
 * memory.stat -> koordinator's pod memory usage (anon + unevictable, page cache left out), and
 * which files each pass reads.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cgfiles.h"
#include "cgroupfs.h"
#include "fake_cgroup.h"

Test(cgfiles, v1_memory_stat_sums_the_hierarchical_anon_and_unevictable)
{
	const char *buf =
		"cache 4096\nrss 8192\nunevictable 1\ntotal_cache 900000\n"
		"total_rss 1000\ntotal_inactive_anon 168570880\ntotal_active_anon 1716224\n"
		"total_inactive_file 5\ntotal_unevictable 17313792\n";
	__u64 v = 0;

	cr_assert_eq(cgfiles_parse_memory_stat(buf, false, &v), 0);
	cr_expect_eq(v, 168570880ULL + 1716224ULL + 17313792ULL);
}

Test(cgfiles, v2_memory_stat_reads_anon_and_unevictable)
{
	const char *buf = "anon_thp 0\nanon 1000\nfile 99999\nunevictable 24\n";
	__u64 v = 0;

	/* "anon_thp" must not be taken for "anon" */
	cr_assert_eq(cgfiles_parse_memory_stat(buf, true, &v), 0);
	cr_expect_eq(v, 1024);
	cr_expect_eq(cgfiles_parse_memory_stat("anon 5\n", true, &v), -ENODATA);
	cr_expect_eq(cgfiles_parse_memory_stat("anon x\nunevictable 1\n", true, &v), -EINVAL);
}

/* --- the read cadence, on a fake v2 tree ------------------------------------------------ */

#define POD "kubepods/pod1"
#define CTR "kubepods/pod1/c1"

static struct fake_cg *fc;
static struct cgroupfs *cgfs;
static struct cgfiles files;
static char ctr_path[] = CTR, pod_path[] = POD, c2_path[] = POD "/c2";
static struct cgwalk_container ctr = { .path = ctr_path };
static struct cgwalk_pod pod = { .uid = "1",
				 .path = pod_path,
				 .containers = &ctr,
				 .nr_containers = 1 };
static struct cgwalk_result walk = { .pods = &pod, .nr_pods = 1 };

static void tree_setup(void)
{
	cr_assert_eq(fake_cg__new(FAKE_CG_V2, &fc), 0);
	cr_assert_eq(fake_cg__mkcg(fc, CTR), 0);
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_V2, &cgfs), 0);
}

static void tree_teardown(void)
{
	cgfiles_fini(&files);
	cgroupfs__free(cgfs);
	fake_cg__free(fc);
}

static void put_stat(const char *rel, int periods, int throttled)
{
	char buf[256];

	snprintf(buf, sizeof(buf),
		 "usage_usec 1\nuser_usec 1\nsystem_usec 0\nnr_periods %d\nnr_throttled %d\n"
		 "throttled_usec 0\n",
		 periods, throttled);
	cr_assert_eq(fake_cg__write(fc, "cpu", rel, "cpu.stat", buf), 0);
}

static const struct cg_file_stat *entry(const char *path)
{
	for (size_t i = 0; i < files.n; i++)
		if (!strcmp(files.v[i].path, path))
			return &files.v[i];
	cr_assert_fail("%s is not in the list", path);
	return NULL;
}

static void read_at(unsigned int what, uint64_t now)
{
	cr_assert_eq(cgfiles_read(&files, cgfs, fake_cg__root(fc), &walk, NULL, what, now), 0);
}

TestSuite(cgfiles_cadence, .init = tree_setup, .fini = tree_teardown);

Test(cgfiles_cadence, a_cgroup_that_never_had_a_quota_is_read_only_on_the_slow_pass)
{
	read_at(CGFILES_PATHS | CGFILES_VALUES | CGFILES_ALL, 1);
	cr_assert_eq(files.n, 2);
	cr_assert(entry("/" POD)->is_pod);
	cr_assert_not(entry("/" CTR)->is_pod);
	cr_assert(entry("/" CTR)->has_cpu_stat);
	cr_assert_eq(entry("/" CTR)->nr_periods, 0);
	put_stat(CTR, 10, 1);
	cr_assert_eq(fake_cg__write(fc, "cpu", CTR, "cpuset.cpus.effective", "1\n"), 0);
	read_at(CGFILES_VALUES, 2);
	cr_expect_eq(entry("/" CTR)->nr_periods, 0, "no CFS period ran before: left for later");
	cr_expect_str_eq(entry("/" CTR)->cpuset, "0-3");
	read_at(CGFILES_ALL, 3);
	cr_expect_eq(entry("/" CTR)->nr_periods, 10);
	cr_expect_str_eq(entry("/" CTR)->cpuset, "1");
	cr_expect(entry("/" CTR)->has_prev);
	cr_expect_eq(entry("/" CTR)->prev_periods, 0);
	/* a quota ran: from now on every stat pass reads it, and keeps the reading before */
	put_stat(CTR, 30, 6);
	read_at(CGFILES_VALUES, 4);
	cr_expect_eq(entry("/" CTR)->nr_periods, 30);
	cr_expect_eq(entry("/" CTR)->prev_periods, 10);
	cr_expect_eq(entry("/" CTR)->prev_throttled, 1);
	cr_expect_eq(entry("/" CTR)->read_ns, 4);
}

Test(cgfiles_cadence, a_new_list_keeps_known_readings_and_reads_a_new_cgroup_at_once)
{
	static struct cgwalk_container two[2] = { { .path = ctr_path }, { .path = c2_path } };

	put_stat(CTR, 5, 0);
	read_at(CGFILES_PATHS | CGFILES_VALUES | CGFILES_ALL, 1);
	cr_assert_eq(entry("/" CTR)->nr_periods, 5);
	cr_assert_eq(fake_cg__mkcg(fc, POD "/c2"), 0);
	put_stat(POD "/c2", 7, 0);
	put_stat(CTR, 9, 0);
	pod.containers = two;
	pod.nr_containers = 2;
	read_at(CGFILES_PATHS, 2);
	pod.containers = &ctr;
	pod.nr_containers = 1;
	cr_assert_eq(files.n, 3);
	cr_expect_eq(entry("/" CTR)->nr_periods, 5, "a known cgroup waits for its cadence");
	cr_expect_eq(entry("/" CTR)->read_ns, 1);
	cr_expect_eq(entry("/" POD "/c2")->nr_periods, 7, "a new one is read at once");
	cr_expect_eq(entry("/" POD "/c2")->read_ns, 2);
}

Test(cgfiles_cadence, pods_memory_on_the_stat_pass_only_while_a_strategy_uses_it)
{
	read_at(CGFILES_PATHS | CGFILES_VALUES | CGFILES_ALL, 1);
	cr_assert_eq(fake_cg__write(fc, "memory", POD, "memory.stat",
				    "anon 4096\nfile 100\nunevictable 0\n"),
		     0);
	read_at(CGFILES_VALUES, 2);
	cr_expect_eq(entry("/" POD)->mem_used_bytes, 0,
		     "memory eviction off: the slow pass reads it");
	read_at(CGFILES_VALUES | CGFILES_MEMORY, 3);
	cr_expect(entry("/" POD)->has_memory);
	cr_expect_eq(entry("/" POD)->mem_used_bytes, 4096);
}
