// SPDX-License-Identifier: GPL-2.0
/*
 * cpu lists (cpuset.cpus, sysfs, annotations, config). Beyond not crashing: what parses must
 * format within CPULIST_BUF_SIZE and parse back to the same mask.
 */
#include <stdlib.h>

#include "cpulist.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cpumask m, back;
	char buf[CPULIST_BUF_SIZE];
	char *s = fuzz_cstr(data, size);
	int n;

	if (!cpulist_parse(s, &m)) {
		n = cpulist_format(&m, buf, sizeof(buf));
		if (n < 0 || cpulist_parse(buf, &back) || !cpumask_equal(&m, &back))
			__builtin_trap();
		if ((unsigned int)n != 0 && cpumask_count(&m) == 0)
			__builtin_trap();
	}
	free(s);
	return 0;
}
