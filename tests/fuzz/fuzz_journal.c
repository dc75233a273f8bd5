// SPDX-License-Identifier: GPL-2.0
/*
 * The actuator's journal of original values (stateDir/journal), as a restart finds it: written
 * by an earlier kqosd, perhaps cut short by a crash or a full disk, perhaps edited. Loaded by
 * actuator__new() and restored (ordered writes) into a fake cgroup v2 tree whose files do not
 * exist, so every restore fails and the entries are saved back.
 */
#include <stdio.h>
#include <stdlib.h>

#include "actuator.h"
#include "cgroupfs.h"
#include "fuzz.h"

static struct cgroupfs *cg;
static char state_dir[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char root[4096];

	fuzz_quiet();
	if (fuzz_write_file("v2/cgroup.controllers", "cpu cpuset memory\n", 18))
		abort();
	snprintf(root, sizeof(root), "%s/v2", fuzz_tmpdir());
	snprintf(state_dir, sizeof(state_dir), "%s/state", fuzz_tmpdir());
	if (cgroupfs__open(root, CGFS_MODE_V2, &cg))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct actuator_opts o = { .state_dir = state_dir };
	struct actuator *a = NULL;

	if (fuzz_write_file("state/journal", data, size))
		abort();
	if (actuator__new(cg, &o, &a))
		return 0;
	actuator__restore(a);
	actuator__free(a);
	return 0;
}
