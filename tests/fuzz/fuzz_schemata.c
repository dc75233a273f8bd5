// SPDX-License-Identifier: GPL-2.0
/*
 * resctrl schemata text. What parses must format and parse back to the same values: the agent
 * writes what it formats.
 */
#include <stdlib.h>

#include "fuzz.h"
#include "resctrl.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static bool same(const struct resctrl_schemata *a, const struct resctrl_schemata *b)
{
	for (int r = 0; r < RESCTRL_RES_MAX; r++) {
		const struct resctrl_sline *x = &a->res[r];
		uint64_t v;

		if (x->nr != b->res[r].nr)
			return false;
		for (unsigned int i = 0; i < x->nr; i++)
			if (resctrl_sline_get(&b->res[r], x->ids[i], &v) || v != x->vals[i])
				return false;
	}
	return true;
}

static void round_trip(const struct resctrl_schemata *s)
{
	static char buf[1 << 16];
	struct resctrl_schemata back;
	int n = resctrl_schemata_format(s, NULL, buf, sizeof(buf));

	if (n < 0 || resctrl_schemata_parse(buf, &back) || !same(s, &back))
		__builtin_trap();
	if (resctrl_schemata_format(s, s, buf, sizeof(buf)) != 0)
		__builtin_trap(); /* nothing differs from itself */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct resctrl_schemata s;
	char *text = fuzz_cstr(data, size);

	if (!resctrl_schemata_parse(text, &s))
		round_trip(&s);
	free(text);
	return 0;
}
