/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_AGENT_H
#define KQOS_USER_AGENT_H

#include "opts.h"

/*
 * Run kqosd: load the collector, then one thread, one epoll loop over a timerfd (sampling), a
 * signalfd (SIGINT/SIGTERM stop, SIGHUP reload) and the BPF ring buffer. Returns 0 after a
 * clean stop (or after the --once sample), -errno when start-up failed.
 */
int agent_run(struct kqos_opts *opts);

#endif
