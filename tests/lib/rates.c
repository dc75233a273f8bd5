// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "rates.h"

size_t test_rates(const struct cg_totals *prev, size_t nprev, const struct cg_totals *cur,
		  size_t ncur, __u64 dt_ns, const struct pmu_event_cfg *ev, int n,
		  struct test_rate *out, size_t cap)
{
	struct cg_delta *d = calloc(ncur + 1, sizeof(*d));
	size_t nd, k = 0;

	if (!d)
		return 0;
	nd = sample_deltas(prev, nprev, cur, ncur, dt_ns, d);
	for (size_t i = 0; i < nd && k < cap; i++) {
		struct cg_acc a = { 0 };
		struct cg_cum c = { .cgid = d[i].d.cgid };

		if (!cg_delta_active(&d[i]))
			continue;
		cg_cum_add_delta(&c, &d[i].d);
		cg_acc_add(&a, &d[i]);
		memset(&out[k], 0, sizeof(out[k]));
		out[k].cgid = d[i].d.cgid;
		out[k].st.pmu = &out[k].pmu;
		sample_stats(&a, &c, d[i].d.rq_hist, d[i].d.rq_span, dt_ns, ev, n, &out[k].st);
		k++;
	}
	free(d);
	return k;
}
