/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_REPORT_H
#define KQOS_USER_REPORT_H

#include <stdio.h>

#include "snapshot.h"

/*
 * kqosd --once output. Text: pods (or bare-metal groups), then the other cgroups that ran,
 * busiest first; "-" where kqos has no figure on this host. JSON: the snapshot itself
 * (docs/snapshot.md). Returns 0 or -errno.
 */
int report_text(FILE *f, const struct snapshot *s);
int report_json(FILE *f, const struct snapshot *s, const struct snap_enforce *en);

/* "812ns", "15.3us", "2.10ms", "1.50s": 3 significant digits. */
void fmt_ns(char *buf, size_t len, unsigned long long ns);

#endif
