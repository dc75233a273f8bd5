// SPDX-License-Identifier: GPL-2.0
/* NodeSLO and the kqos strategies JSON: two texts in one input, split at "\n--\n". */
#include <stdlib.h>

#include "fuzz.h"
#include "slo.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[2];
	struct slo_config slo;
	char err[512], *policy, *kqos;

	fuzz_split(data, size, part, 2);
	policy = fuzz_cstr(part[0].data, part[0].size);
	kqos = fuzz_cstr(part[1].data, part[1].size);
	slo_config_parse(policy, kqos, &slo, err, sizeof(err));
	free(policy);
	free(kqos);
	return 0;
}
