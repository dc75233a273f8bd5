/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_UNITS_H
#define KQOS_MODEL_UNITS_H

#include <stddef.h>

/* A duration for people: "812ns", "15.3us", "2.1ms", "1.5s" (3 significant digits). */
void fmt_ns(char *buf, size_t len, double ns);

#endif
