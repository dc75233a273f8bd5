/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_HISTSTORE_H
#define KQOS_MODEL_HISTSTORE_H

#include <stddef.h>
#include <linux/types.h>

#include "counters.h"

/*
 * The last read wait histogram of each cgroup and its increase at the latest read, in the
 * order of the collector's sorted list. Two histograms per cgroup, where the tick's two
 * lists of totals and its deltas each carried one, and a tick without a histogram read (9 in
 * 10 at 100 ms) no longer copies 1 KiB per cgroup to carry the last one forward. Pure.
 */
struct hist_store {
	__u64 *ids; /* sorted: the cgroups of the last sync */
	__u32 (*last)[KQOS_HIST_SLOTS]; /* each one's last read, cumulative (wrapping u32) */
	__u32 (*delta)[KQOS_HIST_SLOTS]; /* its increase at that read */
	size_t n, cap;
};

void hist_store_fini(struct hist_store *s);
/*
 * Follow @buf's cgroups (sorted by cgid): those that stay keep their last read, new ones start
 * from zero. Cheap when nothing changed. -ENOMEM keeps the old store.
 */
int hist_store_sync(struct hist_store *s, const struct cg_totals *buf, size_t n);
/*
 * Entry @i (@buf's index at the sync) was read as @now: its increase, stored in delta[i], with
 * the span that holds it in *@span. Only the slots in the span are its: blocks that did not
 * move are not written, so that a read costs what moved, not 2 KiB.
 */
const __u32 *hist_store_read(struct hist_store *s, size_t i, const __u32 *now,
			     struct hist_span *span);
/* The same for a histogram kept per CPU: @nrows copies of KQOS_HIST_SLOTS, summed. */
const __u32 *hist_store_read_rows(struct hist_store *s, size_t i, const __u32 *rows, int nrows,
				  struct hist_span *span);

#endif
