// SPDX-License-Identifier: GPL-2.0
/* /proc/stat and /proc/meminfo: one input carries both texts, split at "\n--\n". */
#include <stdlib.h>

#include "fuzz.h"
#include "nodestat.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[2];
	struct node_stat ns = { 0 };
	char *stat, *meminfo;

	fuzz_split(data, size, part, 2);
	stat = fuzz_cstr(part[0].data, part[0].size);
	meminfo = fuzz_cstr(part[1].data, part[1].size);
	if (!nodestat_parse_stat(stat, &ns) && !ns.has_cpu)
		__builtin_trap();
	if (!nodestat_parse_meminfo(meminfo, &ns) && !ns.has_memory)
		__builtin_trap();
	free(stat);
	free(meminfo);
	return 0;
}
