// SPDX-License-Identifier: GPL-2.0
/* /proc/stat and /proc/meminfo parsers, and the one duration formatter. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nodestat.h"
#include "units.h"

Test(nodestat, cpu_line_busy_is_koordinators_formula)
{
	struct node_stat ns = { 0 };

	/* user nice system idle iowait irq softirq steal */
	cr_assert_eq(nodestat_parse_stat("cpu  10 20 30 400 50 6 7 8 0 0\ncpu0 1 2 3\n", &ns), 0);
	cr_assert(ns.has_cpu);
	cr_assert_eq(ns.busy_ticks, 10 + 20 + 30 + 6 + 7);
}

Test(nodestat, bad_cpu_lines_are_rejected)
{
	static const char *const bad[] = { "",
					   "cpu0 1 2 3 4 5 6 7 8\n",
					   "cpu 1 2 3 4 5 6 7\n",
					   "cpu 1 2 x 4 5 6 7 8\n",
					   "intr 1\n",
					   "cpu 99999999999999999999999 1 1 1 1 1 1 1\n" };
	struct node_stat ns = { 0 };

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_expect_eq(nodestat_parse_stat(bad[i], &ns), -EINVAL, "%s", bad[i]);
	cr_assert_not(ns.has_cpu);
}

Test(nodestat, meminfo_total_and_available)
{
	struct node_stat ns = { 0 };

	cr_assert_eq(nodestat_parse_meminfo("MemTotal:       16384 kB\nMemFree:  1 kB\n"
					    "MemAvailable:    4096 kB\nBuffers: 3 kB\n",
					    &ns),
		     0);
	cr_assert(ns.has_memory);
	cr_assert_eq(ns.mem_total_kb, 16384);
	cr_assert_eq(ns.mem_available_kb, 4096);
	cr_assert_eq(nodestat_parse_meminfo("MemFree: 1 kB\n", &ns), -EINVAL, "no MemTotal");
	cr_assert_eq(nodestat_parse_meminfo("MemTotal: lots\n", &ns), -EINVAL);
}

Test(nodestat, read_below_a_proc_root)
{
	char dir[] = "/tmp/kqos-proc-XXXXXX", path[64], tmp[80];
	struct nodestat_files nf = NODESTAT_FILES_INIT;
	struct node_stat ns = { 0 };
	FILE *f;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/stat", dir);
	f = fopen(path, "w");
	fputs("cpu  1 1 1 1 1 1 1 1\n", f);
	fclose(f);
	nodestat_read(dir, &nf, NODESTAT_ALL, &ns);
	cr_assert(ns.has_cpu && !ns.has_memory, "a missing meminfo leaves memory absent");
	cr_assert_gt(ns.clk_tck, 0);
	/* a fake's file replaced by a rename is read anew: only procfs files stay open */
	snprintf(tmp, sizeof(tmp), "%s/stat.new", dir);
	f = fopen(tmp, "w");
	fputs("cpu  9 1 1 1 1 1 1 1\n", f);
	fclose(f);
	cr_assert_eq(rename(tmp, path), 0);
	nodestat_read(dir, &nf, NODESTAT_ALL, &ns);
	cr_assert_eq(ns.busy_ticks, 9 + 1 + 1 + 1 + 1, "read the new file");
	/* memory on its own cadence: a CPU-only read leaves the last memory reading as it was */
	snprintf(path, sizeof(path), "%s/meminfo", dir);
	f = fopen(path, "w");
	fputs("MemTotal: 1000 kB\nMemAvailable: 400 kB\n", f);
	fclose(f);
	nodestat_read(dir, &nf, NODESTAT_MEMORY, &ns);
	cr_assert(ns.has_memory && ns.mem_total_kb == 1000 && ns.mem_available_kb == 400);
	cr_assert_eq(ns.busy_ticks, 9 + 1 + 1 + 1 + 1, "a memory read leaves CPU as it was");
	unlink(path);
	nodestat_read(dir, &nf, NODESTAT_CPU, &ns);
	cr_assert(ns.has_memory && ns.mem_available_kb == 400, "kept until memory is read");
	nodestat_read(dir, &nf, NODESTAT_MEMORY, &ns);
	cr_assert_not(ns.has_memory, "gone when read again");
	nodestat_files_close(&nf);
	unlink(path);
	rmdir(dir);
}

Test(units, fmt_ns_three_significant_digits)
{
	static const struct {
		double ns;
		const char *want;
	} cases[] = { { 812, "812ns" },	  { 15300, "15.3us" },	{ 1.2e6, "1.2ms" },
		      { 999.7e3, "1ms" }, { 2.104e6, "2.1ms" }, { 1.5e9, "1.5s" },
		      { 999.4, "999ns" }, { 3.6e12, "3600s" } };
	char buf[32];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		fmt_ns(buf, sizeof(buf), cases[i].ns);
		cr_expect_str_eq(buf, cases[i].want, "%g", cases[i].ns);
	}
}
