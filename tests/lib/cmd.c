// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* getdelim */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "cmd.h"

char *cmd_run(const char *cmd, int *ret_status)
{
	FILE *p = popen(cmd, "r");
	char *out = NULL;
	size_t cap = 0;
	int st;

	cr_assert_not_null(p, "cannot run %s", cmd);
	if (getdelim(&out, &cap, '\0', p) < 0) {
		free(out);
		out = strdup("");
	}
	st = pclose(p);
	*ret_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return out;
}
