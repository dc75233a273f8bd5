/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_ACTUATE_KNOB_H
#define KQOS_ACTUATE_KNOB_H

#include <stdbool.h>
#include <stddef.h>

#include "cgroupfs.h"
#include "plan.h"

/*
 * How a plan knob reaches its file: one table (knob.c) that reads, writes, compares and
 * journals each knob through cgroupfs. The actuator and the journal only look knobs up here.
 */

/* A knob's value as read from the files; shares keep the raw stored unit (v2 weight). */
struct knob_value {
	struct plan_value v;
	struct cg_cpu_weight w;
};

/* What to write: the plan's value, or (orig set) a journaled original, back as it was. */
struct knob_target {
	const struct plan_value *v;
	const struct knob_value *orig; /* NULL for plan values */
	const struct knob_value *cur; /* what the file holds now */
	enum cg_weight_formula formula; /* shares -> v2 weight */
};

struct knob_ops {
	int (*read)(struct cgroupfs *cg, const char *rel, struct knob_value *ret);
	/* 1 written, 0 already equal, -errno */
	int (*write)(struct cgroupfs *cg, const char *rel, const struct knob_target *t);
	/* the file would hold @t after a write (so nothing needs writing) */
	bool (*holds)(const struct knob_value *cur, const struct knob_target *t);
	/* journal text of a raw value and back */
	int (*format)(const struct knob_value *o, char *buf, size_t size);
	int (*parse)(const char *s, struct knob_value *ret);
};

/* The knob's entry; NULL outside [0, PLAN_KNOB_NR). */
const struct knob_ops *knob_ops(enum plan_knob knob);

#endif
