// SPDX-License-Identifier: GPL-2.0
/*
 * cgroup files the agent reads (cgroupfs.c): cpu.stat and cpuacct.usage, cpu.max or the v1
 * quota/period pair, shares/weight, cpu.idle, cpusets, memory limits, pid lists, and the lines
 * of /proc/<pid>/cgroup. The first byte picks the reader and the hierarchy (v1 or v2); the rest
 * is the file, or two files split at "\n--\n" for readers that take two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroupfs.h"
#include "fuzz.h"

#define REL "kubepods/pod1"

static struct cgroupfs *cg_v1, *cg_v2;

static void read_stat(struct cgroupfs *cg)
{
	struct cg_stat_reader *r;
	struct cg_cpu_stat st;

	cgroupfs__read_cpu_stat(cg, REL, &st);
	if (cg_stat_reader__open(cg, REL, &r))
		return;
	cg_stat_reader__read(r, &st);
	cg_stat_reader__free(r);
}

static void read_max(struct cgroupfs *cg)
{
	struct cg_cpu_max v;

	if (!cgroupfs__read_cpu_max(cg, REL, &v) && v.quota_us != CG_QUOTA_UNLIMITED &&
	    v.quota_us <= 0)
		__builtin_trap(); /* the header's promise: unlimited or > 0 */
}

static void read_weight(struct cgroupfs *cg)
{
	struct cg_cpu_weight v;

	cgroupfs__read_cpu_weight(cg, REL, &v);
}

static void read_idle(struct cgroupfs *cg)
{
	bool idle;

	cgroupfs__read_cpu_idle(cg, REL, &idle);
}

static void read_cpuset(struct cgroupfs *cg)
{
	struct cpumask m;

	cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_CPUS, REL, &m);
	cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_EFFECTIVE, REL, &m);
}

static void read_memory(struct cgroupfs *cg)
{
	uint64_t v;

	cgroupfs__read_memory_max(cg, REL, &v);
}

static void read_pids(struct cgroupfs *cg)
{
	pid_t pids[8];

	cgroupfs__read_pids(cg, CG_KNOB_PROCS, REL, pids, 8);
	cgroupfs__read_pids(cg, CG_KNOB_THREADS, REL, pids, 0);
}

static const struct {
	void (*read)(struct cgroupfs *cg);
	enum cg_knob knob[2];
} readers[] = {
	{ read_stat, { CG_KNOB_CPU_STAT, CG_KNOB_CPU_USAGE } },
	{ read_max, { CG_KNOB_CPU_QUOTA, CG_KNOB_CPU_PERIOD } },
	{ read_weight, { CG_KNOB_CPU_SHARES, CG_KNOB_CPU_SHARES } },
	{ read_idle, { CG_KNOB_CPU_IDLE, CG_KNOB_CPU_IDLE } },
	{ read_cpuset, { CG_KNOB_CPUSET_CPUS, CG_KNOB_CPUSET_EFFECTIVE } },
	{ read_memory, { CG_KNOB_MEMORY_MAX, CG_KNOB_MEMORY_MAX } },
	{ read_pids, { CG_KNOB_PROCS, CG_KNOB_THREADS } },
};

#define NR_READERS (sizeof(readers) / sizeof(readers[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const dirs[] = {
		"v1/cpu,cpuacct/" REL "/.keep",
		"v1/cpuset/" REL "/.keep",
		"v1/memory/" REL "/.keep",
		"v2/" REL "/.keep",
	};
	char root[4096];

	fuzz_quiet();
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (fuzz_write_file(dirs[i], "", 0))
			abort();
	snprintf(root, sizeof(root), "%s/v1", fuzz_tmpdir());
	if (cgroupfs__open(root, CGFS_MODE_V1, &cg_v1))
		abort();
	snprintf(root, sizeof(root), "%s/v2", fuzz_tmpdir());
	if (cgroupfs__open(root, CGFS_MODE_V2, &cg_v2))
		abort();
	return 0;
}

static void proc_cgroup(const uint8_t *data, size_t size)
{
	char *line = fuzz_cstr(data, size), ctrls[64], path[256];
	unsigned int id;

	cg_proc_line_parse(line, &id, ctrls, sizeof(ctrls), path, sizeof(path));
	free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char path[2][4096];
	struct fuzz_part part[2];
	struct cgroupfs *cg;
	unsigned int sel;

	if (!size)
		return 0;
	sel = data[0] % (2 * NR_READERS + 1);
	if (sel == 2 * NR_READERS) {
		proc_cgroup(data + 1, size - 1);
		return 0;
	}
	cg = sel & 1 ? cg_v2 : cg_v1;
	sel >>= 1;
	fuzz_split(data + 1, size - 1, part, 2);
	for (int i = 0; i < 2; i++)
		if (cgroupfs__knob_path(cg, readers[sel].knob[i], REL, path[i], sizeof(path[i])))
			__builtin_trap();
	/* where both knobs live in one file (v2 cpu.max), that file is the first part */
	if (strcmp(path[0], path[1]) && fuzz_write_file(path[1], part[1].data, part[1].size))
		abort();
	if (fuzz_write_file(path[0], part[0].data, part[0].size))
		abort();
	readers[sel].read(cg);
	return 0;
}
