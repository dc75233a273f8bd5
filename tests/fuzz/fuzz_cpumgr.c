// SPDX-License-Identifier: GPL-2.0
/* kubelet's cpu_manager_state checkpoint, read from a file as the agent reads it. */
#include <limits.h>
#include <stdio.h>

#include "cputopo.h"
#include "fuzz.h"

static char path[PATH_MAX];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	snprintf(path, sizeof(path), "%s/cpu_manager_state", fuzz_tmpdir());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpumgr_state *st = NULL;
	struct cpumask cpus;

	if (fuzz_write_file("cpu_manager_state", data, size))
		__builtin_trap();
	if (cpumgr_state__load(path, &st) || !st)
		return 0;
	cpumgr_state__exclusive_cpus(st, &cpus);
	cpumgr_state__free(st);
	return 0;
}
