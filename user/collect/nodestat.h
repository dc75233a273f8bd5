/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_NODESTAT_H
#define KQOS_COLLECT_NODESTAT_H

#include <stddef.h>

#include "snapbuild.h"

/*
 * Node CPU and memory use from procfs: /proc/stat's "cpu" line (koordinator's busy formula,
 * user+nice+system+irq+softirq) and /proc/meminfo's MemTotal and MemAvailable. The parsers
 * take the file's text and are pure; nodestat_read() reads both below @proc_root.
 */

/* -EINVAL when the first line is not "cpu" with at least 8 counters. */
int nodestat_parse_stat(const char *buf, struct node_stat *ret);
/* -EINVAL without a MemTotal line; MemAvailable may be absent (then 0). */
int nodestat_parse_meminfo(const char *buf, struct node_stat *ret);
/*
 * The two files, kept open between reads: each tick reads both, and an open was a third of a
 * read's cost. Start with NODESTAT_FILES_INIT.
 */
struct nodestat_files {
	int stat_fd, meminfo_fd;
};
#define NODESTAT_FILES_INIT                     \
	{                                       \
		.stat_fd = -1, .meminfo_fd = -1 \
	}
void nodestat_files_close(struct nodestat_files *f);

#define NODESTAT_CPU	1U /* /proc/stat */
#define NODESTAT_MEMORY 2U /* /proc/meminfo */
#define NODESTAT_ALL	(NODESTAT_CPU | NODESTAT_MEMORY)

/*
 * The files in @what into @ret, the rest of it left as it was: memory is read on the stat
 * cadence, CPU every tick. A missing or malformed file leaves its has_* false.
 */
void nodestat_read(const char *proc_root, struct nodestat_files *f, unsigned int what,
		   struct node_stat *ret);

#endif
