// SPDX-License-Identifier: GPL-2.0
/* kqos-top --status: the agent's `status` answer as text, its own cost per stage first. */
#include <errno.h>
#include <stdio.h>

#include <jansson.h>

#include "stages.h"
#include "top.h"

static double num(json_t *o, const char *key)
{
	return json_number_value(json_object_get(o, key));
}

static void print_stages(FILE *f, json_t *stages)
{
	fprintf(f, "%-8s %10s %10s %10s %10s %10s %10s\n", "stage", "ticks", "mean_us", "p50_us",
		"p99_us", "max_us", "last_us");
	for (int sg = 0; sg < STAGE_NR; sg++) {
		json_t *s = json_object_get(stages, stage_name(sg));

		if (!json_is_object(s))
			continue;
		fprintf(f, "%-8s %10.0f %10.1f %10.1f %10.1f %10.1f %10.1f\n", stage_name(sg),
			num(s, "count"), num(s, "mean_us"), num(s, "p50_us"), num(s, "p99_us"),
			num(s, "max_us"), num(s, "last_us"));
	}
}

int top_status_print(FILE *f, const char *line)
{
	json_t *root = json_loads(line, 0, NULL), *stages;

	if (!json_is_object(root)) {
		json_decref(root);
		return -EPROTO;
	}
	fprintf(f, "kqosd %s, pid %.0f, snapshot %.0f, socket clients %.0f (dropped %.0f)\n",
		json_string_value(json_object_get(root, "version")) ?: "?", num(root, "pid"),
		num(root, "seq"), num(root, "socket_clients"), num(root, "socket_dropped"));
	stages = json_object_get(root, "stages");
	if (json_is_object(stages))
		print_stages(f, stages);
	else
		fprintf(f, "no stage timers in this agent's answer\n");
	json_decref(root);
	return 0;
}
