/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_RATES_H
#define KQOS_TESTS_RATES_H

#include <stddef.h>

#include "sample.h"

/* One cgroup's rates, as the snapshot would show them for an entity of that cgroup alone. */
struct test_rate {
	__u64 cgid;
	struct snap_stats st;
	struct snap_pmu_stats pmu; /* where st.pmu points */
};

/*
 * The model's path from two collector reads to rates (sample_deltas, cg_acc_add, sample_stats)
 * for each cgroup of @cur that was active, at most @cap. @ev/@n: the PMU events.
 */
size_t test_rates(const struct cg_totals *prev, size_t nprev, const struct cg_totals *cur,
		  size_t ncur, __u64 dt_ns, const struct pmu_event_cfg *ev, int n,
		  struct test_rate *out, size_t cap);

#endif
