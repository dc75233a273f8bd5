// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>

#include "cpulist.h"
#include "units.h"
#include "top.h"

static const struct {
	const char *name;
	int width; /* 0 = the rest of the line */
} cols[NR_COLS] = {
	[COL_NAME] = { "NAME", 36 },	[COL_CLASS] = { "CLASS", 6 },
	[COL_PQ] = { "PRIO/QOS", 14 },	[COL_CPU] = { "CPU", 6 },
	[COL_RQ_P99] = { "RQ_P99", 8 }, [COL_THR] = { "THR%", 6 },
	[COL_CPI] = { "CPI", 5 },	[COL_LLC] = { "LLC_MiB", 8 },
	[COL_MBPS] = { "MB/s", 8 },	[COL_CPUSET] = { "CPUSET", 12 },
	[COL_RDT] = { "RDT", 0 },
};

const char *top_col_name(enum top_col col)
{
	return cols[col].name;
}

int top_col_width(enum top_col col)
{
	return cols[col].width;
}

/* --- JSON -> rows ------------------------------------------------------------------------- */

static const char *jstr(const json_t *o, const char *k)
{
	const char *s = json_string_value(json_object_get(o, k));

	return s ? s : "";
}

static bool jnum(const json_t *o, const char *k, double *ret)
{
	const json_t *v = json_object_get(o, k);

	if (!json_is_number(v))
		return false;
	*ret = json_number_value(v);
	return true;
}

/*
 * Wall-clock seconds from the socket as local time. The number comes from whatever answers at
 * the socket path: one that is no time_t (NaN, negative, past year 9999) shows as 00:00:00,
 * since converting it would be undefined.
 */
static void local_tm(double ts, struct tm *tm)
{
	time_t t = ts >= 0 && ts < 253402300800.0 ? (time_t)ts : 0;

	if (!localtime_r(&t, tm))
		memset(tm, 0, sizeof(*tm));
}

/* Names come from the cluster: a control character must not move the cursor or break a line. */
static void sanitize(char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 127)
			*s = '?';
}

static void set(struct top_row *r, enum top_col c, bool has, double v)
{
	r->has[c] = has;
	r->v[c] = v;
}

/* The per-entity columns that come from `stats` (absent keys stay absent). */
static void row_stats(struct top_row *r, const json_t *st)
{
	const json_t *thr = json_object_get(st, "throttle");
	const json_t *pmu = json_object_get(st, "pmu");
	double v;

	r->has[COL_CPU] = jnum(st, "cpu_cores", &r->v[COL_CPU]);
	r->has[COL_RQ_P99] = jnum(json_object_get(st, "rq_wait"), "p99_ns", &r->v[COL_RQ_P99]);
	if (thr && jnum(thr, "throttled_ratio", &v))
		set(r, COL_THR, true, v * 100);
	r->has[COL_CPI] = jnum(pmu, "cpi", &r->v[COL_CPI]);
}

/* LLC and bandwidth of a resctrl group, summed over cache ids; absent without monitoring. */
static void row_rdt(struct top_row *r, const json_t *g)
{
	const json_t *d;
	size_t i;
	double llc = 0, bps = 0, v;
	bool has_llc = false, has_bps = false;

	snprintf(r->rdt, sizeof(r->rdt), "%s", jstr(g, "group"));
	json_array_foreach(json_object_get(g, "domains"), i, d) {
		if (jnum(d, "llc_occupancy_bytes", &v)) {
			llc += v;
			has_llc = true;
		}
		if (jnum(d, "mbm_total_bytes_per_s", &v)) {
			bps += v;
			has_bps = true;
		}
	}
	set(r, COL_LLC, has_llc, llc / (1 << 20));
	set(r, COL_MBPS, has_bps, bps / 1e6);
}

/* The pod's own resctrl group, else its class group: what its tasks are placed in. */
static const json_t *rdt_group_of(const json_t *root, const char *uid, const char *cls,
				  bool *is_own)
{
	const json_t *groups = json_object_get(json_object_get(root, "resctrl"), "groups");
	const json_t *g, *cls_g = NULL;
	size_t i;

	json_array_foreach(groups, i, g) {
		if (*uid && !strcmp(jstr(g, "pod_uid"), uid)) {
			*is_own = true;
			return g;
		}
		if (*cls && !strcmp(jstr(g, "class"), cls))
			cls_g = g;
	}
	*is_own = false;
	return cls_g;
}

static void pod_row(const json_t *root, const json_t *p, struct top_row *r)
{
	const json_t *en = json_object_get(root, "enforcement"), *g, *c;
	const char *uid = jstr(p, "uid"), *cls = jstr(p, "qos_class");
	bool own = false;
	size_t i;

	r->depth = 0;
	snprintf(r->key, sizeof(r->key), "pod:%s", uid);
	if (json_is_true(json_object_get(p, "bare_metal")))
		snprintf(r->name, sizeof(r->name), "%s", jstr(p, "name"));
	else
		snprintf(r->name, sizeof(r->name), "%s/%s", jstr(p, "namespace"), jstr(p, "name"));
	sanitize(r->name);
	snprintf(r->cls, sizeof(r->cls), "%s", *cls ? cls : "-");
	snprintf(r->pq, sizeof(r->pq), "%s", jstr(p, "priority_qos_class"));
	row_stats(r, json_object_get(p, "stats"));
	/* what the cgroup runs on; else the scheduler's cpuset, or the BE cpuset kqos keeps */
	if (*jstr(p, "cpuset"))
		snprintf(r->cpuset, sizeof(r->cpuset), "%s", jstr(p, "cpuset"));
	else if (*jstr(p, "cpuset_status"))
		snprintf(r->cpuset, sizeof(r->cpuset), "%s", jstr(p, "cpuset_status"));
	else if (!strcmp(cls, "BE") && *jstr(en, "be_cpus"))
		snprintf(r->cpuset, sizeof(r->cpuset), "%s", jstr(en, "be_cpus"));
	g = rdt_group_of(root, uid, cls, &own);
	if (g && own)
		row_rdt(r, g);
	else if (g) /* class group: its numbers are the class's, not this pod's */
		snprintf(r->rdt, sizeof(r->rdt), "%s", jstr(g, "group"));
	r->nr_kids = json_array_size(json_object_get(p, "containers"));
	r->kids = calloc(r->nr_kids ? r->nr_kids : 1, sizeof(*r->kids));
	if (!r->kids) {
		r->nr_kids = 0;
		return;
	}
	json_array_foreach(json_object_get(p, "containers"), i, c) {
		struct top_row *k = &r->kids[i];

		k->depth = 1;
		snprintf(k->key, sizeof(k->key), "ctr:%s/%s", uid, jstr(c, "name"));
		snprintf(k->name, sizeof(k->name), "%s", jstr(c, "name"));
		sanitize(k->name);
		snprintf(k->cls, sizeof(k->cls), "%s", r->cls);
		snprintf(k->pq, sizeof(k->pq), "%s", r->pq);
		row_stats(k, json_object_get(c, "stats"));
		/* containers live in the pod's resctrl group, and its cpuset unless they say */
		snprintf(k->cpuset, sizeof(k->cpuset), "%s",
			 *jstr(c, "cpuset") ? jstr(c, "cpuset") : r->cpuset);
		snprintf(k->rdt, sizeof(k->rdt), "%s", r->rdt);
	}
}

static void other_row(const json_t *o, struct top_row *r)
{
	r->depth = 0;
	snprintf(r->key, sizeof(r->key), "cg:%s", jstr(o, "cgroup"));
	snprintf(r->name, sizeof(r->name), "%s", jstr(o, "cgroup"));
	sanitize(r->name);
	snprintf(r->cls, sizeof(r->cls), "-");
	row_stats(r, json_object_get(o, "stats"));
}

static void hdr_classes(struct top_header *h, const json_t *root)
{
	const json_t *classes = json_object_get(root, "classes"), *c;
	const char *name;
	size_t off = 0;
	double v;

	json_object_foreach((json_t *)classes, name, c) {
		int pods = (int)json_integer_value(json_object_get(c, "pods"));

		if (!jnum(c, "cpu_cores", &v))
			v = 0;
		if (!strcmp(name, "LSE") || !strcmp(name, "LSR") || !strcmp(name, "LS"))
			h->ls_cores += v;
		else if (!strcmp(name, "BE"))
			h->be_cores += v;
		if (!pods || off >= sizeof(h->classes))
			continue;
		off += (size_t)snprintf(h->classes + off, sizeof(h->classes) - off, "%s%s %dp %.2f",
					off ? "  " : "", name, pods, v);
	}
}

/*
 * snprintf() at @off into @buf, @off clamped to the end: snprintf returns what it would have
 * written, so a long field (a quota of 1e308 prints 309 digits) moved the next write past @buf.
 */
static size_t __attribute__((format(printf, 4, 5)))
append(char *buf, size_t size, size_t off, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (off >= size)
		return size;
	va_start(ap, fmt);
	n = vsnprintf(buf + off, size - off, fmt, ap);
	va_end(ap);
	if (n < 0)
		return off;
	return off + (size_t)n < size ? off + (size_t)n : size;
}

static void hdr_enforce(struct top_header *h, const json_t *root)
{
	const json_t *en = json_object_get(root, "enforcement"), *a;
	const size_t size = sizeof(h->allowance);
	struct cpumask cpus;
	size_t off = 0, i;
	double q;

	if (!en) {
		snprintf(h->allowance, size, "enforcement: unknown");
		return;
	}
	if (*jstr(en, "be_cpus") && !cpulist_parse(jstr(en, "be_cpus"), &cpus))
		off = append(h->allowance, size, off, "BE cpus %s (%u)  ", jstr(en, "be_cpus"),
			     cpumask_count(&cpus));
	else
		off = append(h->allowance, size, off, "BE cpus -  ");
	if (jnum(en, "be_cfs_quota_us", &q) && q >= 0)
		off = append(h->allowance, size, off, "quota %.0fus  ", q);
	else if (jnum(en, "be_cfs_quota_us", &q))
		off = append(h->allowance, size, off, "quota unlimited  ");
	else
		off = append(h->allowance, size, off, "quota -  ");
	append(h->allowance, size, off, "enforcement %s%s  write errors %lld",
	       json_is_true(json_object_get(en, "enabled")) ? "on" : "off",
	       json_is_true(json_object_get(en, "dry_run")) ? " (dry-run)" : "",
	       json_integer_value(json_object_get(en, "write_errors")));
	json_array_foreach(json_object_get(en, "recent"), i, a) {
		struct tm tm;
		double ts = 0;

		if (h->nr_recent >= TOP_RECENT)
			break;
		jnum(a, "time", &ts);
		local_tm(ts, &tm);
		snprintf(h->recent[h->nr_recent++], sizeof(h->recent[0]),
			 "%02d:%02d:%02d %s %s %s=%s %s (%s)", tm.tm_hour, tm.tm_min, tm.tm_sec,
			 jstr(a, "strategy"), jstr(a, "cgroup"), jstr(a, "knob"), jstr(a, "value"),
			 jstr(a, "result"), jstr(a, "why"));
		sanitize(h->recent[h->nr_recent - 1]);
	}
}

static void hdr_resctrl(struct top_header *h, const json_t *root)
{
	const json_t *rdt = json_object_get(root, "resctrl"), *g;
	size_t off = 0, i;

	if (!rdt || !json_is_true(json_object_get(rdt, "enabled"))) {
		snprintf(h->resctrl, sizeof(h->resctrl), "-");
		return;
	}
	json_array_foreach(json_object_get(rdt, "groups"), i, g) {
		if (!*jstr(g, "class") || off >= sizeof(h->resctrl))
			continue; /* pod groups show in the table */
		off += (size_t)snprintf(h->resctrl + off, sizeof(h->resctrl) - off, "%s%s %s",
					off ? " | " : "", jstr(g, "group"), jstr(g, "schemata"));
	}
	if (!off)
		snprintf(h->resctrl, sizeof(h->resctrl), "no class groups");
	sanitize(h->resctrl);
}

static void parse_header(struct top_header *h, const json_t *root)
{
	const json_t *node = json_object_get(root, "node");
	const json_t *src = json_object_get(root, "pod_source");
	double v = 0;

	h->seq = (unsigned long long)json_integer_value(json_object_get(root, "seq"));
	/* the wall clock of this view, as top shows it (the JSON time has 6 digits only) */
	h->time = (double)time(NULL);
	h->cpus = (int)json_integer_value(json_object_get(node, "cpus"));
	h->has_cpu_used = jnum(node, "cpu_cores_used", &h->cpu_used);
	snprintf(h->source, sizeof(h->source), "%s", jstr(src, "kind"));
	h->stale = json_is_true(json_object_get(src, "stale"));
	h->nr_pods = json_array_size(json_object_get(root, "pods"));
	(void)v;
	hdr_classes(h, root);
	hdr_enforce(h, root);
	hdr_resctrl(h, root);
}

int top_model__parse(const char *json, struct top_model **ret)
{
	json_t *root = json_loads(json, 0, NULL), *p;
	struct top_model *m;
	size_t nr_pods, nr_cg, i;

	if (!root || !json_is_object(root) || !json_object_get(root, "pods")) {
		json_decref(root);
		return -EINVAL;
	}
	m = calloc(1, sizeof(*m));
	nr_pods = json_array_size(json_object_get(root, "pods"));
	nr_cg = json_array_size(json_object_get(root, "cgroups"));
	if (m)
		m->rows = calloc(nr_pods + nr_cg + 1, sizeof(*m->rows));
	if (!m || !m->rows) {
		free(m);
		json_decref(root);
		return -ENOMEM;
	}
	parse_header(&m->hdr, root);
	json_array_foreach(json_object_get(root, "pods"), i, p)
		pod_row(root, p, &m->rows[m->nr_rows++]);
	json_array_foreach(json_object_get(root, "cgroups"), i, p)
		other_row(p, &m->rows[m->nr_rows++]);
	json_decref(root);
	*ret = m;
	return 0;
}

void top_model__free(struct top_model *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nr_rows; i++)
		free(m->rows[i].kids);
	free(m->rows);
	free(m);
}

/* --- sort and filter ---------------------------------------------------------------------- */

static enum top_col sort_col;
static bool sort_desc;

static const char *text_of(const struct top_row *r, enum top_col c)
{
	if (c == COL_CLASS)
		return r->cls;
	if (c == COL_PQ)
		return r->pq;
	if (c == COL_CPUSET)
		return r->cpuset;
	if (c == COL_RDT)
		return r->rdt;
	return r->name;
}

static bool is_text(enum top_col c)
{
	return c == COL_NAME || c == COL_CLASS || c == COL_PQ || c == COL_CPUSET || c == COL_RDT;
}

static int cmp_rows(const void *a, const void *b)
{
	const struct top_row *x = a, *y = b;
	int d = 0;

	if (is_text(sort_col)) {
		d = strcmp(text_of(x, sort_col), text_of(y, sort_col));
		d = sort_desc ? -d : d;
	} else if (x->has[sort_col] != y->has[sort_col]) {
		return x->has[sort_col] ? -1 : 1; /* absent last, whatever the order */
	} else if (x->has[sort_col] && x->v[sort_col] != y->v[sort_col]) {
		d = x->v[sort_col] < y->v[sort_col] ? -1 : 1;
		d = sort_desc ? -d : d;
	}
	/* ties by name, then key: rows never jump between refreshes */
	if (!d)
		d = strcmp(x->name, y->name);
	return d ? d : strcmp(x->key, y->key);
}

void top_model__sort(struct top_model *m, enum top_col col, bool descending)
{
	sort_col = col;
	sort_desc = descending;
	qsort(m->rows, m->nr_rows, sizeof(*m->rows), cmp_rows);
	for (size_t i = 0; i < m->nr_rows; i++)
		if (m->rows[i].nr_kids)
			qsort(m->rows[i].kids, m->rows[i].nr_kids, sizeof(*m->rows), cmp_rows);
}

static bool row_matches(const struct top_row *r, const char *f)
{
	return strcasestr(r->name, f) || strcasestr(r->cls, f) || strcasestr(r->pq, f) ||
	       strcasestr(r->rdt, f);
}

bool top_row__matches(const struct top_row *r, const char *filter)
{
	if (!filter || !*filter || row_matches(r, filter))
		return true;
	for (size_t i = 0; i < r->nr_kids; i++)
		if (row_matches(&r->kids[i], filter))
			return true;
	return false;
}

/* --- text --------------------------------------------------------------------------------- */

void top_cell(const struct top_row *r, enum top_col col, char *buf, size_t len)
{
	const char *t;

	switch (col) {
	case COL_NAME:
	case COL_CLASS:
	case COL_PQ:
	case COL_CPUSET:
	case COL_RDT:
		t = text_of(r, col);
		snprintf(buf, len, "%s", *t ? t : "-");
		return;
	default:
		break;
	}
	if (!r->has[col]) {
		snprintf(buf, len, "-");
		return;
	}
	if (col == COL_RQ_P99)
		fmt_ns(buf, len, r->v[col]);
	else if (col == COL_THR)
		snprintf(buf, len, "%.1f", r->v[col]);
	else if (col == COL_LLC || col == COL_MBPS)
		snprintf(buf, len, "%.1f", r->v[col]);
	else
		snprintf(buf, len, "%.2f", r->v[col]);
}

static size_t put_col(char *buf, size_t len, size_t off, enum top_col c, const char *text)
{
	int w = cols[c].width;
	bool right = !is_text(c);

	if (off >= len)
		return off;
	if (!w)
		return off + (size_t)snprintf(buf + off, len - off, "%s", text);
	if ((int)strlen(text) > w) /* keep the tail: it is the distinguishing part of a path */
		text += strlen(text) - (size_t)w + 1;
	off += (size_t)snprintf(buf + off, len - off, right ? "%*.*s " : "%-*.*s ", w, w, text);
	return off;
}

void top_format_title(char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < NR_COLS; c++)
		off = put_col(buf, len, off, c, cols[c].name);
}

void top_format_row(const struct top_row *r, const char *tree, char *buf, size_t len)
{
	char cell[192], name[192];
	size_t off = 0;

	buf[0] = '\0';
	snprintf(name, sizeof(name), "%s%s", tree, r->name);
	off = put_col(buf, len, off, COL_NAME, name);
	for (int c = 1; c < NR_COLS; c++) {
		top_cell(r, c, cell, sizeof(cell));
		off = put_col(buf, len, off, c, cell);
	}
}

int top_header_lines(const struct top_header *h, char lines[][TOP_LINE], int max)
{
	char used[64] = "-";
	int n = 0;
	struct tm tm;

	local_tm(h->time, &tm);
	if (h->has_cpu_used)
		snprintf(used, sizeof(used), "%.2f of %d (%.0f%%)", h->cpu_used, h->cpus,
			 h->cpus ? 100 * h->cpu_used / h->cpus : 0);
	if (n < max)
		snprintf(lines[n++], TOP_LINE,
			 "kqos-top %02d:%02d:%02d  seq %llu  cpu used %s  pods %zu  source %s%s",
			 tm.tm_hour, tm.tm_min, tm.tm_sec, h->seq, used, h->nr_pods, h->source,
			 h->stale ? " (stale)" : "");
	if (n < max)
		snprintf(lines[n++], TOP_LINE, "classes: LS %.2f | BE %.2f cores   %s", h->ls_cores,
			 h->be_cores, h->classes);
	if (n < max)
		snprintf(lines[n++], TOP_LINE, "allowance: %s", h->allowance);
	if (n < max)
		snprintf(lines[n++], TOP_LINE, "resctrl: %s", h->resctrl);
	for (int i = 0; i < h->nr_recent && n < max; i++)
		snprintf(lines[n++], TOP_LINE, "%s %s", i ? "       " : "recent:", h->recent[i]);
	if (!h->nr_recent && n < max)
		snprintf(lines[n++], TOP_LINE, "recent: -");
	return n;
}

void top_print_batch(FILE *f, const struct top_model *m, const char *filter)
{
	char lines[8][TOP_LINE], buf[512];
	int n = top_header_lines(&m->hdr, lines, 8);

	for (int i = 0; i < n; i++)
		fprintf(f, "%s\n", lines[i]);
	fputc('\n', f);
	top_format_title(buf, sizeof(buf));
	fprintf(f, "%s\n", buf);
	for (size_t i = 0; i < m->nr_rows; i++) {
		const struct top_row *r = &m->rows[i];
		bool all = !filter || !*filter || row_matches(r, filter);

		if (!top_row__matches(r, filter))
			continue;
		top_format_row(r, "", buf, sizeof(buf));
		fprintf(f, "%s\n", buf);
		for (size_t k = 0; k < r->nr_kids; k++) {
			if (!all && !row_matches(&r->kids[k], filter))
				continue;
			top_format_row(&r->kids[k], k + 1 < r->nr_kids ? " |- " : " `- ", buf,
				       sizeof(buf));
			fprintf(f, "%s\n", buf);
		}
	}
}
