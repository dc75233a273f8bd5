/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_CAPS_H
#define KQOS_USER_CAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The capabilities kqosd needs, checked once at start so that a container or unit that grants
 * too few fails with one line naming what is missing and what it is for, instead of a libbpf
 * EPERM or (CAP_DAC_READ_SEARCH) cgroups that silently never resolve. docs/deploy.md has the
 * set and why each one.
 */

/*
 * Which needed capabilities @eff (a CapEff bit mask) lacks, as "CAP_X (what for), ..." in @buf.
 * CAP_SYS_ADMIN stands in for CAP_BPF and CAP_PERFMON, as the kernel lets it. CAP_CHOWN is
 * needed only when the socket is handed to a group. Returns how many are missing.
 */
int caps_missing(uint64_t eff, bool socket_group, char *buf, size_t len);

/* This process's effective set from /proc/self/status; 0 or -errno. */
int caps_effective(uint64_t *ret);

#endif
