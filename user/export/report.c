// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "snapjson.h"

struct row {
	char name[160];
	const char *cls;
	const struct snap_stats *st;
};

static int by_cpu_desc(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	double cx = x->st->has_cpu ? x->st->cpu_cores : -1,
	       cy = y->st->has_cpu ? y->st->cpu_cores : -1;

	if (cx != cy)
		return cx < cy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void print_row(FILE *f, const struct row *r)
{
	const struct snap_stats *st = r->st;
	char cpu[16] = "-", runs[16] = "-", p50[16] = "-", p99[16] = "-", max[16] = "-",
	     cpi[16] = "-", thr[16] = "-";

	if (st->has_cpu) {
		snprintf(cpu, sizeof(cpu), "%.3f", st->cpu_cores);
		snprintf(runs, sizeof(runs), "%.1f", st->runs_per_s);
	}
	if (st->has_cpu && st->rq_waits) {
		fmt_ns(p50, sizeof(p50), st->rq_p50_ns);
		fmt_ns(p99, sizeof(p99), st->rq_p99_ns);
		fmt_ns(max, sizeof(max), st->rq_max_ns);
	}
	if (st->has_throttle)
		snprintf(thr, sizeof(thr), "%.1f%%", st->throttled_ratio * 100);
	if (st->has_cpi)
		snprintf(cpi, sizeof(cpi), "%.2f", st->cpi);
	fprintf(f, "%-44s %-6s %7s %9s %9s %9s %9s %7s %6s\n", r->name, r->cls, cpu, runs, p50, p99,
		max, thr, cpi);
}

static size_t pod_rows(const struct snapshot *s, struct row *rows)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_pods; i++) {
		const struct pod *p = s->pods[i].pod;
		struct row *r = &rows[n++];

		if (p->name && p->namespace && !p->is_static)
			snprintf(r->name, sizeof(r->name), "%s/%s", p->namespace, p->name);
		else
			snprintf(r->name, sizeof(r->name), "%s",
				 p->name ? p->name :
					   (s->pods[i].cgroup ? s->pods[i].cgroup : p->uid));
		r->cls = *pod_qos_name(p->qos) ? pod_qos_name(p->qos) : "-";
		r->st = &s->pods[i].st;
	}
	return n;
}

int report_text(FILE *f, const struct snapshot *s)
{
	struct row *rows = calloc(s->nr_pods + s->nr_others + 1, sizeof(*rows));
	size_t n;

	if (!rows)
		return -ENOMEM;
	fprintf(f, "# %s (%s), interval %.3fs, pods from %s%s: %zu, node CPUs %u", s->hierarchy,
		s->mount, s->interval_s, s->pod_source, s->pods_stale ? " (stale)" : "", s->nr_pods,
		s->node.nr_cpus);
	if (s->node.has_cpu_usage)
		fprintf(f, ", used %.3f", s->node.cpu_cores_used);
	fputc('\n', f);
	fprintf(f, "%-44s %-6s %7s %9s %9s %9s %9s %7s %6s\n", "POD/CGROUP", "CLASS", "CPU",
		"RUNS/s", "WAIT_P50", "WAIT_P99", "WAIT_MAX", "THROT", "CPI");
	n = pod_rows(s, rows);
	qsort(rows, n, sizeof(*rows), by_cpu_desc);
	for (size_t i = 0; i < n; i++)
		print_row(f, &rows[i]);
	for (size_t i = 0; i < s->nr_others; i++) {
		snprintf(rows[i].name, sizeof(rows[i].name), "%s", s->others[i].cgroup);
		rows[i].cls = "-";
		rows[i].st = &s->others[i].st;
	}
	qsort(rows, s->nr_others, sizeof(*rows), by_cpu_desc);
	for (size_t i = 0; i < s->nr_others; i++)
		print_row(f, &rows[i]);
	free(rows);
	return 0;
}

int report_json(FILE *f, const struct snapshot *s, const struct snap_enforce *en)
{
	char *text = snapjson_format(s, en, true);

	if (!text)
		return -ENOMEM;
	fprintf(f, "%s\n", text);
	free(text);
	return 0;
}
