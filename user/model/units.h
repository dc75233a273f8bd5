/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_UNITS_H
#define KQOS_MODEL_UNITS_H

#include <stddef.h>
#include <linux/types.h>

/* A duration for people: "812ns", "15.3us", "2.1ms", "1.5s" (3 significant digits). */
void fmt_ns(char *buf, size_t len, double ns);

/*
 * "500ms", "1.5s", "200us", "2m", "1h", "10ns", or plain seconds ("3"): 0, -EINVAL for
 * anything else (signs, spaces, nan, inf), -ERANGE past 1.8e19 ns.
 */
int parse_duration(const char *s, __u64 *ret_ns);

#endif
