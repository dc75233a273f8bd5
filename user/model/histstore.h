/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_HISTSTORE_H
#define KQOS_MODEL_HISTSTORE_H

#include <stddef.h>
#include <linux/types.h>

#include "counters.h"

/*
 * The last read wait histogram of each cgroup, in the order of the collector's sorted list,
 * and the increases of the latest read. An increase holds only its span's slots (a read's
 * increase with span {lo, hi} is given by a pointer to slot lo, as sample.h says), packed in
 * one pool that the next read reuses: at 5000 cgroups a full 1 KiB increase per cgroup was
 * 5 MB of the agent's memory, the spans about a quarter of it. Pure.
 */
struct hist_store {
	__u64 *ids; /* sorted: the cgroups of the last sync */
	__u32 (*last)[KQOS_HIST_SLOTS]; /* each one's last read, cumulative (wrapping u32) */
	size_t n;
	__u32 *pool; /* this read's increases, back to back */
	size_t pool_used, pool_cap; /* in slots: room for every cgroup's whole histogram */
};

void hist_store_fini(struct hist_store *s);
/*
 * A new read begins: the last read's increases are gone. Follow @buf's cgroups (sorted by
 * cgid): those that stay keep their last read, new ones start from zero. Cheap when nothing
 * changed. -ENOMEM keeps the old store (and no increase can be handed out this read).
 */
int hist_store_sync(struct hist_store *s, const struct cg_totals *buf, size_t n);
/*
 * Entry @i (@buf's index at the sync) was read as @now: its increase, with the span that
 * holds it in *@span; valid until the next sync. Blocks that did not move are not written,
 * so that a read costs what moved, not 2 KiB. NULL (nothing changed) when the pool is full: a
 * cgroup read twice in one read.
 */
const __u32 *hist_store_read(struct hist_store *s, size_t i, const __u32 *now,
			     struct hist_span *span);
/* The same for a histogram kept per CPU: @nrows copies of KQOS_HIST_SLOTS, summed. */
const __u32 *hist_store_read_rows(struct hist_store *s, size_t i, const __u32 *rows, int nrows,
				  struct hist_span *span);

#endif
