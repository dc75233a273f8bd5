// SPDX-License-Identifier: GPL-2.0
/*
 * kqos-top's snapshot parser: one socket line from whatever answers at the socket path, then
 * everything the batch view does with it (sort by each column, filter, format every cell).
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"
#include "top.h"

static FILE *null_out;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	null_out = fopen("/dev/null", "we");
	if (!null_out)
		abort();
	return 0;
}

static void show(struct top_model *m)
{
	char lines[8][TOP_LINE], buf[TOP_LINE];

	top_header_lines(&m->hdr, lines, 8);
	for (int c = 0; c < NR_COLS; c++) {
		top_model__sort(m, c, c & 1);
		for (size_t i = 0; i < m->nr_rows; i++)
			top_cell(&m->rows[i], c, buf, sizeof(buf));
	}
	for (size_t i = 0; i < m->nr_rows; i++) {
		top_row__matches(&m->rows[i], "be");
		top_format_row(&m->rows[i], "`-", buf, sizeof(buf));
	}
	top_print_batch(null_out, m, NULL);
	top_print_batch(null_out, m, "pod");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct top_model *m = NULL;
	char *json = fuzz_cstr(data, size);

	if (!top_model__parse(json, &m)) {
		show(m);
		top_model__free(m);
	}
	free(json);
	return 0;
}
