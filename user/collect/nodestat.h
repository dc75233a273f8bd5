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
/* Fills what it can; a missing or malformed file leaves its has_* false. */
void nodestat_read(const char *proc_root, struct node_stat *ret);

#endif
