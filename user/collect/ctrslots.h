/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_CTRSLOTS_H
#define KQOS_COLLECT_CTRSLOTS_H

#include <stddef.h>
#include <linux/types.h>

#include "cgstat.h"

/*
 * The counter slots of bpf/cgstat.bpf.c, mapped into user space: a tick reads the counters of
 * the cgroups that hold a slot from memory, without a system call. The collector owns one.
 * Slot i's rows are rows[i * ncpus + cpu]; owners[i] is the cgroup's id, 0 when free. Only the
 * prefix of rows up to the highest slot in use is mapped (mapped pages count as RSS).
 */
struct ctrslots;

struct ctrslots_maps {
	int ctr_fd, owner_fd, slot_fd, free_fd; /* cg_ctr, slot_owner, cg_slot, free_slots */
	volatile __u32 *free_hint; /* the object's slots_free_hint */
	__u32 nslots;
	int ncpus; /* possible CPUs */
};

/* Kernel memory the slots may take by default, and at most: they are allocated up front. */
#define CTRSLOTS_AUTO_BYTES (8U << 20)
#define CTRSLOTS_MAX_BYTES  (1UL << 30)

/* The default slot count: what fits in CTRSLOTS_AUTO_BYTES, at most @capacity. */
__u32 ctrslots_auto(__u32 capacity, int ncpus);

/* Map the arrays and fill the free stack (slot 0 on top). The maps must be loaded. */
int ctrslots__new(const struct ctrslots_maps *m, struct ctrslots **ret);
void ctrslots__free(struct ctrslots *s);

/* The owners (nslots entries), live: BPF writes them as cgroups claim slots. */
const volatile __u64 *ctrslots__owners(const struct ctrslots *s);
/* The rows of slots [0, @upto), mapped on demand; NULL (-errno in errno) if it cannot be. */
const struct kqos_cg_row *ctrslots__rows(struct ctrslots *s, __u32 upto);

/*
 * Give back the slot of @cgid, whose cgroup is gone: its rows are zeroed before another cgroup
 * can claim it. -ENOENT when it held none.
 */
int ctrslots__release(struct ctrslots *s, __u64 cgid);
/* Push again the freed slots the stack refused: 0, or -EAGAIN while some still wait. */
int ctrslots__retry(struct ctrslots *s);
/* Pushes the stack refused since start, and the slots still waiting for one. */
void ctrslots__push_stats(const struct ctrslots *s, __u64 *failures, __u32 *pending);
/* Tell BPF a slot may be free again (a hint: a pop that finds none clears it). */
void ctrslots__hint_free(struct ctrslots *s);

#endif
