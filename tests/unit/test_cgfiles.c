// SPDX-License-Identifier: GPL-2.0
/* memory.stat -> koordinator's pod memory usage (anon + unevictable, page cache left out). */
#include <criterion/criterion.h>
#include <errno.h>

#include "cgfiles.h"

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
