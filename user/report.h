/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_REPORT_H
#define KQOS_USER_REPORT_H

#include <stdio.h>

#include "sample.h"

/* One cgroup's interval, ready to print: rates plus where the cgroup lives. */
struct cg_view {
	const char *path; /* relative to the hierarchy mount; borrowed from the cgid index */
	struct cg_rate rate;
};

struct report_meta {
	const char *hierarchy; /* "v1-cpu" or "v2" */
	const char *mount;
	double interval_s;
	unsigned long long dropped; /* switches lost to a full map */
	int pmu_n; /* PMU events counted; 0 = none on this host */
	const struct pmu_event_cfg *pmu[KQOS_PMU_MAX];
};

/* --once output: a table sorted by CPU use, or one JSON object. Returns 0 or -errno. */
int report_text(FILE *f, const struct report_meta *m, const struct cg_view *v, size_t n);
int report_json(FILE *f, const struct report_meta *m, const struct cg_view *v, size_t n);

/* "812ns", "15.3us", "2.10ms", "1.50s": 3 significant digits. */
void fmt_ns(char *buf, size_t len, unsigned long long ns);

#endif
