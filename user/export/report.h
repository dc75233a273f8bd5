/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_EXPORT_REPORT_H
#define KQOS_EXPORT_REPORT_H

#include <stdio.h>

#include "snapshot.h"
#include "units.h"

/*
 * kqosd --once output. Text: pods (or bare-metal groups), then the other cgroups that ran,
 * busiest first; "-" where kqos has no figure on this host. JSON: the snapshot itself
 * (docs/snapshot.md). Returns 0 or -errno.
 */
int report_text(FILE *f, const struct snapshot *s);
int report_json(FILE *f, const struct snapshot *s, const struct snap_enforce *en);

#endif
