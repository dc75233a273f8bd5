/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_PMU_H
#define KQOS_COLLECT_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "counters.h"

/* From <linux/perf_event.h> or libpfm4's copy of it, which cannot both be included. */
struct perf_event_attr;

/*
 * Node-wide PMU counters: one perf event per CPU per configured event (pid = -1), whose fds go
 * into the collector's PERF_EVENT_ARRAY maps; the BPF side charges deltas per cgroup. Event
 * names are encoded with libpfm4: generic perf names ("cycles", "instructions",
 * "LLC-LOAD-MISSES", "context-switches", "task-clock") and the host PMU's own names
 * ("INST_RETIRED.ANY" or "INST_RETIRED:ANY").
 */

#define PMU_LIBPFM "libpfm.so.4" /* libpfm4's soname (Debian libpfm4) */

/*
 * Encode @name for perf_event_open (counting, user+kernel); @attr may be NULL to only check
 * the name. -ENOENT with a message listing the choices in @err when libpfm4 does not know it.
 */
int pmu_encode(const char *name, struct perf_event_attr *attr, char *err, size_t err_len);
/*
 * Unload libpfm4 (loaded by the first pmu_encode): the agent calls it once its events are
 * open. A later pmu_encode loads it again.
 */
void pmu_unload_names(void);

struct pmu_set;

/*
 * Encode and open @n events on every online CPU. An event that cannot be opened on any CPU
 * (no hardware PMU: ENOENT) is dropped; all dropped events are named in one log line. Events
 * that opened keep their order. Returns 0 even when nothing opened (count == 0), -errno for
 * an unknown event name or a failure to allocate.
 */
int pmu_set__open(const struct pmu_event_cfg *ev, int n, const char *sys_root,
		  struct pmu_set **ret);
void pmu_set__free(struct pmu_set *s);

/* Events that opened, in the order they are charged (index = BPF event index). */
int pmu_set__count(const struct pmu_set *s);
const struct pmu_event_cfg *pmu_set__event(const struct pmu_set *s, int i);

/*
 * Whether event @i can be multiplexed (a hardware event): only then are its enabled/running
 * times worth reading at every switch (each costs a clock read in the kernel).
 */
bool pmu_set__needs_times(const struct pmu_set *s, int i);

/* Put the fds of event @i into @map_fd (a PERF_EVENT_ARRAY keyed by CPU). */
int pmu_set__install(struct pmu_set *s, int i, int map_fd);

/*
 * Whether a per-CPU event's enabled time (now @enabled) kept pace with CLOCK_MONOTONIC since
 * the last call with the same @last_* (zero them to start): false on the first call.
 */
bool pmu_enabled_fell_behind(uint64_t *last_enabled, uint64_t *last_ns, uint64_t enabled);

/*
 * CPU hotplug: re-open events on CPUs that came online (or went and came back) and install the
 * new fds in @map_fds. Returns how many CPUs changed, or -errno.
 */
int pmu_set__refresh(struct pmu_set *s, const int *map_fds);

#endif
