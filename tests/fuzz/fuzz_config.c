// SPDX-License-Identifier: GPL-2.0
/* The config file (--config): config_parse over the defaults, then what kqosd derives from it. */
#include <stdlib.h>

#include "config.h"
#include "fuzz.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pmu_event_cfg ev[KQOS_PMU_MAX];
	char *text = fuzz_cstr(data, size);
	static struct kqos_config cfg; /* large: PATH_MAX members */
	char err[CONFIG_ERR_LEN];
	__u64 ns;

	config_defaults(&cfg);
	if (!config_parse("fuzz.json", text, &cfg, err, sizeof(err)))
		config_pmu_events(&cfg, ev);
	/* durations are also typed on the command line: the same bytes as one flag value */
	parse_duration(text, &ns);
	free(text);
	return 0;
}
