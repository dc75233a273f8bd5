/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_EXPORT_SNAPJSON_H
#define KQOS_EXPORT_SNAPJSON_H

#include <stdbool.h>

#include "snapshot.h"

/*
 * The snapshot and, published beside it, what enforcement did (NULL: nothing enforced, as with
 * --once) as JSON text (malloc'd, NUL-terminated; caller frees). @pretty indents. NULL on
 * -ENOMEM. The shape is docs/snapshot.md.
 */
char *snapjson_format(const struct snapshot *s, const struct snap_enforce *en, bool pretty);

#endif
