/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_CGVALUE_H
#define KQOS_MODEL_CGVALUE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * cgroup values and paths as data, shared by the strategies (which build paths and values) and
 * the cgroup access layer (which writes them): one validator and one weight formula for both.
 */

/* shares -> cpu.weight conversion used when writing shares on v2 (ecosystem.md §2.2). */
enum cg_weight_formula {
	CG_WEIGHT_LINEAR = 0, /* runc/crun historical: 1 + ((shares - 2) * 9999) / 262142 */
	CG_WEIGHT_LOG, /* runc PR 4785 / crun 1721: ceil(10^((l*l + 125*l)/612 - 7/34)) */
};

/* Pure helpers (tested against the table in ecosystem.md §2.2). */
uint64_t cg_shares_to_weight(uint64_t shares, enum cg_weight_formula formula);
/* "linear" | "log"; -EINVAL otherwise. */
int cg_weight_formula_parse(const char *s, enum cg_weight_formula *ret);

/*
 * True when rel is a cgroup path that cannot leave the hierarchy: no "." or ".." component,
 * no empty component (except one leading and one trailing '/'), no control characters, shorter
 * than PATH_MAX. Use it on every path built from outside input (pod UID, container id).
 */
bool cgpath_is_safe(const char *rel);

#endif
