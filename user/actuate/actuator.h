/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_ACTUATE_ACTUATOR_H
#define KQOS_ACTUATE_ACTUATOR_H

#include <stdbool.h>
#include <stdint.h>

#include "cgroupfs.h"
#include "plan.h"
#include "snapshot.h"

/*
 * The actuator: the only writer of cgroup files (docs/actuator.md).
 *
 * apply() diffs a plan against the files and writes only what differs, in an order the kernel
 * accepts: every cpuset and quota change is written in koordinator's leveled merge sequence,
 * first the looser of old and new top-down (parents before children: cpuset old ∪ new, quota
 * the larger), then the exact value bottom-up (children before parents). That keeps v1's
 * cpuset parent ⊇ child and quota child <= parent true at every step.
 *
 * Before a file is first changed, its original value goes to the journal <state_dir>/journal
 * (temp file, fsync, rename, fsync of the dir), so that restore() and the next start after a
 * crash can put it back. A journaled knob that no plan asks for any more (strategy disabled,
 * policy switched) is restored to its original in the same ordered pass and leaves the
 * journal.
 *
 * Failed writes (vanished cgroup, EINVAL, EBUSY) are logged with path and errno, counted by
 * (strategy, knob, result), and never stop the pass.
 */

struct actuator;

struct actuator_opts {
	const char *state_dir; /* journal directory (created if missing) */
	bool dry_run; /* log and count, write nothing (not even the journal) */
	enum cg_weight_formula formula; /* shares -> v2 weight */
};

/* Loads an existing journal (entries kept: see actuator__restore / adopt). @cg is borrowed. */
int actuator__new(struct cgroupfs *cg, const struct actuator_opts *opts, struct actuator **ret);
void actuator__free(struct actuator *a);
void actuator__set_dry_run(struct actuator *a, bool dry_run);
void actuator__set_formula(struct actuator *a, enum cg_weight_formula formula);

/*
 * Apply @plan (NULL = empty: everything journaled goes back). @wall_ns stamps the recent
 * actions. Returns 0, or -errno when the journal could not be written (nothing was written
 * to the cgroups then).
 */
int actuator__apply(struct actuator *a, const struct plan *plan, uint64_t wall_ns);

/*
 * Knobs (values ignored) whose originals every apply journals ahead and keeps journaled while
 * they are at their original: a reaction between ticks then writes without the journal's
 * fsync. Borrowed until the next call; NULL = none.
 */
void actuator__set_reserve(struct actuator *a, const struct plan *reserve);

/* Write every journaled original back (ordered), then clear the journal. 0 or first -errno. */
int actuator__restore(struct actuator *a);

/* Number of journaled knobs. */
size_t actuator__nr_journal(const struct actuator *a);
/* Counters, write errors and recent actions into @ret (the other fields are left alone). */
void actuator__fill(const struct actuator *a, struct snap_enforce *ret);
/* Count of one (strategy, knob, result) kind; 0 when never seen. For tests and logs. */
uint64_t actuator__count(const struct actuator *a, const char *strategy, const char *knob,
			 const char *result);

#endif
