// SPDX-License-Identifier: GPL-2.0
/*
 * resctrl mon_data values. Each line is one reading of a counter, fed in turn to the parser and
 * to the rate tracker as the monitor does once per tick (a rate is never negative or infinite).
 * The first three lines are also the files of a small mon_data tree (two L3 domains, one SNC
 * sub-domain) read back through resctrl_mon_read().
 */
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "resctrl.h"

static const char *const files[] = {
	"mon_data/mon_L3_00/llc_occupancy",
	"mon_data/mon_L3_01/mbm_total_bytes",
	"mon_data/mon_L3_00/mon_sub_L3_01/mbm_local_bytes",
};

#define NR_FILES (sizeof(files) / sizeof(files[0]))

static struct resctrl *rc;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char features[] = "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n";

	fuzz_quiet();
	if (fuzz_write_file("info/L3_MON/mon_features", features, sizeof(features) - 1) ||
	    resctrl_open(fuzz_tmpdir(), &rc))
		abort();
	return 0;
}

static void rates(char *text)
{
	struct resctrl_rate rt = { 0 };
	uint64_t now_ns = 0, prev = 0, bytes, delta;
	enum resctrl_mon_state state;
	unsigned int nr = 0;
	char *line, *save = NULL;
	double bps;

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save), nr++) {
		if (nr < NR_FILES && fuzz_write_file(files[nr], line, strlen(line)))
			abort();
		bytes = 0;
		resctrl_mon_parse(line, &bytes, &state);
		/* the tick length varies with the reading so that time both advances and stalls */
		now_ns += (bytes & 3) * 500000000ull;
		if (!resctrl_rate_update(&rt, state, bytes, now_ns, &bps) &&
		    (bps < 0 || !isfinite(bps)))
			__builtin_trap();
		if (!resctrl_counter_delta(prev, bytes, &delta) && bytes >= prev &&
		    delta != bytes - prev)
			__builtin_trap();
		prev = bytes;
	}
	/* a line that is not there leaves an empty file: a reading with no value */
	for (; nr < NR_FILES; nr++)
		fuzz_write_file(files[nr], "", 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct resctrl_mon_value v;
	char *text = fuzz_cstr(data, size);

	rates(text);
	for (int ev = 0; ev < RESCTRL_EV_MAX; ev++)
		resctrl_mon_read(rc, NULL, NULL, ev, &v);
	free(text);
	return 0;
}
