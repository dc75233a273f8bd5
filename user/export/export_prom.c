// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export_prom.h"
#include "log.h"

#ifndef KQOS_VERSION
#define KQOS_VERSION "unknown"
#endif

#define TEMP_PREFIX PROM_FILE_NAME ".tmp."

long prom_test_abort_after = -1;

/*
 * One labelled entity with stats: a pod, a container or a cgroup outside pods. Its label set is
 * rendered once; families iterate over all entities of a scope so each family stays contiguous.
 */
struct entity {
	char *labels; /* `pod="a",namespace="b",...` without braces */
	const struct snap_stats *st;
	bool dup; /* same label set as an earlier entity: skipped to keep series unique */
};

enum scope { SCOPE_POD, SCOPE_CONTAINER, SCOPE_CGROUP, NR_SCOPES };

static const char *const scope_name[NR_SCOPES] = { "pod", "container", "cgroup" };
static const char *const scope_help[NR_SCOPES] = {
	"a pod (or bare-metal group) and all its containers",
	"a container",
	"a cgroup outside pods",
};

struct render {
	FILE *f;
	const struct snapshot *s;
	const struct snap_enforce *en; /* published beside the snapshot */
	struct entity *ent[NR_SCOPES];
	size_t nr_ent[NR_SCOPES];
};

/* --- label values ------------------------------------------------------------------------- */

/* Text format 0.0.4 escapes in label values: backslash, double quote and line feed. */
static void put_escaped(FILE *f, const char *v)
{
	for (; v && *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

static void put_label(FILE *f, bool *first, const char *name, const char *value)
{
	fprintf(f, "%s%s=\"", *first ? "" : ",", name);
	put_escaped(f, value);
	fputc('"', f);
	*first = false;
}

/* Build a label string with a memstream; NULL on -ENOMEM. Pairs of (name, value), NULL-ended. */
static char *labels_of(const char *name, ...)
{
	char *buf = NULL;
	size_t len = 0;
	bool first = true;
	va_list ap;
	FILE *f;

	f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	va_start(ap, name);
	for (; name; name = va_arg(ap, const char *))
		put_label(f, &first, name, va_arg(ap, const char *));
	va_end(ap);
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static const char *qos_label(const struct pod *pod)
{
	return pod->qos == POD_QOS_NONE ? "NONE" : pod_qos_name(pod->qos);
}

/* --- entities ----------------------------------------------------------------------------- */

static int add_entity(struct render *r, enum scope sc, char *labels, const struct snap_stats *st)
{
	struct entity *e = &r->ent[sc][r->nr_ent[sc]++];

	if (!labels)
		return -ENOMEM;
	e->labels = labels;
	e->st = st;
	return 0;
}

static int cmp_entity(const void *a, const void *b)
{
	const struct entity *const *x = a, *const *y = b;

	return strcmp((*x)->labels, (*y)->labels);
}

/* Two pods with one name (a restarted static pod, two bare-metal groups): keep the first. */
static int mark_duplicates(struct entity *ent, size_t n)
{
	struct entity **v;

	if (n < 2)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		v[i] = &ent[i];
	qsort(v, n, sizeof(*v), cmp_entity);
	for (size_t i = 1; i < n; i++) {
		if (strcmp(v[i - 1]->labels, v[i]->labels))
			continue;
		/* qsort is not stable: mark the later one in snapshot order */
		if (v[i] > v[i - 1])
			v[i]->dup = true;
		else
			v[i - 1]->dup = true;
		log_dbg("duplicate series labels skipped", "labels=\"%s\"", v[i]->labels);
	}
	free(v);
	return 0;
}

static int pod_entities(struct render *r, const struct snap_pod *p)
{
	const struct pod *pod = p->pod;
	const char *name = pod->name ? pod->name : pod->uid;
	const char *ns = pod->namespace ? pod->namespace : "";
	/* "" for an invalid pair, as in the snapshot: the label is then empty */
	const char *pq = pod_pq_name(pod__pq(pod));
	int err;

	if (pod->is_static)
		err = add_entity(r, SCOPE_POD,
				 labels_of("pod", name, "namespace", ns, "qos_class",
					   qos_label(pod), "priority_qos_class", pq, "cgroup",
					   p->cgroup ? p->cgroup : "", NULL),
				 &p->st);
	else
		err = add_entity(r, SCOPE_POD,
				 labels_of("pod", name, "namespace", ns, "qos_class",
					   qos_label(pod), "priority_qos_class", pq, NULL),
				 &p->st);
	for (size_t i = 0; !err && i < p->nr_ctrs; i++)
		err = add_entity(r, SCOPE_CONTAINER,
				 labels_of("pod", name, "namespace", ns, "container",
					   p->ctrs[i].name, "qos_class", qos_label(pod),
					   "priority_qos_class", pq, NULL),
				 &p->ctrs[i].st);
	return err;
}

static int build_entities(struct render *r)
{
	const struct snapshot *s = r->s;
	size_t nr_ctrs = 0;
	int err = 0;

	for (size_t i = 0; i < s->nr_pods; i++)
		nr_ctrs += s->pods[i].nr_ctrs;
	r->ent[SCOPE_POD] = calloc(s->nr_pods + 1, sizeof(struct entity));
	r->ent[SCOPE_CONTAINER] = calloc(nr_ctrs + 1, sizeof(struct entity));
	r->ent[SCOPE_CGROUP] = calloc(s->nr_others + 1, sizeof(struct entity));
	if (!r->ent[SCOPE_POD] || !r->ent[SCOPE_CONTAINER] || !r->ent[SCOPE_CGROUP])
		return -ENOMEM;
	for (size_t i = 0; !err && i < s->nr_pods; i++)
		if (s->pods[i].pod)
			err = pod_entities(r, &s->pods[i]);
	for (size_t i = 0; !err && i < s->nr_others; i++)
		err = add_entity(r, SCOPE_CGROUP, labels_of("cgroup", s->others[i].cgroup, NULL),
				 &s->others[i].st);
	for (int sc = 0; !err && sc < NR_SCOPES; sc++)
		err = mark_duplicates(r->ent[sc], r->nr_ent[sc]);
	return err;
}

static void free_entities(struct render *r)
{
	for (int sc = 0; sc < NR_SCOPES; sc++) {
		for (size_t i = 0; i < r->nr_ent[sc]; i++)
			free(r->ent[sc][i].labels);
		free(r->ent[sc]);
	}
}

/* --- samples ------------------------------------------------------------------------------ */

static void family(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The shortest of %.15g..%.17g that reads back exactly: 0.9, not 0.90000000000000002. */
static void put_value(FILE *f, double v)
{
	char buf[40];

	if (isnan(v)) {
		fputs(" NaN\n", f);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
		return;
	}
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	fprintf(f, " %s\n", buf);
}

static void sample(FILE *f, const char *name, const char *labels, const char *extra, double v)
{
	fputs(name, f);
	if ((labels && *labels) || (extra && *extra))
		fprintf(f, "{%s%s%s}", labels ? labels : "",
			labels && *labels && extra && *extra ? "," : "", extra ? extra : "");
	put_value(f, v);
}

static void sample_u64(FILE *f, const char *name, const char *labels, const char *extra, __u64 v)
{
	fputs(name, f);
	if ((labels && *labels) || (extra && *extra))
		fprintf(f, "{%s%s%s}", labels ? labels : "",
			labels && *labels && extra && *extra ? "," : "", extra ? extra : "");
	fprintf(f, " %llu\n", (unsigned long long)v);
}

typedef bool (*has_fn)(const struct snap_stats *st);
typedef double (*val_fn)(const struct snap_stats *st);

static bool has_cpu(const struct snap_stats *st)
{
	return st->has_cpu;
}

static bool has_throttle(const struct snap_stats *st)
{
	return st->has_throttle;
}

static double cpu_seconds(const struct snap_stats *st)
{
	return st->cpu_ns_total / 1e9;
}

static double periods(const struct snap_stats *st)
{
	return (double)st->nr_periods;
}

static double throttled_periods(const struct snap_stats *st)
{
	return (double)st->nr_throttled;
}

static double throttled_seconds(const struct snap_stats *st)
{
	return st->throttled_ns / 1e9;
}

static bool any_entity(const struct render *r, enum scope sc, has_fn has)
{
	for (size_t i = 0; i < r->nr_ent[sc]; i++)
		if (!r->ent[sc][i].dup && has(r->ent[sc][i].st))
			return true;
	return false;
}

/* A family with one sample per entity that has the metric; absent metrics have no sample. */
static void stat_family(struct render *r, enum scope sc, const char *metric, const char *type,
			const char *help, has_fn has, val_fn val)
{
	char name[128], doc[256];

	if (!any_entity(r, sc, has))
		return;
	snprintf(name, sizeof(name), "kqos_%s_%s", scope_name[sc], metric);
	snprintf(doc, sizeof(doc), "%s, %s.", help, scope_help[sc]);
	family(r->f, name, type, doc);
	for (size_t i = 0; i < r->nr_ent[sc]; i++) {
		const struct entity *e = &r->ent[sc][i];

		if (!e->dup && has(e->st))
			sample(r->f, name, e->labels, NULL, val(e->st));
	}
}

/* Bucket i of the BPF histogram counts waits < 2^(10+i) ns; Prometheus wants seconds. */
static void rq_histogram(struct render *r, enum scope sc)
{
	char name[128], sub[160], doc[256], le[48];

	if (!any_entity(r, sc, has_cpu))
		return;
	snprintf(name, sizeof(name), "kqos_%s_runqueue_latency_seconds", scope_name[sc]);
	snprintf(doc, sizeof(doc), "Time runnable tasks waited for a CPU (eBPF), %s.",
		 scope_help[sc]);
	family(r->f, name, "histogram", doc);
	for (size_t i = 0; i < r->nr_ent[sc]; i++) {
		const struct entity *e = &r->ent[sc][i];
		const struct snap_stats *st = e->st;

		if (e->dup || !st->has_cpu)
			continue;
		snprintf(sub, sizeof(sub), "%s_bucket", name);
		for (int b = 0; b < SNAP_RQ_BUCKETS; b++) {
			snprintf(le, sizeof(le), "le=\"%.10g\"",
				 ldexp(1.0, SNAP_RQ_FIRST_LOG + b) / 1e9);
			sample_u64(r->f, sub, e->labels, le,
				   st->rq_hist_total ? st->rq_hist_total[b] : 0);
		}
		sample_u64(r->f, sub, e->labels, "le=\"+Inf\"", st->rq_waits_total);
		snprintf(sub, sizeof(sub), "%s_sum", name);
		sample(r->f, sub, e->labels, NULL, st->rq_wait_ns_total / 1e9);
		snprintf(sub, sizeof(sub), "%s_count", name);
		sample_u64(r->f, sub, e->labels, NULL, st->rq_waits_total);
	}
}

static bool has_pmu(const struct snap_stats *st)
{
	return st->pmu_n > 0 && st->pmu;
}

static void pmu_families(struct render *r, enum scope sc)
{
	const struct snapshot *s = r->s;
	char name[128], doc[256], ev[PMU_NAME_LEN + 64];
	char *evl = NULL;

	if (!s->pmu_n || !any_entity(r, sc, has_pmu))
		return;
	for (int pass = 0; pass < 2; pass++) {
		snprintf(name, sizeof(name),
			 pass ? "kqos_%s_pmu_scaling_ratio" : "kqos_%s_pmu_events_total",
			 scope_name[sc]);
		snprintf(doc, sizeof(doc), "%s, %s.",
			 pass ? "Fraction of the time the PMU event was counted (multiplexing)" :
				"Hardware events counted while the tasks ran, scaled",
			 scope_help[sc]);
		family(r->f, name, pass ? "gauge" : "counter", doc);
		for (size_t i = 0; i < r->nr_ent[sc]; i++) {
			const struct entity *e = &r->ent[sc][i];

			if (e->dup)
				continue;
			for (int k = 0; k < e->st->pmu_n && k < s->pmu_n; k++) {
				evl = labels_of("event", s->pmu[k].name, NULL);
				snprintf(ev, sizeof(ev), "%s", evl ? evl : "event=\"\"");
				free(evl);
				if (pass)
					sample(r->f, name, e->labels, ev,
					       e->st->pmu->running_ratio[k]);
				else
					sample_u64(r->f, name, e->labels, ev, e->st->pmu->total[k]);
			}
		}
	}
}

static void scope_families(struct render *r, enum scope sc)
{
	stat_family(r, sc, "cpu_seconds_total", "counter", "CPU time used (eBPF sched_switch)",
		    has_cpu, cpu_seconds);
	rq_histogram(r, sc);
	stat_family(r, sc, "cpu_periods_total", "counter", "CFS enforcement periods (cpu.stat)",
		    has_throttle, periods);
	stat_family(r, sc, "cpu_throttled_periods_total", "counter",
		    "CFS periods in which the cgroup was throttled", has_throttle,
		    throttled_periods);
	stat_family(r, sc, "cpu_throttled_seconds_total", "counter",
		    "Time the cgroup was throttled", has_throttle, throttled_seconds);
	pmu_families(r, sc);
}

/* --- resctrl ------------------------------------------------------------------------------ */

/* Labels of a resctrl group: its name, and the class or the pod it belongs to. */
static char *rdt_labels(const struct snapshot *s, const struct snap_rdt_group *g)
{
	const struct snap_pod *p = *g->pod_uid ? snapshot__pod(s, g->pod_uid) : NULL;

	if (p && p->pod)
		return labels_of("group", g->name, "pod", p->pod->name ? p->pod->name : "",
				 "namespace", p->pod->namespace ? p->pod->namespace : "",
				 "qos_class", qos_label(p->pod), NULL);
	return labels_of("group", g->name, "qos_class", g->class_name, NULL);
}

enum rdt_metric { RDT_LLC, RDT_MBM_TOTAL, RDT_MBM_LOCAL, NR_RDT };

static bool rdt_has(const struct snap_rdt_group *g, enum rdt_metric m, unsigned int d)
{
	if (m == RDT_LLC)
		return g->has_llc[d];
	return m == RDT_MBM_TOTAL ? g->has_mbm_total[d] : g->has_mbm_local[d];
}

static __u64 rdt_val(const struct snap_rdt_group *g, enum rdt_metric m, unsigned int d)
{
	if (m == RDT_LLC)
		return g->llc_bytes[d];
	return m == RDT_MBM_TOTAL ? g->mbm_total_bytes[d] : g->mbm_local_bytes[d];
}

static void rdt_family(struct render *r, char **labels, enum rdt_metric m)
{
	static const char *const names[NR_RDT] = { "kqos_resctrl_llc_occupancy_bytes",
						   "kqos_resctrl_mbm_total_bytes_total",
						   "kqos_resctrl_mbm_local_bytes_total" };
	static const char *const types[NR_RDT] = { "gauge", "counter", "counter" };
	static const char *const helps[NR_RDT] = {
		"L3 cache occupancy of the resctrl group per cache id (CMT).",
		"Memory bandwidth used by the resctrl group per cache id, all NUMA nodes (MBM).",
		"Memory bandwidth used by the resctrl group per cache id, local NUMA node (MBM).",
	};
	const struct snapshot *s = r->s;
	bool any = false;
	char id[32];

	for (size_t i = 0; i < s->nr_rdt; i++)
		for (unsigned int d = 0; d < s->rdt[i].nr_domains && d < SNAP_RDT_DOMAINS; d++)
			any |= rdt_has(&s->rdt[i], m, d);
	if (!any)
		return;
	family(r->f, names[m], types[m], helps[m]);
	for (size_t i = 0; i < s->nr_rdt; i++) {
		const struct snap_rdt_group *g = &s->rdt[i];

		for (unsigned int d = 0; d < g->nr_domains && d < SNAP_RDT_DOMAINS; d++) {
			if (!rdt_has(g, m, d) || !labels[i])
				continue;
			snprintf(id, sizeof(id), "cache_id=\"%u\"", g->cache_id[d]);
			sample_u64(r->f, names[m], labels[i], id, rdt_val(g, m, d));
		}
	}
}

/* "L3:0=fff;1=ff0;MB:0=100" -> ways (set bits) of each L3 cache id. */
static void l3_ways(struct render *r, char **labels)
{
	const struct snapshot *s = r->s;
	bool header = false;

	for (size_t i = 0; i < s->nr_rdt; i++) {
		char buf[sizeof(s->rdt[i].schemata)], *save = NULL, *tok, extra[48];
		bool in_l3 = false;

		snprintf(buf, sizeof(buf), "%s", s->rdt[i].schemata);
		for (tok = strtok_r(buf, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
			char *colon = strchr(tok, ':'), *eq;
			unsigned long id, mask;

			while (*tok == ' ')
				tok++;
			if (colon && (!strchr(tok, '=') || colon < strchr(tok, '='))) {
				in_l3 = !strncmp(tok, "L3:", 3);
				tok = colon + 1;
			}
			eq = strchr(tok, '=');
			if (!in_l3 || !eq || !labels[i])
				continue;
			id = strtoul(tok, NULL, 10);
			mask = strtoul(eq + 1, NULL, 16);
			if (!header) {
				family(r->f, "kqos_resctrl_l3_cbm_ways", "gauge",
				       "Cache ways in the resctrl group's L3 capacity bitmask.");
				header = true;
			}
			snprintf(extra, sizeof(extra), "cache_id=\"%lu\"", id);
			sample_u64(r->f, "kqos_resctrl_l3_cbm_ways", labels[i], extra,
				   (__u64)__builtin_popcountl(mask));
		}
	}
}

/* The node's CLOSIDs and RMIDs: "Out of CLOSIDs/RMIDs" is alertable before a mkdir fails. */
static void rdt_id_families(struct render *r)
{
	const struct snap_rdt_ids *ids = &r->s->rdt_ids;
	static const struct {
		const char *name, *help;
		size_t off;
		bool is_rmid;
	} g[] = {
		{ "kqos_resctrl_closids", "Usable resctrl CLOSIDs (the minimum over resources).",
		  offsetof(struct snap_rdt_ids, closids), false },
		{ "kqos_resctrl_ctrl_groups",
		  "resctrl control groups on the node, the root's included (one CLOSID each).",
		  offsetof(struct snap_rdt_ids, ctrl_groups), false },
		{ "kqos_resctrl_rmids", "resctrl RMIDs (info/L3_MON/num_rmids).",
		  offsetof(struct snap_rdt_ids, rmids), true },
		{ "kqos_resctrl_rmids_used",
		  "resctrl control and monitoring groups on the node (one RMID each).",
		  offsetof(struct snap_rdt_ids, rmids_used), true },
	};

	if (!r->s->rdt_enabled || !ids->has)
		return;
	for (size_t i = 0; i < sizeof(g) / sizeof(g[0]); i++) {
		/* no allocation (or no monitoring) on this host: no CLOSID (RMID) series */
		if (!(g[i].is_rmid ? ids->rmids : ids->closids))
			continue;
		family(r->f, g[i].name, "gauge", g[i].help);
		sample_u64(r->f, g[i].name, NULL, NULL,
			   *(const unsigned int *)((const char *)ids + g[i].off));
	}
}

static void rdt_families(struct render *r)
{
	const struct snapshot *s = r->s;
	char **labels;

	if (!s->rdt_enabled || !s->nr_rdt)
		return;
	labels = calloc(s->nr_rdt, sizeof(*labels));
	if (!labels)
		return;
	for (size_t i = 0; i < s->nr_rdt; i++)
		labels[i] = rdt_labels(s, &s->rdt[i]);
	for (int m = 0; m < NR_RDT; m++)
		rdt_family(r, labels, m);
	l3_ways(r, labels);
	family(r->f, "kqos_resctrl_schemata_info", "gauge",
	       "Current schemata of the resctrl group (value 1), lines joined with ';'.");
	for (size_t i = 0; i < s->nr_rdt; i++) {
		char *sch = labels_of("schemata", s->rdt[i].schemata, NULL);

		if (labels[i] && sch)
			sample(r->f, "kqos_resctrl_schemata_info", labels[i], sch, 1);
		free(sch);
	}
	for (size_t i = 0; i < s->nr_rdt; i++)
		free(labels[i]);
	free(labels);
}

/* --- node, classes, enforcement, health ----------------------------------------------------- */

static void node_families(struct render *r)
{
	const struct snapshot *s = r->s;

	family(r->f, "kqos_node_cpus", "gauge", "Online CPUs.");
	sample_u64(r->f, "kqos_node_cpus", NULL, NULL, s->node.nr_cpus);
	family(r->f, "kqos_class_pods", "gauge", "Pods per koordinator QoS class (defaulted).");
	for (int q = 0; q <= POD_QOS_SYSTEM; q++) {
		char *l =
			labels_of("qos_class", q == POD_QOS_NONE ? "NONE" : pod_qos_name(q), NULL);

		if (l)
			sample_u64(r->f, "kqos_class_pods", l, NULL, s->classes[q].pods);
		free(l);
	}
}

static void enforce_families(struct render *r)
{
	const struct snap_enforce *en = r->en;

	family(r->f, "kqos_enforce_enabled", "gauge", "1 when some enforcement strategy is on.");
	sample(r->f, "kqos_enforce_enabled", NULL, NULL, en->enabled);
	family(r->f, "kqos_enforce_dry_run", "gauge",
	       "1 when kqos logs its plan instead of writing.");
	sample(r->f, "kqos_enforce_dry_run", NULL, NULL, en->dry_run);
	if (en->has_be_cpus) {
		family(r->f, "kqos_enforce_be_cpus", "gauge",
		       "CPUs in the best-effort cpuset (cpu_suppress cpuset policy).");
		sample_u64(r->f, "kqos_enforce_be_cpus", NULL, NULL, cpumask_count(&en->be_cpus));
	}
	if (en->has_be_quota) {
		family(r->f, "kqos_enforce_be_cpu_quota_seconds", "gauge",
		       "CFS quota of the best-effort cgroup per period (cpu_suppress cfsQuota "
		       "policy), -1 unlimited.");
		sample(r->f, "kqos_enforce_be_cpu_quota_seconds", NULL, NULL,
		       en->be_quota_us < 0 ? -1.0 : en->be_quota_us / 1e6);
	}
	if (en->nr_counts) {
		family(r->f, "kqos_enforce_actions_total", "counter",
		       "Actions of the actuator by strategy, knob and result.");
		for (size_t i = 0; i < en->nr_counts && i < SNAP_ACTION_KINDS; i++) {
			const struct snap_action_count *c = &en->counts[i];
			char *l = labels_of("strategy", c->strategy, "knob", c->knob, "result",
					    c->result, NULL);

			if (l)
				sample_u64(r->f, "kqos_enforce_actions_total", l, NULL, c->count);
			free(l);
		}
	}
}

static void guard_reaction(struct render *r, const struct snap_guard *g)
{
	static const char *const le[SNAP_REACT_BUCKETS] = { "5e-05", "0.0001", "0.0002", "0.0005",
							    "0.001", "0.002",  "0.005",	 "0.01",
							    "0.02",  "0.05",   "0.1",	 "1" };
	char extra[48];

	family(r->f, "kqos_guard_reaction_seconds", "histogram",
	       "Kernel LS wait event to the last cgroup write of the reaction it caused.");
	for (int i = 0; i < SNAP_REACT_BUCKETS; i++) {
		snprintf(extra, sizeof(extra), "le=\"%s\"", le[i]);
		sample_u64(r->f, "kqos_guard_reaction_seconds_bucket", NULL, extra,
			   g->react_hist[i]);
	}
	sample_u64(r->f, "kqos_guard_reaction_seconds_bucket", NULL, "le=\"+Inf\"", g->react_count);
	sample(r->f, "kqos_guard_reaction_seconds_sum", NULL, NULL, g->react_sum_s);
	sample_u64(r->f, "kqos_guard_reaction_seconds_count", NULL, NULL, g->react_count);
	family(r->f, "kqos_guard_reaction_user_seconds_total", "counter",
	       "The user-space part of those reactions: ring buffer wakeup to the write done.");
	sample(r->f, "kqos_guard_reaction_user_seconds_total", NULL, NULL, g->react_user_sum_s);
	family(r->f, "kqos_guard_reaction_user_seconds_max", "gauge",
	       "The slowest user-space part of a reaction since start.");
	sample(r->f, "kqos_guard_reaction_user_seconds_max", NULL, NULL, g->react_user_max_s);
}

static void rdt_placement(struct render *r, const struct snap_rdt_enforce *d)
{
	static const char *const le[SNAP_REACT_BUCKETS] = { "5e-05", "0.0001", "0.0002", "0.0005",
							    "0.001", "0.002",  "0.005",	 "0.01",
							    "0.02",  "0.05",   "0.1",	 "1" };
	char extra[48];

	family(r->f, "kqos_resctrl_placement_seconds", "histogram",
	       "Kernel attach event to the tid written to its resctrl group's tasks.");
	for (int i = 0; i < SNAP_REACT_BUCKETS; i++) {
		snprintf(extra, sizeof(extra), "le=\"%s\"", le[i]);
		sample_u64(r->f, "kqos_resctrl_placement_seconds_bucket", NULL, extra,
			   d->place_hist[i]);
	}
	sample_u64(r->f, "kqos_resctrl_placement_seconds_bucket", NULL, "le=\"+Inf\"",
		   d->place_count);
	sample(r->f, "kqos_resctrl_placement_seconds_sum", NULL, NULL, d->place_sum_s);
	sample_u64(r->f, "kqos_resctrl_placement_seconds_count", NULL, NULL, d->place_count);
}

/* resctrl control: groups in place, failures, and how tasks got to their groups. */
static void rdt_enforce_families(struct render *r)
{
	const struct snap_rdt_enforce *d = &r->en->rdt;

	if (!d->on && !d->groups)
		return;
	family(r->f, "kqos_resctrl_groups", "gauge", "kqos resctrl control groups in place.");
	sample_u64(r->f, "kqos_resctrl_groups", "kind=\"class\"", NULL, d->groups - d->pod_groups);
	sample_u64(r->f, "kqos_resctrl_groups", "kind=\"pod\"", NULL, d->pod_groups);
	family(r->f, "kqos_resctrl_pod_monitoring_groups", "gauge",
	       "LS pods' monitoring groups in their class groups (per-pod LLC and MBM).");
	sample_u64(r->f, "kqos_resctrl_pod_monitoring_groups", NULL, NULL, d->mon_groups);
	family(r->f, "kqos_resctrl_rmid_exhausted_total", "counter",
	       "Pod monitoring groups refused for want of an RMID: those pods stay class-level.");
	sample_u64(r->f, "kqos_resctrl_rmid_exhausted_total", NULL, NULL, d->no_rmid);
	family(r->f, "kqos_resctrl_pods_without_group", "gauge",
	       "Annotated pods left in their class group: out of CLOSIDs.");
	sample_u64(r->f, "kqos_resctrl_pods_without_group", NULL, NULL, d->pods_no_closid);
	family(r->f, "kqos_resctrl_closid_exhausted_total", "counter",
	       "Pod groups the kernel refused for want of a CLOSID.");
	sample_u64(r->f, "kqos_resctrl_closid_exhausted_total", NULL, NULL, d->no_closid);
	family(r->f, "kqos_resctrl_schemata_writes_total", "counter",
	       "Schemata writes that changed a kqos group.");
	sample_u64(r->f, "kqos_resctrl_schemata_writes_total", NULL, NULL, d->schemata_writes);
	family(r->f, "kqos_resctrl_errors_total", "counter",
	       "resctrl writes that failed (mkdir, schemata, tasks, rmdir).");
	sample_u64(r->f, "kqos_resctrl_errors_total", NULL, NULL, d->errors);
	family(r->f, "kqos_resctrl_tasks_placed_total", "counter",
	       "Tasks written to their resctrl group: at once on attach events, or by the reconcile.");
	sample_u64(r->f, "kqos_resctrl_tasks_placed_total", "path=\"event\"", NULL,
		   d->placed_events);
	sample_u64(r->f, "kqos_resctrl_tasks_placed_total", "path=\"reconcile\"", NULL,
		   d->placed_reconcile);
	family(r->f, "kqos_resctrl_placement_misses_total", "counter",
	       "Tasks of known cgroups the reconcile found outside their group: events missed.");
	sample_u64(r->f, "kqos_resctrl_placement_misses_total", NULL, NULL, d->misses);
	rdt_placement(r, d);
}

static void guard_families(struct render *r)
{
	static const char *const moves[] = { "escalate", "back_out", "relax" };
	const struct snap_guard *g = &r->en->guard;
	__u64 n[] = { g->escalations, g->back_outs, g->relaxes };

	if (!g->enabled)
		return;
	family(r->f, "kqos_guard_level", "gauge", "Latency guard ladder steps in force on BE.");
	sample_u64(r->f, "kqos_guard_level", NULL, NULL, g->level);
	family(r->f, "kqos_guard_breaches_total", "counter",
	       "LS run-queue waits past target the latency guard acted on (events and ticks).");
	sample_u64(r->f, "kqos_guard_breaches_total", NULL, NULL, g->breaches);
	family(r->f, "kqos_guard_transitions_total", "counter",
	       "Latency guard moves: escalate, back_out (a step that hurt), relax.");
	for (size_t i = 0; i < 3; i++) {
		char *l = labels_of("move", moves[i], NULL);

		if (l)
			sample_u64(r->f, "kqos_guard_transitions_total", l, NULL, n[i]);
		free(l);
	}
	guard_reaction(r, g);
}

static const char *const burst_states[] = { "unknown", "idle", "cooling", "overload" };

/* One row's gauge; @us is microseconds, exported in seconds. */
static void burst_sample(struct render *r, const char *name, const struct snap_burst_row *b,
			 double us)
{
	char *l = labels_of("pod", b->pod, "namespace", b->ns, "container", b->container, NULL);

	if (l)
		sample(r->f, name, l, NULL, us / 1e6);
	free(l);
}

static void burst_rows(struct render *r, const char *name, const char *help, int field)
{
	const struct snap_burst *b = &r->en->burst;

	family(r->f, name, "gauge", help);
	for (size_t i = 0; i < b->nr; i++) {
		const struct snap_burst_row *w = &b->rows[i];
		double v[] = { (double)w->asked_us, (double)w->burst_us, (double)w->base_quota_us,
			       (double)w->quota_us };

		if (field == 3 && w->quota_us < 0)
			continue;
		burst_sample(r, name, w, v[field]);
	}
}

static void burst_families(struct render *r)
{
	const struct snap_burst *b = &r->en->burst;

	if (!b->enabled)
		return;
	family(r->f, "kqos_burst_share_pool_state", "gauge",
	       "cpu_burst share pool state (value 1 on the current one).");
	for (size_t i = 0; i < 4; i++) {
		char *l = labels_of("state", burst_states[i], NULL);

		if (l)
			sample(r->f, "kqos_burst_share_pool_state", l, NULL,
			       b->node_state == (int)i);
		free(l);
	}
	family(r->f, "kqos_burst_share_pool_used_ratio", "gauge",
	       "Share-pool CPU used over its capacity (LSE/LSR requests and LSE/LSR/BE usage "
	       "excluded).");
	sample(r->f, "kqos_burst_share_pool_used_ratio", NULL, NULL,
	       b->share_pool_total > 0 ? b->share_pool_used / b->share_pool_total : 0);
	burst_rows(r, "kqos_burst_cfs_burst_asked_seconds",
		   "CFS burst per period cpuBurstPercent asks for, before the kernel's limit.", 0);
	burst_rows(r, "kqos_burst_cfs_burst_seconds",
		   "CFS burst per period written: at most the quota, which the kernel enforces.",
		   1);
	burst_rows(r, "kqos_burst_cfs_quota_base_seconds",
		   "CFS quota per period of the container's limit.", 2);
	burst_rows(r, "kqos_burst_cfs_quota_seconds",
		   "CFS quota per period as scaled by the quota burst.", 3);
}

static void nodeslo_families(struct render *r)
{
	const struct snap_nodeslo *n = &r->en->nodeslo;
	char *l;

	if (!n->apiserver)
		return;
	family(r->f, "kqos_nodeslo_stale", "gauge",
	       "1 when the last read of the node's NodeSLO failed; the last good spec stays.");
	l = labels_of("node", n->node, NULL);
	if (l)
		sample(r->f, "kqos_nodeslo_stale", l, NULL, n->stale);
	family(r->f, "kqos_nodeslo_spec_loaded", "gauge",
	       "1 once a NodeSLO spec from the API server is in force (0: the file's).");
	if (l)
		sample(r->f, "kqos_nodeslo_spec_loaded", l, NULL, n->has_spec);
	family(r->f, "kqos_nodeslo_updates_total", "counter",
	       "NodeSLO specs or node annotations from the API server applied.");
	if (l)
		sample_u64(r->f, "kqos_nodeslo_updates_total", l, NULL, n->updates);
	family(r->f, "kqos_nodeslo_failures_total", "counter",
	       "Failed reads of the NodeSLO: unreachable, 404, garbage or a bad spec.");
	if (l)
		sample_u64(r->f, "kqos_nodeslo_failures_total", l, NULL, n->failures);
	free(l);
}

static void event_families(struct render *r)
{
	const struct snap_events *e = &r->s->events;

	family(r->f, "kqos_events_total", "counter",
	       "Ring buffer records the kernel sent (LS waits, cgroup changes).");
	sample_u64(r->f, "kqos_events_total", NULL, NULL, e->emitted);
	family(r->f, "kqos_events_dropped_total", "counter",
	       "Ring buffer records lost: buffer full in the kernel or queue full in kqos.");
	sample_u64(r->f, "kqos_events_dropped_total", NULL, NULL, e->dropped + e->queue_lost);
	family(r->f, "kqos_events_suppressed_total", "counter",
	       "LS waits past target not sent by the per-CPU rate limit (1 per cgroup per ms).");
	sample_u64(r->f, "kqos_events_suppressed_total", NULL, NULL, e->suppressed);
	family(r->f, "kqos_events_watched_cgroups", "gauge",
	       "LS cgroups whose run-queue waits the kernel watches.");
	sample_u64(r->f, "kqos_events_watched_cgroups", NULL, NULL, e->watches);
}

static void health_families(struct render *r, const struct prom_health *h)
{
	const struct snapshot *s = r->s;
	char *l = labels_of("version", KQOS_VERSION, "hierarchy", s->hierarchy, "pod_source",
			    s->pod_source, NULL);

	family(r->f, "kqos_build_info", "gauge", "kqos build and run mode (value 1).");
	sample(r->f, "kqos_build_info", l ? l : "", NULL, 1);
	free(l);
	family(r->f, "kqos_last_cycle_timestamp_seconds", "gauge",
	       "Wall-clock time of the last completed agent cycle.");
	sample(r->f, "kqos_last_cycle_timestamp_seconds", NULL, NULL, s->wall_ns / 1e9);
	family(r->f, "kqos_stale_pod_list", "gauge",
	       "1 when the pod source failed and kqos uses its last good pod list.");
	sample(r->f, "kqos_stale_pod_list", NULL, NULL, s->pods_stale);
	family(r->f, "kqos_write_errors_total", "counter",
	       "Failed writes to cgroup and resctrl files by the actuator.");
	sample_u64(r->f, "kqos_write_errors_total", NULL, NULL, r->en->write_errors);
	family(r->f, "kqos_textfile_write_errors_total", "counter",
	       "Failed writes of this textfile (the last good file stays in place).");
	sample_u64(r->f, "kqos_textfile_write_errors_total", NULL, NULL,
		   h ? h->textfile_write_errors : 0);
	family(r->f, "kqos_dropped_switches_total", "counter",
	       "Context switches the eBPF collector could not account (map full).");
	sample_u64(r->f, "kqos_dropped_switches_total", NULL, NULL, s->dropped_switches);
	family(r->f, "kqos_collector_slots", "gauge",
	       "Counter slots: cgroups the collector reads from mapped memory, not the BPF hash.");
	sample_u64(r->f, "kqos_collector_slots", NULL, NULL, s->counters.slots);
	family(r->f, "kqos_collector_cgroups", "gauge",
	       "Cgroups read this tick, by where their counters live (slot or hash).");
	sample_u64(r->f, "kqos_collector_cgroups", "source=\"slot\"", NULL, s->counters.slotted);
	sample_u64(r->f, "kqos_collector_cgroups", "source=\"hash\"", NULL, s->counters.hashed);
	family(r->f, "kqos_collector_slot_push_failures_total", "counter",
	       "Freed counter slots the free stack refused (each kept and pushed again later).");
	sample_u64(r->f, "kqos_collector_slot_push_failures_total", NULL, NULL,
		   s->counters.slot_push_failures);
	family(r->f, "kqos_collector_slots_pending", "gauge",
	       "Freed counter slots still waiting to go back on the free stack.");
	sample_u64(r->f, "kqos_collector_slots_pending", NULL, NULL, s->counters.slots_pending);
}

static void stage_family(struct render *r, const struct agent_stages *st)
{
	char labels[32], extra[48];

	family(r->f, "kqos_agent_stage_seconds", "histogram",
	       "The agent's own CPU time per tick, by pipeline stage (tick: all of one; wall: a "
	       "tick's elapsed time).");
	for (int sg = 0; sg < STAGE_NR; sg++) {
		const struct stage_hist *h = &st->s[sg];
		__u64 run = 0;

		snprintf(labels, sizeof(labels), "stage=\"%s\"", stage_name(sg));
		for (int i = 0; i < STAGE_BUCKETS - 1; i++) {
			run += h->bucket[i];
			snprintf(extra, sizeof(extra), "le=\"%g\"", stage_bucket_le_us(i) / 1e6);
			sample_u64(r->f, "kqos_agent_stage_seconds_bucket", labels, extra, run);
		}
		sample_u64(r->f, "kqos_agent_stage_seconds_bucket", labels, "le=\"+Inf\"",
			   h->count);
		sample(r->f, "kqos_agent_stage_seconds_sum", labels, NULL, h->sum_ns / 1e9);
		sample_u64(r->f, "kqos_agent_stage_seconds_count", labels, NULL, h->count);
	}
}

int prom_render(const struct snapshot *s, const struct snap_enforce *en,
		const struct prom_health *h, char **ret, size_t *ret_len)
{
	static const struct snap_enforce none;
	struct render r = { .s = s, .en = en ? en : &none };
	char *buf = NULL;
	size_t len = 0;
	int err;

	r.f = open_memstream(&buf, &len);
	if (!r.f)
		return -ENOMEM;
	err = build_entities(&r);
	if (!err) {
		health_families(&r, h);
		if (h && h->stages)
			stage_family(&r, h->stages);
		node_families(&r);
		for (int sc = 0; sc < NR_SCOPES; sc++)
			scope_families(&r, sc);
		rdt_families(&r);
		rdt_id_families(&r);
		enforce_families(&r);
		rdt_enforce_families(&r);
		guard_families(&r);
		burst_families(&r);
		nodeslo_families(&r);
		event_families(&r);
	}
	free_entities(&r);
	if (fclose(r.f) && !err)
		err = -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

/* --- atomic write ------------------------------------------------------------------------- */

static int write_all(int fd, const char *p, size_t len)
{
	size_t done = 0;

	while (done < len) {
		size_t n = len - done;
		ssize_t w;

		if (prom_test_abort_after >= 0 && done + n > (size_t)prom_test_abort_after)
			n = (size_t)prom_test_abort_after - done;
		w = write(fd, p + done, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		done += (size_t)w;
		if (prom_test_abort_after >= 0 && done >= (size_t)prom_test_abort_after)
			return -ECANCELED; /* the simulated crash, see prom_write_textfile */
	}
	return 0;
}

static void fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	/* best effort: the rename is atomic already; this makes it durable */
	if (fd >= 0) {
		fsync(fd);
		close(fd);
	}
}

int prom_write_textfile(const char *dir, const char *text, size_t len)
{
	char tmp[4096], dst[4096];
	int fd, err;

	if (snprintf(tmp, sizeof(tmp), "%s/" TEMP_PREFIX "%d", dir, (int)getpid()) >=
		    (int)sizeof(tmp) ||
	    snprintf(dst, sizeof(dst), "%s/" PROM_FILE_NAME, dir) >= (int)sizeof(dst))
		return -ENAMETOOLONG;
	/* node_exporter reads only *.prom: the temp name never gets scraped half-written */
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	err = write_all(fd, text, len);
	if (!err && fsync(fd))
		err = -errno;
	if (close(fd) && !err)
		err = -errno;
	if (!err && rename(tmp, dst))
		err = -errno;
	/* A simulated crash leaves the half-written temp file exactly as a real one would. */
	if (err && !(err == -ECANCELED && prom_test_abort_after >= 0))
		unlink(tmp);
	if (err)
		return err;
	fsync_dir(dir);
	return 0;
}

void prom_sweep_temp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)))
			unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
}
