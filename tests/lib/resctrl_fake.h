/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_RESCTRL_RESCTRL_FAKE_H
#define KQOS_RESCTRL_RESCTRL_FAKE_H

/*
 * A fake resctrl root for tests (ecosystem.md §1.10). The tree lives in a mkdtemp() directory
 * and is read with plain file I/O; mutations go through resctrl_fake_backend, which applies the
 * kernel's rules to an in-memory model (same errno, same info/last_cmd_status text) and then
 * rewrites the affected files. Task ids are real: a tid is accepted if /proc/<tid> exists.
 * Not thread-safe; one fake per test.
 */

#include "resctrl.h"

struct resctrl_fake;

/* NULL-terminated: "skx2s", "cdp", "mbps", "amd", "snc2", "mon-only", "legacy-fmt", "mb8". */
extern const char *const resctrl_fake_profiles[];

/* profile NULL = "skx2s". -EINVAL for an unknown profile. */
int resctrl_fake__new(const char *profile, struct resctrl_fake **ret);
/*
 * Serve a copy of any resctrl tree: dir's info/, root schemata, cpus and mon_data (e.g. a
 * profile's tree kept by scripts/fake-resctrl.sh, or one written by hand). The kernel's rules
 * then come from what info/ says: CBM length and min_cbm_bits, num_closids, MB min/gran/
 * delay_linear or MBps, CDP from L3CODE/L3DATA, num_rmids, cache ids from the root schemata
 * (else mon_data), SNC from mon_sub_L3_*. Names are padded as the root schemata pads them;
 * the legacy-fmt profile's quirks (zero-padded masks, lower-case wording) are not inferred.
 * -ENOENT without info/ or without any cache id; dir itself is never written.
 */
int resctrl_fake__new_dir(const char *dir, struct resctrl_fake **ret);
/* Removes the temp tree unless resctrl_fake__keep() was called. NULL-safe. */
void resctrl_fake__free(struct resctrl_fake *f);
/* Leave the tree on disk after __free (scripts/fake-resctrl.sh). */
void resctrl_fake__keep(struct resctrl_fake *f);
const char *resctrl_fake__root(const struct resctrl_fake *f);

/* ctx must be the struct resctrl_fake. */
extern const struct resctrl_backend_ops resctrl_fake_backend;
/* resctrl_open_backend() on the fake's root with the fake backend. */
int resctrl_fake__open(struct resctrl_fake *f, struct resctrl **ret);

/*
 * Test hooks. group is a directory relative to the root: "." (root), "kqos-BE",
 * "kqos-BE/mon_groups/kqos-p1". dom is an L3 cache id. -ENOENT for an unknown group/domain.
 */
int resctrl_fake__set_num_rmids(struct resctrl_fake *f, unsigned int nr);
int resctrl_fake__set_occupancy(struct resctrl_fake *f, const char *group, unsigned int dom,
				uint64_t bytes);
int resctrl_fake__add_mbm(struct resctrl_fake *f, const char *group, enum resctrl_event ev,
			  unsigned int dom, uint64_t bytes);
/* text "Unavailable", "Error", "Unassigned"; NULL goes back to the number. */
int resctrl_fake__set_mon_state(struct resctrl_fake *f, const char *group, enum resctrl_event ev,
				unsigned int dom, const char *text);
/* Every counter of the group back to 0, as when its RMID is reallocated. */
int resctrl_fake__reset_counters(struct resctrl_fake *f, const char *group);
/* Freed RMIDs wait in limbo (mkdir -> EBUSY when nothing else is free) until aged. */
/* info/last_cmd_status as a failed command leaves it (NULL or "" = "ok"): fault injection. */
void resctrl_fake__set_status(struct resctrl_fake *f, const char *msg);
unsigned int resctrl_fake__nr_limbo(const struct resctrl_fake *f);
void resctrl_fake__age_limbo(struct resctrl_fake *f);

#endif
