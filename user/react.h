/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_REACT_H
#define KQOS_USER_REACT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "collector.h"
#include "enforce.h"
#include "snapshot.h"

/*
 * The event path, between ticks: the kernel's LS_WAIT records go to the strategies that react
 * (the latency guard) and their plan to the actuator at once; a cgroup created or removed
 * below a watched root asks for a tick soon; a reacting strategy's own deadline (a relax) is
 * kept with a timer. After each tick the reactor tells the kernel which cgroups to watch.
 */
struct reactor;

int reactor__new(struct collector *col, struct enforcer *enf, struct reactor **ret);
void reactor__free(struct reactor *r);

/* Timers for the agent's epoll: a tick soon (cgroups changed), a strategy's deadline. */
int reactor__soon_fd(const struct reactor *r);
int reactor__deadline_fd(const struct reactor *r);
/* Read the fd's expiry; true when it had fired. */
bool reactor__ack(int fd);
/* Ask for a tick @ns from now (a pending request stays as it is). */
void reactor__soon_in(struct reactor *r, uint64_t ns);
/* The soon timer fired (and may be armed again): tick now. */
bool reactor__take_soon(struct reactor *r);

/*
 * After a tick: watch the LS cgroups of @s, report attaches into its pods' cgroups, and hear of
 * cgroups below @roots (the kubepods dir, the bare-metal groups' parents).
 */
void reactor__sync(struct reactor *r, const struct snapshot *s, const uint64_t *roots,
		   size_t nr_roots);

/*
 * The ring buffer is readable: drain it, react to LS waits on @s (NULL before the first
 * snapshot: nothing to decide on), fill @en when something was decided. Returns true when
 * cgroups came or went below a root: the agent should tick soon (the soon timer is armed).
 */
bool reactor__on_events(struct reactor *r, const struct snapshot *s, struct snap_enforce *en);
/* The deadline timer fired: let the reacting strategies look again without events. */
void reactor__on_deadline(struct reactor *r, const struct snapshot *s, struct snap_enforce *en);
/* Re-arm the deadline after a tick or a reaction. */
void reactor__arm(struct reactor *r);
/* Reaction figures into @en->guard (kept across the enforcer's fills). */
void reactor__fill(const struct reactor *r, struct snap_enforce *en);

#endif
