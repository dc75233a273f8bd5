// SPDX-License-Identifier: GPL-2.0
/* The snapshot as JSON (docs/snapshot.md): kqosd --once --format json and the socket. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "snapjson.h"

/* --- JSON --------------------------------------------------------------------------------- */

static void set_new(json_t *o, const char *k, json_t *v)
{
	if (v)
		json_object_set_new(o, k, v);
}

static json_t *rq_json(const struct snap_stats *st)
{
	json_t *hist = json_array();

	for (int i = 0; i < SNAP_RQ_BUCKETS; i++)
		json_array_append_new(hist, json_integer(st->rq_hist_total ?
								 (json_int_t)st->rq_hist_total[i] :
								 0));
	return json_pack("{s:I, s:f, s:I, s:I, s:I, s:I, s:I, s:o}", "count",
			 (json_int_t)st->rq_waits, "mean_ns", st->rq_wait_mean_ns, "p50_ns",
			 (json_int_t)st->rq_p50_ns, "p99_ns", (json_int_t)st->rq_p99_ns, "max_ns",
			 (json_int_t)st->rq_max_ns, "total_count", (json_int_t)st->rq_waits_total,
			 "total_ns", (json_int_t)st->rq_wait_ns_total, "hist_total", hist);
}

static json_t *pmu_json(const struct snapshot *s, const struct snap_stats *st)
{
	json_t *ev = json_object(), *o;

	for (int i = 0; i < st->pmu_n && i < s->pmu_n; i++)
		set_new(ev, s->pmu[i].name,
			json_pack("{s:f, s:f, s:I}", "per_s", st->pmu->per_s[i], "running_ratio",
				  st->pmu->running_ratio[i], "total",
				  (json_int_t)st->pmu->total[i]));
	o = json_pack("{s:o}", "events", ev);
	if (o && st->has_cpi)
		set_new(o, "cpi", json_real(st->cpi));
	if (o && st->has_mpki)
		set_new(o, "llc_mpki", json_real(st->llc_mpki));
	return o;
}

/* A metric kqos does not have on this host is absent from the object, never 0. */
static json_t *stats_json(const struct snapshot *s, const struct snap_stats *st)
{
	json_t *o = json_object();

	if (!o)
		return NULL;
	if (st->has_cpu) {
		set_new(o, "cpu_cores", json_real(st->cpu_cores));
		set_new(o, "runs_per_s", json_real(st->runs_per_s));
		set_new(o, "cpu_seconds_total", json_real(st->cpu_ns_total / 1e9));
		set_new(o, "rq_wait", rq_json(st));
	}
	if (st->has_throttle)
		set_new(o, "throttle",
			json_pack("{s:I, s:I, s:f, s:f}", "nr_periods", (json_int_t)st->nr_periods,
				  "nr_throttled", (json_int_t)st->nr_throttled,
				  "throttled_seconds_total", st->throttled_ns / 1e9,
				  "throttled_ratio", st->throttled_ratio));
	if (st->has_memory)
		set_new(o, "memory",
			json_pack("{s:I}", "used_bytes", (json_int_t)st->mem_used_bytes));
	if (st->pmu_n && st->pmu)
		set_new(o, "pmu", pmu_json(s, st));
	return o;
}

static json_t *ctr_json(const struct snapshot *s, const struct snap_container *c)
{
	json_t *o = json_pack("{s:s, s:s, s:o}", "name", c->name, "id", c->id, "stats",
			      stats_json(s, &c->st));

	if (o && c->cpuset && *c->cpuset)
		set_new(o, "cpuset", json_string(c->cpuset));
	if (o && c->cgroup) {
		set_new(o, "cgroup", json_string(c->cgroup));
		set_new(o, "cgroup_id", json_integer((json_int_t)c->cgid));
	}
	return o;
}

/* A value kqos has, or nothing: -1 stands for unlimited in a limit, absent in a request. */
static void set_res(json_t *o, const char *key, int64_t v)
{
	if (v != POD_RES_UNSET)
		set_new(o, key, json_integer((json_int_t)v));
}

/* A tier's pod-level sums, as the cgroup translation uses them; NULL without the tier. */
static json_t *tier_json(const struct pod *pod, enum pod_tier tier)
{
	struct pod_tier_res r;
	json_t *req, *lim;

	if (!pod__tier_sum(pod, tier, &r))
		return NULL;
	req = json_pack("{s:I, s:I}", "cpu_milli", (json_int_t)r.req_cpu_milli, "memory_bytes",
			(json_int_t)r.req_memory_bytes);
	lim = json_object();
	set_res(lim, "cpu_milli", r.lim_cpu_milli);
	set_res(lim, "memory_bytes", r.lim_memory_bytes);
	return json_pack("{s:o, s:o}", "requests", req, "limits", lim);
}

static json_t *pod_json(const struct snapshot *s, const struct snap_pod *p)
{
	const struct pod *pod = p->pod;
	json_t *o, *ctrs = json_array();

	for (size_t i = 0; i < p->nr_ctrs; i++)
		json_array_append_new(ctrs, ctr_json(s, &p->ctrs[i]));
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:o, s:o}", "uid",
		      pod->uid, "name", pod->name ? pod->name : "", "namespace",
		      pod->namespace ? pod->namespace : "", "phase", pod_phase_name(pod->phase),
		      "k8s_qos", pod_k8s_qos_name(pod->k8s_qos), "qos_class",
		      pod_qos_name(pod->qos), "qos_class_raw", pod_qos_name(pod->qos_raw),
		      "priority_class", pod_prio_name(pod->prio), "priority_class_raw",
		      pod_prio_name(pod->prio_raw), "active", pod->is_active, "bare_metal",
		      pod->is_static, "stats", stats_json(s, &p->st), "containers", ctrs);
	if (!o)
		return NULL;
	if (pod->has_priority)
		set_new(o, "priority", json_integer(pod->priority));
	set_new(o, "priority_qos_class", json_string(pod_pq_name(pod__pq(pod))));
	set_new(o, "batch_resources", tier_json(pod, POD_TIER_BATCH));
	set_new(o, "mid_resources", tier_json(pod, POD_TIER_MID));
	if (pod->res_status.state == POD_ANN_OK && pod->res_status.cpuset &&
	    *pod->res_status.cpuset)
		set_new(o, "cpuset_status", json_string(pod->res_status.cpuset));
	if (p->cpuset && *p->cpuset)
		set_new(o, "cpuset", json_string(p->cpuset));
	if (p->cgroup) {
		set_new(o, "cgroup", json_string(p->cgroup));
		set_new(o, "cgroup_id", json_integer((json_int_t)p->cgid));
	}
	return o;
}

static json_t *node_json(const struct snapshot *s)
{
	const struct snap_node *n = &s->node;
	json_t *o = json_pack("{s:i}", "cpus", n->nr_cpus);

	if (!o)
		return NULL;
	if (n->topo)
		set_new(o, "topology",
			json_pack("{s:i, s:i, s:i, s:i, s:b}", "sockets", n->topo->nr_sockets,
				  "numa_nodes", n->topo->nr_nodes, "cores", n->topo->nr_cores,
				  "l3_domains", n->topo->nr_l3, "smt", n->topo->has_smt));
	if (n->has_cpu_usage)
		set_new(o, "cpu_cores_used", json_real(n->cpu_cores_used));
	if (n->has_memory)
		set_new(o, "memory",
			json_pack("{s:I, s:I}", "total_bytes", (json_int_t)n->mem_total_bytes,
				  "used_bytes", (json_int_t)n->mem_used_bytes));
	if (n->cpumgr)
		set_new(o, "kubelet_cpu_manager_policy", json_string(n->cpumgr->policy));
	if (*n->kubepods)
		set_new(o, "kubepods",
			json_pack("{s:s, s:s, s:s}", "root", n->kubepods, "burstable", n->burstable,
				  "besteffort", n->besteffort));
	return o;
}

static json_t *classes_json(const struct snapshot *s)
{
	json_t *o = json_object();

	for (int q = 0; q <= POD_QOS_SYSTEM; q++) {
		const char *name = q == POD_QOS_NONE ? "NONE" : pod_qos_name(q);

		set_new(o, name,
			json_pack("{s:i, s:f}", "pods", s->classes[q].pods, "cpu_cores",
				  s->classes[q].cpu_cores));
	}
	return o;
}

static json_t *others_json(const struct snapshot *s)
{
	json_t *a = json_array();

	for (size_t i = 0; i < s->nr_others; i++)
		json_array_append_new(a, json_pack("{s:s, s:I, s:o}", "cgroup", s->others[i].cgroup,
						   "cgroup_id", (json_int_t)s->others[i].cgid,
						   "stats", stats_json(s, &s->others[i].st)));
	return a;
}

static json_t *rdt_group_json(const struct snap_rdt_group *g)
{
	json_t *doms = json_array(), *o;

	for (unsigned int d = 0; d < g->nr_domains; d++) {
		json_t *x = json_pack("{s:i}", "cache_id", g->cache_id[d]);

		if (g->has_llc[d])
			set_new(x, "llc_occupancy_bytes",
				json_integer((json_int_t)g->llc_bytes[d]));
		if (g->has_mbm_total[d])
			set_new(x, "mbm_total_bytes",
				json_integer((json_int_t)g->mbm_total_bytes[d]));
		if (g->has_mbm_total_bps[d])
			set_new(x, "mbm_total_bytes_per_s", json_real(g->mbm_total_bps[d]));
		if (g->has_mbm_local[d])
			set_new(x, "mbm_local_bytes",
				json_integer((json_int_t)g->mbm_local_bytes[d]));
		if (g->has_mbm_local_bps[d])
			set_new(x, "mbm_local_bytes_per_s", json_real(g->mbm_local_bps[d]));
		json_array_append_new(doms, x);
	}
	o = json_pack("{s:s, s:s, s:o}", "group", g->name, "schemata", g->schemata, "domains",
		      doms);
	if (o && *g->class_name)
		set_new(o, "class", json_string(g->class_name));
	if (o && *g->pod_uid)
		set_new(o, "pod_uid", json_string(g->pod_uid));
	if (o && g->is_mon)
		set_new(o, "monitoring_only", json_true());
	return o;
}

static json_t *rdt_json(const struct snapshot *s)
{
	json_t *groups = json_array();

	for (size_t i = 0; i < s->nr_rdt; i++)
		json_array_append_new(groups, rdt_group_json(&s->rdt[i]));
	return json_pack("{s:b, s:o}", "enabled", s->rdt_enabled, "groups", groups);
}

static json_t *guard_json(const struct snap_guard *g)
{
	static const char *const steps[] = { "idle", "weight", "cpuset", "quota" };
	json_t *on = json_array(), *hist = json_array();

	for (unsigned int i = 0; i < 4; i++)
		if (g->steps & (1U << i))
			json_array_append_new(on, json_string(steps[i]));
	for (int i = 0; i < SNAP_REACT_BUCKETS; i++)
		json_array_append_new(hist, json_integer((json_int_t)g->react_hist[i]));
	return json_pack("{s:i, s:o, s:I, s:I, s:I, s:I, s:{s:I, s:f, s:f, s:f, s:o}}", "level",
			 (int)g->level, "steps", on, "breaches", (json_int_t)g->breaches,
			 "escalations", (json_int_t)g->escalations, "back_outs",
			 (json_int_t)g->back_outs, "relaxes", (json_int_t)g->relaxes, "reaction",
			 "count", (json_int_t)g->react_count, "sum_s", g->react_sum_s, "user_sum_s",
			 g->react_user_sum_s, "user_max_s", g->react_user_max_s, "cumulative",
			 hist);
}

static json_t *burst_json(const struct snap_burst *b)
{
	static const char *const states[] = { "unknown", "idle", "cooling", "overload" };
	json_t *rows = json_array();

	for (size_t i = 0; i < b->nr; i++) {
		const struct snap_burst_row *w = &b->rows[i];

		json_array_append_new(rows, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "pod",
						      w->pod, "namespace", w->ns, "container",
						      w->container, "asked_burst_us",
						      (json_int_t)w->asked_us, "burst_us",
						      (json_int_t)w->burst_us, "base_quota_us",
						      (json_int_t)w->base_quota_us, "quota_us",
						      (json_int_t)w->quota_us));
	}
	return json_pack("{s:s, s:f, s:f, s:o, s:I}", "share_pool",
			 states[(unsigned int)b->node_state < 4 ? b->node_state : 0],
			 "share_pool_used_cores", b->share_pool_used, "share_pool_total_cores",
			 b->share_pool_total, "containers", rows, "dropped",
			 (json_int_t)b->nr_dropped);
}

/* resctrl control: which pods got their own group shows in the groups; those that did not here */
static json_t *rdt_enforce_json(const struct snap_rdt_enforce *r)
{
	json_t *no = json_array(), *hist = json_array();

	for (unsigned int i = 0; i < r->pods_no_closid && i < SNAP_RDT_NO_CLOSID_PODS; i++)
		json_array_append_new(no, json_string(r->no_closid_uid[i]));
	for (int i = 0; i < SNAP_REACT_BUCKETS; i++)
		json_array_append_new(hist, json_integer((json_int_t)r->place_hist[i]));
	return json_pack("{s:i, s:i, s:i, s:o, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, "
			 "s:i, s:I, s:I, s:{s:I, s:f, s:f, s:o}}",
			 "groups", (int)r->groups, "pod_groups", (int)r->pod_groups,
			 "pods_no_closid", (int)r->pods_no_closid, "no_closid_pods", no,
			 "no_closid_total", (json_int_t)r->no_closid, "schemata_writes",
			 (json_int_t)r->schemata_writes, "errors", (json_int_t)r->errors,
			 "groups_created", (json_int_t)r->groups_created, "groups_removed",
			 (json_int_t)r->groups_removed, "placed_events",
			 (json_int_t)r->placed_events, "placed_reconcile",
			 (json_int_t)r->placed_reconcile, "misses", (json_int_t)r->misses,
			 "mon_groups", (int)r->mon_groups, "mon_groups_created",
			 (json_int_t)r->mon_groups_created, "no_rmid_total", (json_int_t)r->no_rmid,
			 "placement", "count", (json_int_t)r->place_count, "sum_s", r->place_sum_s,
			 "max_s", r->place_max_s, "cumulative", hist);
}

static json_t *enforce_json(const struct snap_enforce *e)
{
	json_t *counts = json_array(), *recent = json_array(), *o;
	char cpus[CPULIST_BUF_SIZE];

	for (size_t i = 0; i < e->nr_counts; i++)
		json_array_append_new(
			counts, json_pack("{s:s, s:s, s:s, s:I}", "strategy", e->counts[i].strategy,
					  "knob", e->counts[i].knob, "result", e->counts[i].result,
					  "count", (json_int_t)e->counts[i].count));
	for (size_t i = 0; i < e->nr_recent; i++) {
		const struct snap_action *a = &e->recent[i];

		json_array_append_new(recent,
				      json_pack("{s:f, s:s, s:s, s:s, s:s, s:s, s:s}", "time",
						a->wall_ns / 1e9, "strategy", a->strategy, "cgroup",
						a->cgroup, "knob", a->knob, "value", a->value,
						"result", a->result, "why", a->why));
	}
	o = json_pack("{s:b, s:b, s:I, s:o, s:o}", "enabled", e->enabled, "dry_run", e->dry_run,
		      "write_errors", (json_int_t)e->write_errors, "actions", counts, "recent",
		      recent);
	if (o && e->has_be_cpus && cpulist_format(&e->be_cpus, cpus, sizeof(cpus)) >= 0)
		set_new(o, "be_cpus", json_string(cpus));
	if (o && e->has_be_quota)
		set_new(o, "be_cfs_quota_us", json_integer(e->be_quota_us));
	if (o && e->guard.enabled)
		set_new(o, "guard", guard_json(&e->guard));
	if (o && e->burst.enabled)
		set_new(o, "cpu_burst", burst_json(&e->burst));
	if (o && e->nodeslo.apiserver)
		set_new(o, "nodeslo",
			json_pack("{s:s, s:s, s:b, s:b, s:I, s:I}", "source", "apiserver", "node",
				  e->nodeslo.node, "stale", e->nodeslo.stale, "spec_loaded",
				  e->nodeslo.has_spec, "updates", (json_int_t)e->nodeslo.updates,
				  "failures", (json_int_t)e->nodeslo.failures));
	if (o && (e->rdt.on || e->rdt.groups))
		set_new(o, "resctrl", rdt_enforce_json(&e->rdt));
	return o;
}

static json_t *snapshot_json(const struct snapshot *s, const struct snap_enforce *en)
{
	json_t *pods = json_array(), *pmu = json_array();

	for (size_t i = 0; i < s->nr_pods; i++)
		json_array_append_new(pods, pod_json(s, &s->pods[i]));
	for (int i = 0; i < s->pmu_n; i++)
		json_array_append_new(pmu, json_string(s->pmu[i].name));
	return json_pack("{s:I, s:f, s:f, s:s, s:s, s:{s:s, s:b}, s:I, s:o, s:o, s:o, s:o, s:o, "
			 "s:o, s:o, s:o, s:{s:I, s:I, s:I, s:I, s:I}}",
			 "seq", (json_int_t)s->seq, "time", s->wall_ns / 1e9, "interval_s",
			 s->interval_s, "hierarchy", s->hierarchy, "mount", s->mount, "pod_source",
			 "kind", s->pod_source, "stale", s->pods_stale, "dropped_switches",
			 (json_int_t)s->dropped_switches, "pmu_events", pmu, "node", node_json(s),
			 "classes", classes_json(s), "pods", pods, "cgroups", others_json(s),
			 "resctrl", rdt_json(s), "enforcement", enforce_json(en), "events",
			 json_pack("{s:I, s:I, s:I, s:I, s:I}", "emitted",
				   (json_int_t)s->events.emitted, "dropped",
				   (json_int_t)s->events.dropped, "suppressed",
				   (json_int_t)s->events.suppressed, "queue_lost",
				   (json_int_t)s->events.queue_lost, "watches",
				   (json_int_t)s->events.watches),
			 "counters", "slots", (json_int_t)s->counters.slots, "slotted",
			 (json_int_t)s->counters.slotted, "hashed", (json_int_t)s->counters.hashed,
			 "slot_push_failures", (json_int_t)s->counters.slot_push_failures,
			 "slots_pending", (json_int_t)s->counters.slots_pending);
}

char *snapjson_format(const struct snapshot *s, const struct snap_enforce *en, bool pretty)
{
	static const struct snap_enforce none;
	json_t *root = snapshot_json(s, en ? en : &none);
	char *text;

	if (!root)
		return NULL;
	text = json_dumps(root, (pretty ? JSON_INDENT(2) : JSON_COMPACT) | JSON_REAL_PRECISION(15));
	json_decref(root);
	return text;
}
