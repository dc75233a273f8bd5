/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_EXPORT_EXPORT_PROM_H
#define KQOS_EXPORT_EXPORT_PROM_H

#include <stddef.h>
#include <stdint.h>

#include "snapshot.h"
#include "stages.h"

/*
 * The Prometheus textfile (text format 0.0.4, for node_exporter's textfile collector): every
 * family has HELP and TYPE (counters under their full `_total` name), base units, no timestamps,
 * one sample per name and label set. Metric list: docs/export.md.
 */
#define PROM_FILE_NAME "kqos.prom"

/* The exporter's own health, which the snapshot does not carry. */
struct prom_health {
	uint64_t textfile_write_errors;
	const struct agent_stages *stages; /* the agent's own time per stage; NULL: not shown */
};

/*
 * Render @s and the enforcement state published beside it (@en; NULL: nothing enforced) into
 * a malloc'd, NUL-terminated text (*ret, length *ret_len). 0 or -ENOMEM.
 */
int prom_render(const struct snapshot *s, const struct snap_enforce *en,
		const struct prom_health *h, char **ret, size_t *ret_len);

/*
 * Replace <dir>/kqos.prom with @text atomically: write a temp file in @dir, fsync, rename, fsync
 * the directory. Readers see the old file or the new one, never a part. 0 or -errno.
 */
int prom_write_textfile(const char *dir, const char *text, size_t len);

/* Remove temp files a crashed writer left in @dir (they never match *.prom). */
void prom_sweep_temp(const char *dir);

/*
 * Test hook: when >= 0, prom_write_textfile() stops dead after that many bytes of the temp file
 * and returns -ECANCELED, leaving the file system as a crash at that point would.
 */
extern long prom_test_abort_after;

#endif
