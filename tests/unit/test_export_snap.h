/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_EXPORT_SNAP_H
#define KQOS_TESTS_EXPORT_SNAP_H

/*
 * Hand-built snapshots for the export and kqos-top tests: a rich node (pods with containers and
 * every stat, PMU, resctrl, enforcement, a bare-metal group, a cgroup outside pods, a label that
 * needs escaping) and a bare one (pods that have no metric at all). Header-only so the unit and
 * live suites share it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "snapshot.h"

static struct pod snap_fx_pods[5] = {
	{ .uid = "uid-web-0",
	  .name = "web-0",
	  .namespace = "shop",
	  .qos = POD_QOS_LS,
	  .qos_raw = POD_QOS_LS,
	  .prio_raw = POD_PRIO_PROD,
	  .is_active = true,
	  .phase = POD_PHASE_RUNNING },
	{ .uid = "uid-batch-1",
	  .name = "batch-1",
	  .namespace = "jobs",
	  .qos = POD_QOS_BE,
	  .qos_raw = POD_QOS_BE, /* koord-mid/BE */
	  .prio_raw = POD_PRIO_MID,
	  .is_active = true,
	  .phase = POD_PHASE_RUNNING,
	  .k8s_qos = POD_K8S_QOS_BESTEFFORT },
	{ .uid = "uid-idle-2",
	  .name = "idle-2",
	  .namespace = "esc\"a\\b\nc",
	  .qos = POD_QOS_LSR,
	  .is_active = true,
	  .phase = POD_PHASE_PENDING,
	  .k8s_qos = POD_K8S_QOS_GUARANTEED },
	{ .uid = "uid-bm-3",
	  .name = "batchgrp",
	  .namespace = "bare-metal",
	  .qos = POD_QOS_BE,
	  .qos_raw = POD_QOS_BE,
	  .prio = POD_PRIO_BATCH,
	  .is_active = true,
	  .is_static = true },
	{ .uid = "uid-db-4",
	  .name = "db-4",
	  .namespace = "shop",
	  .qos = POD_QOS_LSR,
	  .qos_raw = POD_QOS_LSR, /* koord-batch/LSR: an invalid pair */
	  .prio_raw = POD_PRIO_BATCH,
	  .is_active = true,
	  .phase = POD_PHASE_RUNNING,
	  .k8s_qos = POD_K8S_QOS_GUARANTEED },
};

/* Room for the buckets of the fixtures' entities (rq_hist_total points into it). */
static __u64 snap_fx_buckets[64][SNAP_RQ_BUCKETS];
static struct snap_pmu_stats snap_fx_pmu[64]; /* the same for st.pmu */
static unsigned int snap_fx_nbuckets;

/* Stats with every metric; @k scales the values so entities differ. */
static inline void snap_fx_stats(struct snap_stats *st, double k, int pmu_n)
{
	struct snap_pmu_stats *p = &snap_fx_pmu[snap_fx_nbuckets % 64];
	__u64 *b = snap_fx_buckets[snap_fx_nbuckets++ % 64];

	memset(st, 0, sizeof(*st));
	st->has_cpu = true;
	st->cpu_cores = 0.5 * k;
	st->runs_per_s = 100 * k;
	st->rq_waits = (__u64)(50 * k);
	st->rq_wait_mean_ns = 20000;
	st->rq_p50_ns = 8000;
	st->rq_p99_ns = (__u64)(400000 * k);
	st->rq_max_ns = 2000000;
	st->cpu_ns_total = (__u64)(12.5e9 * k);
	st->rq_waits_total = (__u64)(1000 * k) + 24;
	st->rq_wait_ns_total = (__u64)(3e8 * k);
	for (int i = 0; i < SNAP_RQ_BUCKETS; i++)
		b[i] = (__u64)(40 * k) * (__u64)i + (__u64)i;
	st->rq_hist_total = b;
	st->has_throttle = true;
	st->nr_periods = (__u64)(1000 * k);
	st->nr_throttled = (__u64)(100 * k);
	st->throttled_ns = (__u64)(2.5e9 * k);
	st->throttled_ratio = 0.1;
	st->pmu_n = pmu_n;
	st->pmu = pmu_n ? p : NULL;
	for (int i = 0; i < pmu_n; i++) {
		p->per_s[i] = 1e9 * k;
		p->running_ratio[i] = 0.5;
		p->total[i] = (__u64)(5e11 * k) * (__u64)(i + 1);
	}
	st->has_cpi = pmu_n > 1;
	st->cpi = 1.5;
}

/* @name and @id are borrowed, as the snapshot borrows them from the pod list. */
static inline void snap_fx_ctr(struct snap_container *c, const char *name, const char *id,
			       const char *cg, double k, int pmu_n)
{
	c->name = name;
	c->id = id;
	c->cgroup = strdup(cg);
	c->cgid = (__u64)(k * 1000);
	snap_fx_stats(&c->st, k, pmu_n);
}

static inline void snap_fx_rdt(struct snap_rdt_group *g, const char *name, const char *cls,
			       const char *uid, const char *schemata, __u64 llc)
{
	snprintf(g->name, sizeof(g->name), "%s", name);
	snprintf(g->class_name, sizeof(g->class_name), "%s", cls);
	snprintf(g->pod_uid, sizeof(g->pod_uid), "%s", uid);
	snprintf(g->schemata, sizeof(g->schemata), "%s", schemata);
	g->nr_domains = 2;
	for (unsigned int d = 0; d < 2; d++) {
		g->cache_id[d] = d;
		g->has_llc[d] = true;
		g->llc_bytes[d] = llc * (d + 1);
		g->has_mbm_total[d] = g->has_mbm_local[d] = true;
		g->has_mbm_total_bps[d] = g->has_mbm_local_bps[d] = true;
		g->mbm_total_bytes[d] = 1000000000ULL * (d + 1);
		g->mbm_total_bps[d] = 50e6;
		g->mbm_local_bytes[d] = 500000000ULL * (d + 1);
		g->mbm_local_bps[d] = 25e6;
	}
}

/* The enforcement state published beside the last fixture built (zero for the bare one). */
static struct snap_enforce snap_fx_en;

static inline void snap_fx_enforce(struct snap_enforce *en)
{
	en->enabled = true;
	en->has_be_cpus = true;
	cpulist_parse("2-3", &en->be_cpus);
	en->has_be_quota = true;
	en->be_quota_us = 200000;
	en->write_errors = 2;
	en->nr_counts = 2;
	snprintf(en->counts[0].strategy, 24, "cpu_suppress");
	snprintf(en->counts[0].knob, 16, "cpuset");
	snprintf(en->counts[0].result, 16, "ok");
	en->counts[0].count = 7;
	snprintf(en->counts[1].strategy, 24, "cpu_suppress");
	snprintf(en->counts[1].knob, 16, "cfs_quota");
	snprintf(en->counts[1].result, 16, "error");
	en->counts[1].count = 2;
	en->nr_recent = 1;
	en->recent[0].wall_ns = 1795900000000000000ULL;
	snprintf(en->recent[0].strategy, 24, "cpu_suppress");
	snprintf(en->recent[0].cgroup, 128, "/kubepods/besteffort");
	snprintf(en->recent[0].knob, 16, "cpuset");
	snprintf(en->recent[0].value, 64, "2-3");
	snprintf(en->recent[0].result, 16, "ok");
	snprintf(en->recent[0].why, 96, "LS load 1.2 cores");
	en->rdt.on = true;
	en->rdt.groups = 3;
	en->rdt.pod_groups = 1;
	en->rdt.pods_no_closid = 1;
	snprintf(en->rdt.no_closid_uid[0], 64, "5f3c0000-0000-4000-8000-000000000002");
	en->rdt.no_closid = 1;
	en->rdt.placed_events = 40;
	en->rdt.placed_reconcile = 5;
	en->rdt.misses = 1;
	en->rdt.place_count = 40;
	en->rdt.place_sum_s = 0.012;
	for (int i = 3; i < SNAP_REACT_BUCKETS; i++)
		en->rdt.place_hist[i] = 40;
}

/* The rich node. @seq distinguishes publishes. */
static inline struct snapshot *snap_fx_rich(__u64 seq)
{
	struct snapshot *s = snapshot__new();
	struct snap_pod *p;

	s->seq = seq;
	s->wall_ns = 1795900000000000000ULL + seq * 1000000000ULL;
	s->mono_ns = seq * 1000000000ULL;
	s->interval_s = 1.0;
	snprintf(s->hierarchy, sizeof(s->hierarchy), "v1-cpu");
	snprintf(s->mount, sizeof(s->mount), "/sys/fs/cgroup/cpu");
	snprintf(s->pod_source, sizeof(s->pod_source), "file");
	s->node.nr_cpus = 4;
	s->node.has_cpu_usage = true;
	s->node.cpu_cores_used = 2.25;
	s->counters = (struct snap_counter_src){ .slots = 682,
						 .slotted = 682,
						 .hashed = 40,
						 .slot_push_failures = 3,
						 .slots_pending = 1 };
	s->pmu_n = 2;
	snprintf(s->pmu[0].name, PMU_NAME_LEN, "cycles");
	snprintf(s->pmu[1].name, PMU_NAME_LEN, "instructions");

	s->nr_pods = 5;
	s->pods = calloc(5, sizeof(*s->pods));
	for (int i = 0; i < 5; i++) {
		char cg[128];

		p = &s->pods[i];
		p->pod = &snap_fx_pods[i];
		snprintf(cg, sizeof(cg), "/kubepods/pod%s", snap_fx_pods[i].uid);
		p->cgroup = strdup(snap_fx_pods[i].is_static ? "/batch.slice" : cg);
		p->cgid = 100 + i;
	}
	/* web-0: two containers, all stats */
	p = &s->pods[0];
	snap_fx_stats(&p->st, 3.0, 2);
	p->nr_ctrs = 2;
	p->ctrs = calloc(2, sizeof(*p->ctrs));
	snap_fx_ctr(&p->ctrs[0], "web", "web-id", "/kubepods/poduid-web-0/web", 2.0, 2);
	snap_fx_ctr(&p->ctrs[1], "sidecar", "sidecar-id", "/kubepods/poduid-web-0/sidecar", 1.0, 2);
	/* batch-1: one container, no PMU */
	p = &s->pods[1];
	snap_fx_stats(&p->st, 1.5, 0);
	p->nr_ctrs = 1;
	p->ctrs = calloc(1, sizeof(*p->ctrs));
	snap_fx_ctr(&p->ctrs[0], "worker", "worker-id", "/kubepods/poduid-batch-1/worker", 1.5, 0);
	/* idle-2: nothing measured (never ran); stats stay absent */
	/* the bare-metal group */
	snap_fx_stats(&s->pods[3].st, 0.5, 0);
	/* db-4: cpu only, never throttled file */
	snap_fx_stats(&s->pods[4].st, 0.2, 0);
	s->pods[4].st.has_throttle = false;

	s->nr_others = 1;
	s->others = calloc(1, sizeof(*s->others));
	s->others[0].cgroup = strdup("/system.slice/sshd.service");
	s->others[0].cgid = 77;
	snap_fx_stats(&s->others[0].st, 0.1, 0);

	s->classes[POD_QOS_LS].pods = 1;
	s->classes[POD_QOS_LS].cpu_cores = 1.5;
	s->classes[POD_QOS_LSR].pods = 2;
	s->classes[POD_QOS_LSR].cpu_cores = 0.1;
	s->classes[POD_QOS_BE].pods = 2;
	s->classes[POD_QOS_BE].cpu_cores = 1.0;

	s->rdt_enabled = true;
	s->nr_rdt = 3;
	s->rdt = calloc(3, sizeof(*s->rdt));
	snap_fx_rdt(&s->rdt[0], "kqos-LS", "LS", "", "L3:0=ff0;1=ff0;MB:0=100;1=100", 4 << 20);
	snap_fx_rdt(&s->rdt[1], "kqos-BE", "BE", "", "L3:0=00f;1=00f;MB:0=30;1=30", 1 << 20);
	snap_fx_rdt(&s->rdt[2], "kqos-pod-web-0", "", "uid-web-0", "L3:0=f00;1=f00", 2 << 20);
	snap_fx_enforce(&snap_fx_en);
	return s;
}

/* Pods known but nothing measured: no PMU, no resctrl, no enforcement. */
static inline struct snapshot *snap_fx_bare(void)
{
	struct snapshot *s = snapshot__new();

	memset(&snap_fx_en, 0, sizeof(snap_fx_en));
	s->seq = 1;
	s->wall_ns = 1795900000000000000ULL;
	s->interval_s = 1.0;
	snprintf(s->hierarchy, sizeof(s->hierarchy), "v2");
	snprintf(s->pod_source, sizeof(s->pod_source), "kubelet");
	s->node.nr_cpus = 2;
	s->nr_pods = 2;
	s->pods = calloc(2, sizeof(*s->pods));
	s->pods[0].pod = &snap_fx_pods[0];
	s->pods[1].pod = &snap_fx_pods[1];
	return s;
}

#endif
