/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_LIVE_H
#define KQOS_TESTS_LIVE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "collector.h"

/*
 * Helpers for live tests: real cgroups under the host's mounts and real processes as load.
 * Every cgroup is named kqos-test-<pid>-<tag> so a later run can sweep what a crashed one left,
 * and every child dies with its parent (PR_SET_PDEATHSIG).
 */
#define LIVE_CG_ROOT "/sys/fs/cgroup"

/* Skip the calling test unless we are root with BTF; returns true when the test may run. */
bool live_require_root(void);

/* Build "<root>/<ctrl>/kqos-test-<pid>-<tag>" into @buf. @ctrl is e.g. "cpu" or "unified". */
void live_cg_path(char *buf, size_t len, const char *ctrl, const char *tag);

/* mkdir the cgroup in @ctrl; 0 or -errno. */
int live_cg_create(const char *ctrl, const char *tag);

/* Move @pid into the cgroup (cgroup.procs). */
int live_cg_attach(const char *ctrl, const char *tag, pid_t pid);

/* Kill what is inside, then rmdir (retrying while the kernel drains it). Safe if absent. */
void live_cg_destroy(const char *ctrl, const char *tag);

/* Remove kqos-test-* cgroups of processes that no longer exist, in every controller. */
void live_sweep_stale(void);

/*
 * Fork a load process: busy for duty_pct % of every 10 ms period (100 = a full-speed loop,
 * 0 = sleep forever). The child starts spinning only after it was placed: call live_go().
 */
pid_t live_spawn(int duty_pct);
void live_go(pid_t pid);
void live_kill(pid_t pid);

/* Read a single integer file (cpuacct.usage, ...). */
int live_read_u64(const char *path, __u64 *ret);
/* Read "key value" out of a flat-keyed file such as cpu.stat. */
int live_read_key(const char *path, const char *key, __u64 *ret);

void live_sleep_ms(unsigned int ms);

/*
 * The collector's totals of cgroup @id, read through @buf (room for @cap entries); zeroes with
 * the cgid set when the cgroup never ran. Asserts that the read worked.
 */
struct cg_totals live_totals(struct collector *c, struct cg_totals *buf, size_t cap, __u64 id);

#endif
