// SPDX-License-Identifier: GPL-2.0
/* kubelet's cpu_manager_state checkpoint: the pure parser, then what the strategies read. */
#include <stdlib.h>

#include "fuzz.h"
#include "topology.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpumgr_state *st = NULL;
	struct cpumask cpus;
	char err[256];

	if (cpumgr_state_parse((const char *)data, size, &st, err, sizeof(err)) || !st)
		return 0;
	cpumgr_state__exclusive_cpus(st, &cpus);
	if (cpumgr_state__ref(st) != st)
		__builtin_trap();
	cpumgr_state__put(st);
	cpumgr_state__put(st);
	return 0;
}
