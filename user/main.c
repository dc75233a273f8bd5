// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <stdlib.h>

#include "agent.h"
#include "opts.h"

int main(int argc, char **argv)
{
	struct kqos_opts opts;
	char err[CONFIG_ERR_LEN];

	if (opts_parse(argc, argv, &opts, err, sizeof(err))) {
		fprintf(stderr, "kqosd: %s\n", err);
		return EXIT_FAILURE;
	}
	if (opts.help) {
		opts_usage(stdout, "kqosd");
		return EXIT_SUCCESS;
	}
	if (opts.version) {
		printf("kqosd %s\n", KQOS_VERSION);
		return EXIT_SUCCESS;
	}
	if (opts.check_config) {
		printf("%s: ok\n", opts.config_path);
		return EXIT_SUCCESS;
	}
	return agent_run(&opts) ? EXIT_FAILURE : EXIT_SUCCESS;
}
