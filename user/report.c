// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "report.h"

void fmt_ns(char *buf, size_t len, unsigned long long ns)
{
	if (ns < 1000)
		snprintf(buf, len, "%lluns", ns);
	else if (ns < 1000000)
		snprintf(buf, len, "%.3gus", ns / 1e3);
	else if (ns < 1000000000)
		snprintf(buf, len, "%.3gms", ns / 1e6);
	else
		snprintf(buf, len, "%.3gs", ns / 1e9);
}

/* Events with the roles CPI needs, in the collector's order. */
static void pmu_cfgs(const struct report_meta *m, struct pmu_event_cfg *ev)
{
	for (int i = 0; i < m->pmu_n; i++)
		ev[i] = *m->pmu[i];
}

static void fmt_cpi(char *buf, size_t len, const struct report_meta *m, const struct cg_rate *r)
{
	struct pmu_event_cfg ev[KQOS_PMU_MAX];
	double cpi;

	pmu_cfgs(m, ev);
	if (rate_cpi(r, ev, m->pmu_n, &cpi))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.2f", cpi);
}

static int by_cpu_desc(const void *a, const void *b)
{
	const struct cg_view *x = a, *y = b;

	if (x->rate.cpu_cores != y->rate.cpu_cores)
		return x->rate.cpu_cores < y->rate.cpu_cores ? 1 : -1;
	return strcmp(x->path, y->path);
}

int report_text(FILE *f, const struct report_meta *m, const struct cg_view *v, size_t n)
{
	struct cg_view *sorted = malloc((n ? n : 1) * sizeof(*sorted));
	char p50[16], p99[16], max[16], cpi[16];

	if (!sorted)
		return -ENOMEM;
	memcpy(sorted, v, n * sizeof(*v));
	qsort(sorted, n, sizeof(*sorted), by_cpu_desc);
	fprintf(f, "# hierarchy %s (%s), interval %.3fs, %zu cgroups ran\n", m->hierarchy, m->mount,
		m->interval_s, n);
	fprintf(f, "%-48s %7s %9s %9s %9s %9s %6s\n", "CGROUP", "CPU", "RUNS/s", "WAIT_P50",
		"WAIT_P99", "WAIT_MAX", "CPI");
	for (size_t i = 0; i < n; i++) {
		const struct cg_rate *r = &sorted[i].rate;

		fmt_ns(p50, sizeof(p50), r->wait_p50_ns);
		fmt_ns(p99, sizeof(p99), r->wait_p99_ns);
		fmt_ns(max, sizeof(max), r->wait_max_ns);
		fmt_cpi(cpi, sizeof(cpi), m, r);
		fprintf(f, "%-48s %7.3f %9.1f %9s %9s %9s %6s\n", sorted[i].path, r->cpu_cores,
			r->runs_per_s, r->waits ? p50 : "-", r->waits ? p99 : "-",
			r->waits ? max : "-", cpi);
	}
	free(sorted);
	return 0;
}

/* "pmu": per event rates and scaling, plus CPI and MPKI where their inputs exist. */
static json_t *pmu_json(const struct report_meta *m, const struct cg_rate *r)
{
	struct pmu_event_cfg ev[KQOS_PMU_MAX];
	json_t *events = json_object(), *o;
	double x;

	pmu_cfgs(m, ev);
	for (int i = 0; i < m->pmu_n; i++)
		json_object_set_new(events, ev[i].name,
				    json_pack("{s:f, s:I, s:f}", "per_s", r->pmu_per_s[i], "count",
					      (json_int_t)r->pmu_count[i], "running_ratio",
					      r->pmu_running_ratio[i]));
	o = json_pack("{s:o}", "events", events);
	if (o && !rate_cpi(r, ev, m->pmu_n, &x))
		json_object_set_new(o, "cpi", json_real(x));
	if (o && !rate_mpki(r, ev, m->pmu_n, &x))
		json_object_set_new(o, "llc_mpki", json_real(x));
	return o;
}

static json_t *cg_json(const struct report_meta *m, const struct cg_view *v)
{
	const struct cg_rate *r = &v->rate;
	json_t *o;

	o = json_pack("{s:s, s:I, s:f, s:f, s:{s:I, s:f, s:I, s:I, s:I}}", "path", v->path,
		      "cgroup_id", (json_int_t)r->cgid, "cpu_cores", r->cpu_cores, "runs_per_s",
		      r->runs_per_s, "rq_wait", "count", (json_int_t)r->waits, "mean_ns",
		      r->wait_mean_ns, "p50_ns", (json_int_t)r->wait_p50_ns, "p99_ns",
		      (json_int_t)r->wait_p99_ns, "max_ns", (json_int_t)r->wait_max_ns);
	/* Absent, not zero, when the host counts no PMU event. */
	if (o && m->pmu_n)
		json_object_set_new(o, "pmu", pmu_json(m, r));
	return o;
}

int report_json(FILE *f, const struct report_meta *m, const struct cg_view *v, size_t n)
{
	json_t *root, *arr, *pmu;
	int err = 0;

	arr = json_array();
	pmu = json_array();
	root = json_pack("{s:s, s:s, s:f, s:I, s:o, s:o}", "hierarchy", m->hierarchy, "mount",
			 m->mount, "interval_s", m->interval_s, "dropped_switches",
			 (json_int_t)m->dropped, "pmu_events", pmu, "cgroups", arr);
	if (!root || !arr) {
		json_decref(arr);
		return -ENOMEM;
	}
	for (int i = 0; i < m->pmu_n; i++)
		json_array_append_new(pmu, json_string(m->pmu[i]->name));
	for (size_t i = 0; i < n && !err; i++)
		err = json_array_append_new(arr, cg_json(m, &v[i])) ? -ENOMEM : 0;
	if (!err && json_dumpf(root, f, JSON_INDENT(2) | JSON_REAL_PRECISION(6)))
		err = -EIO;
	fputc('\n', f);
	json_decref(root);
	return err;
}
