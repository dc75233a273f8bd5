/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_ACTUATE_JOURNAL_H
#define KQOS_ACTUATE_JOURNAL_H

#include <limits.h>
#include <stddef.h>

#include "knob.h"

/*
 * The original value of every knob kqos changed, in <state_dir>/journal: one line per knob,
 * "knob<TAB>cgroup<TAB>original". Saved crash-safe (temp file, fsync, rename, fsync of the
 * dir) before any write it covers, so a stop, or the next start after a crash, restores it.
 */

struct journal_entry {
	char cgroup[PLAN_CGROUP_MAX];
	enum plan_knob knob;
	struct knob_value orig;
};

struct journal {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	struct journal_entry *e;
	size_t n, cap;
	int save_err; /* of the last save, so that a failure is logged when it starts only */
};

/*
 * Create @state_dir if missing and load the journal in it. A malformed line is skipped, and a
 * journal with one is kept as found in <state_dir>/journal.bad. A state dir that cannot be
 * made is no error: saves fail (and so nothing is written) until it can.
 */
int journal_open(struct journal *j, const char *state_dir);
void journal_close(struct journal *j);

struct journal_entry *journal_find(struct journal *j, const char *cgroup, enum plan_knob knob);
int journal_add(struct journal *j, const char *cgroup, enum plan_knob knob,
		const struct knob_value *orig);
/* Entry order is not kept. */
void journal_del(struct journal *j, size_t i);
/* Room for @extra more entries, so that adding never moves the array under its users. */
int journal_reserve(struct journal *j, size_t extra);
/*
 * Write the whole journal (no entries: remove the file). A failure is logged at error when it
 * starts or changes, at debug while it lasts, and its end at info.
 */
int journal_save(struct journal *j);

#endif
