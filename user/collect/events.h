/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_EVENTS_H
#define KQOS_COLLECT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "cgstat.h"
#include "counters.h"

/*
 * The kernel's urgent events (bpf/cgstat.h: an LS cgroup that waited past its target, cgroups
 * created or removed below a watched root, tasks joining a managed cgroup) and the maps that
 * say which cgroups matter: `watch` (LS cgroups and their wait targets), `roots` and `managed`.
 * The collector owns one; the agent drains its queue after each wake of the ring buffer.
 */
struct kevents;

/* The BPF object's maps and the mmap'ed global holding the smallest target. */
struct kevents_maps {
	int ringbuf_fd, watch_fd, roots_fd, managed_fd;
	volatile __u64 *watch_min_ns;
	volatile __u32 *fork_events;
	int ncpus; /* possible CPUs: the per-CPU watch values */
};

#define KEVENTS_QUEUE 4096 /* records kept between two drains; beyond, counted as lost */

int kevents__new(const struct kevents_maps *m, struct kevents **ret);
void kevents__free(struct kevents *e);

int kevents__epoll_fd(const struct kevents *e);
/* Move what the ring buffer holds into the queue; the number of records or -errno. */
int kevents__consume(struct kevents *e);
/* The queue, oldest first; valid until kevents__clear. */
size_t kevents__queued(const struct kevents *e, const struct kqos_event **ret);
void kevents__clear(struct kevents *e);
/* Records the queue had no room for, since start. */
__u64 kevents__lost(const struct kevents *e);

/*
 * Make the maps hold exactly these entries: only the differences are written, so a steady set
 * costs no syscall. Duplicates are allowed (for watches the smallest target wins). -ENOSPC
 * past the map's size (nothing beyond it is watched), else 0 or the first -errno.
 */
int kevents__set_watches(struct kevents *e, const struct wait_watch *w, size_t n);
int kevents__set_roots(struct kevents *e, const uint64_t *ids, size_t n);
/* Forks in managed cgroups reported as attaches too (while tasks are placed in resctrl). */
void kevents__set_fork_events(struct kevents *e, bool on);
int kevents__set_managed(struct kevents *e, const uint64_t *ids, size_t n);
size_t kevents__nr_watches(const struct kevents *e);
/* The watched cgroups and their targets (borrowed, valid until the next set_watches). */
size_t kevents__watch_ids(const struct kevents *e, const struct wait_watch **ret);

#endif
