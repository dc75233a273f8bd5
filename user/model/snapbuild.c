// SPDX-License-Identifier: GPL-2.0
/* Snapshot assembly from plain inputs: pure, every file and map is read in collect/. */
#define _GNU_SOURCE /* asprintf, strndup */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "snapbuild.h"
#include "snaplayout.h"

/* --- cumulative counters of the "others" ---------------------------------------------------- */

/*
 * The counters since start of the cgroups that belong to no pod, carried from the last tick's
 * table (sorted by cgid, as in->cgs is) into this tick's: a cgroup that left the maps leaves
 * the table. Pods and containers keep theirs in the layout.
 */
struct other_cums {
	struct cg_cum *v, *next; /* the last tick's, and this tick's being made */
	size_t n, vcap, nnext, cap, cursor;
};

static struct cg_cum *other_cum(struct other_cums *oc, __u64 cgid)
{
	struct cg_cum *c;

	if (oc->nnext == oc->cap) {
		size_t cap = oc->cap ? 2 * oc->cap : 16;
		struct cg_cum *v = realloc(oc->next, cap * sizeof(*v));

		if (!v)
			return NULL; /* its counters start again next tick */
		oc->next = v;
		oc->cap = cap;
	}
	while (oc->cursor < oc->n && oc->v[oc->cursor].cgid < cgid)
		oc->cursor++;
	c = &oc->next[oc->nnext++];
	if (oc->cursor < oc->n && oc->v[oc->cursor].cgid == cgid)
		*c = oc->v[oc->cursor];
	else
		*c = (struct cg_cum){ .cgid = cgid };
	return c;
}

/* This tick's table becomes the one the next tick carries from. */
static void other_cums_end(struct other_cums *oc)
{
	struct cg_cum *t = oc->v;
	size_t cap = oc->vcap;

	oc->v = oc->next;
	oc->vcap = oc->cap;
	oc->n = oc->nnext;
	oc->next = t;
	oc->cap = cap;
	oc->nnext = oc->cursor = 0;
}

struct snapbuild {
	char hierarchy[16];
	char mount[PATH_MAX];
	char pod_source[16];
	struct pod_list *walk_pods; /* pods made from the walk (cgroup source) */
	unsigned long walk_pods_gen; /* the rescan walk_pods was built from */
	bool has_walk_pods;
	struct other_cums others;
	struct layout lay;
	/* entity histograms: each delta's next in its entity's chain (1 + index, 0 ends) */
	__u32 *hnext;
	size_t hnext_cap;
	bool no_chain; /* no memory for hnext this tick: every histogram is stale */
	__u32 hist[KQOS_HIST_SLOTS]; /* the one being summed */
	__u64 stat_busy;
	bool has_stat;
	__u64 seq;
};

/* --- construction ----------------------------------------------------------------------------- */

int snapbuild__new(const struct snapbuild_opts *opts, struct snapbuild **ret)
{
	struct snapbuild *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return -ENOMEM;
	snprintf(sb->hierarchy, sizeof(sb->hierarchy), "%s", opts->hierarchy ?: "");
	snprintf(sb->mount, sizeof(sb->mount), "%s", opts->mount ?: "");
	snprintf(sb->pod_source, sizeof(sb->pod_source), "%s", opts->pod_source ?: "none");
	*ret = sb;
	return 0;
}

void snapbuild__free(struct snapbuild *sb)
{
	if (!sb)
		return;
	layout_clear(&sb->lay);
	pod_list__put(sb->walk_pods);
	free(sb->others.v);
	free(sb->others.next);
	free(sb->hnext);
	free(sb);
}

/* --- entities and their cgroups ------------------------------------------------------------ */

/* --- pods from the walk or the source --------------------------------------------------------- */

static enum pod_k8s_qos k8s_of(enum cgwalk_qos q)
{
	return q == CGWALK_QOS_GUARANTEED ? POD_K8S_QOS_GUARANTEED :
	       q == CGWALK_QOS_BURSTABLE  ? POD_K8S_QOS_BURSTABLE :
					    POD_K8S_QOS_BESTEFFORT;
}

static int pod_from_walk(const struct cgwalk_pod *w, struct pod *p)
{
	memset(p, 0, sizeof(*p));
	p->uid = strdup(w->uid);
	p->phase = POD_PHASE_RUNNING;
	p->is_active = true;
	p->k8s_qos = k8s_of(w->qos);
	p->qos = pod_qos_from_k8s(p->k8s_qos);
	p->prio = pod_prio_from_qos(p->qos);
	p->containers = calloc(w->nr_containers ? w->nr_containers : 1, sizeof(*p->containers));
	if (!p->uid || !p->containers)
		return -ENOMEM;
	for (size_t i = 0; i < w->nr_containers; i++) {
		struct pod_container *c = &p->containers[p->nr_containers++];

		c->id = strdup(w->containers[i].id);
		c->name = strndup(w->containers[i].id, 12);
		pod_res_init(&c->requests);
		pod_res_init(&c->limits);
		if (!c->id || !c->name)
			return -ENOMEM;
	}
	return 0;
}

/* The cgroup source: pods are what the walk found, without names or labels. */
static struct pod_list *walk_pod_list(struct snapbuild *sb, const struct snapbuild_input *in)
{
	struct pod_list *l;

	if (sb->has_walk_pods && sb->walk_pods_gen == in->walk_gen)
		return sb->walk_pods;
	l = pod_list__new();
	if (!l)
		return sb->walk_pods;
	l->pods = calloc(in->walk->nr_pods ? in->walk->nr_pods : 1, sizeof(*l->pods));
	for (size_t i = 0; l->pods && i < in->walk->nr_pods; i++) {
		if (pod_from_walk(&in->walk->pods[i], &l->pods[l->nr_pods++]))
			break;
	}
	pod_list__put(sb->walk_pods);
	sb->walk_pods = l;
	sb->walk_pods_gen = in->walk_gen;
	sb->has_walk_pods = true;
	return l;
}

static struct pod_list *current_pods(struct snapbuild *sb, const struct snapbuild_input *in)
{
	if (in->pods)
		return in->pods;
	if (in->pods_from_walk && in->walk)
		return walk_pod_list(sb, in);
	return NULL;
}

/* --- throttling and cpusets ---------------------------------------------------------------- */

#define CPUSET_RECENT 8

/* One build's distinct cpuset lists, newest last (round robin). */
struct cpuset_pool {
	const char *recent[CPUSET_RECENT];
	unsigned int next;
};

/*
 * The snapshot's copy of cpuset list @cpu, shared by every entity with the same list: most
 * have one of a few, and 128 bytes per entity and snapshot were a tenth of the RSS at 1000
 * pods. The last CPUSET_RECENT distinct lists are looked up; a list past them is copied again.
 * "" when it cannot be kept.
 */
static const char *pooled_cpuset(struct cpuset_pool *cp, struct snap_strings *ss, const char *cpu)
{
	char *copy;

	if (!cpu || !*cpu)
		return "";
	for (unsigned int i = 0; i < CPUSET_RECENT; i++)
		if (cp->recent[i] && !strcmp(cp->recent[i], cpu))
			return cp->recent[i];
	if (!ss || ss->n == ss->cap || !(copy = strdup(cpu)))
		return "";
	ss->v[ss->n++] = copy;
	cp->recent[cp->next++ % CPUSET_RECENT] = copy;
	return copy;
}

static void add_files(struct cpuset_pool *cp, struct snap_strings *pool,
		      const struct cg_file_stat *f, struct snap_stats *st, const char **cpuset)
{
	*cpuset = "";
	if (!f)
		return;
	/* The CPUs the cgroup really runs on (cpuset's effective list), for kqos-top. */
	*cpuset = pooled_cpuset(cp, pool, f->cpuset);
	st->has_memory = f->has_memory;
	st->mem_used_bytes = f->mem_used_bytes;
	if (!f->has_cpu_stat)
		return;
	st->has_throttle = true;
	st->nr_periods = f->nr_periods;
	st->nr_throttled = f->nr_throttled;
	st->throttled_ns = f->throttled_ns;
	/* between the collector's last two reads, which may be more than one tick apart */
	if (f->has_prev && f->nr_periods > f->prev_periods) {
		__u64 dp = f->nr_periods - f->prev_periods;
		__u64 dt = f->nr_throttled >= f->prev_throttled ?
				   f->nr_throttled - f->prev_throttled :
				   0;

		st->throttled_ratio = (double)dt / (double)dp;
	}
}

static void throttle_all(const struct layout *l, struct snapshot *s)
{
	struct cpuset_pool cp = { 0 };

	s->cpusets = snap_strings__new(l->npods + l->nctrs + 1);
	for (size_t i = 0; i < s->nr_pods; i++) {
		struct snap_pod *p = &s->pods[i];

		add_files(&cp, s->cpusets, l->ent[i].file, &p->st, &p->cpuset);
		for (size_t j = 0; j < p->nr_ctrs; j++) {
			struct snap_container *c = &p->ctrs[j];

			add_files(&cp, s->cpusets, l->ent[l->npods + l->ctr_base[i] + j].file,
				  &c->st, &c->cpuset);
		}
	}
}

/* --- node ------------------------------------------------------------------------------------ */

static void node_cpu(struct snapbuild *sb, const struct snapbuild_input *in, struct snap_node *n)
{
	const struct node_stat *ns = &in->node;

	if (!ns->has_cpu)
		return;
	if (sb->has_stat && ns->busy_ticks >= sb->stat_busy && in->dt_ns && ns->clk_tck > 0) {
		n->has_cpu_usage = true;
		n->cpu_cores_used = (double)(ns->busy_ticks - sb->stat_busy) / (double)ns->clk_tck /
				    ((double)in->dt_ns / 1e9);
	}
	sb->stat_busy = ns->busy_ticks;
	sb->has_stat = true;
}

void snapbuild__baseline(struct snapbuild *sb, const struct node_stat *node)
{
	if (!node->has_cpu)
		return;
	sb->stat_busy = node->busy_ticks;
	sb->has_stat = true;
}

static void node_memory(const struct node_stat *ns, struct snap_node *n)
{
	__u64 total = ns->mem_total_kb, avail = ns->mem_available_kb;

	if (!ns->has_memory || !total)
		return;
	n->has_memory = true;
	n->mem_total_bytes = total * 1024;
	n->mem_used_bytes = (total - (avail < total ? avail : total)) * 1024;
}

/* The QoS tiers' dirs below the kubepods root, in the naming of the root's cgroup driver. */
static void kubepods_dirs(const char *kubepods, struct snap_node *n)
{
	if (!kubepods || !*kubepods || strlen(kubepods) >= sizeof(n->kubepods))
		return;
	snprintf(n->kubepods, sizeof(n->kubepods), "%s", kubepods);
	if (strstr(n->kubepods, ".slice")) {
		char stem[128];
		const char *slash = strrchr(n->kubepods, '/');
		const char *base = slash ? slash + 1 : n->kubepods;

		snprintf(stem, sizeof(stem), "%.*s", (int)(strlen(base) - 6), base);
		snprintf(n->burstable, sizeof(n->burstable), "%s/%s-burstable.slice", n->kubepods,
			 stem);
		snprintf(n->besteffort, sizeof(n->besteffort), "%s/%s-besteffort.slice",
			 n->kubepods, stem);
	} else {
		snprintf(n->burstable, sizeof(n->burstable), "%s/burstable", n->kubepods);
		snprintf(n->besteffort, sizeof(n->besteffort), "%s/besteffort", n->kubepods);
	}
}

static void build_node(struct snapbuild *sb, const struct snapbuild_input *in, struct snapshot *s)
{
	struct snap_node *n = &s->node;

	n->topo = in->topo;
	n->nr_cpus = in->topo ? (unsigned int)in->topo->nr_cpus : in->nr_online;
	n->cpumgr = cpumgr_state__ref(in->cpumgr);
	n->has_root_cpus = in->has_root_cpus;
	n->root_cpus = in->root_cpus;
	node_cpu(sb, in, n);
	node_memory(&in->node, n);
	kubepods_dirs(in->kubepods, n);
}

/* --- assembling ------------------------------------------------------------------------------ */

/* A container's cgroups count for its pod too. */
static void fold_containers(struct snapshot *s, struct layout *l, size_t i)
{
	for (size_t j = 0; j < s->pods[i].nr_ctrs; j++) {
		const struct cg_acc *c = &l->acc[l->npods + l->ctr_base[i] + j];

		if (c->any)
			cg_acc_merge(layout_acc(l, (long)i), c);
	}
}

/* sb->hist, valid over @had, grows to @want: the slots it takes in are zeroed first. */
static void widen(struct snapbuild *sb, struct hist_span had, struct hist_span want)
{
	unsigned int hlo, hhi, wlo, whi;

	hist_span_bounds(had, &hlo, &hhi);
	hist_span_bounds(want, &wlo, &whi);
	if (hlo >= hhi) {
		memset(&sb->hist[wlo], 0, (whi - wlo) * sizeof(sb->hist[0]));
		return;
	}
	memset(&sb->hist[wlo], 0, (hlo - wlo) * sizeof(sb->hist[0]));
	memset(&sb->hist[hhi], 0, (whi - hhi) * sizeof(sb->hist[0]));
}

/*
 * The histograms of @a's cgroups (its chain through sb->hnext), *@n of them so far: the first
 * is only noted in *@first (with its span in *@span); from the second on they are summed in
 * sb->hist, a whole histogram, over *@span, which holds them all: only its slots are read or
 * written.
 */
static void chain_hist(struct snapbuild *sb, const struct cg_delta *cgs, const struct cg_acc *a,
		       const __u32 **first, unsigned int *n, struct hist_span *span)
{
	static const struct hist_span empty = { .lo = KQOS_HIST_SLOTS, .hi = KQOS_HIST_SLOTS };

	for (__u32 k = a->hist_head; k; k = sb->hnext[k - 1]) {
		const struct cg_totals *d = &cgs[k - 1].d;
		struct hist_span u;

		if (d->no_hist)
			continue;
		u = hist_span_union(*span, d->rq_span);
		if (!*n) {
			*first = d->rq_hist;
			*span = d->rq_span;
			(*n)++;
			continue;
		}
		if (*n == 1) { /* the first moves into the sum */
			widen(sb, empty, u);
			hist_add(sb->hist, *first, *span);
		} else {
			widen(sb, *span, u);
		}
		hist_add(sb->hist, d->rq_hist, d->rq_span);
		*span = u;
		(*n)++;
	}
}

/*
 * @a's histogram this tick, with those of @more (a pod's containers, already folded into @a):
 * NULL when no quantile is taken (no waits, or a histogram not read this tick), so that a
 * tick between histogram reads sums nothing. One cgroup's (a container's, mostly) is its own
 * increase, not a copy: half the entities, 1 KiB each, on every histogram tick.
 */
static const __u32 *entity_hist(struct snapbuild *sb, const struct cg_delta *cgs,
				const struct cg_acc *a, const struct cg_acc *more, size_t nmore,
				struct hist_span *span)
{
	const __u32 *first = NULL;
	unsigned int n = 0, lo, hi;

	*span = (struct hist_span){ .lo = KQOS_HIST_SLOTS, .hi = KQOS_HIST_SLOTS };
	if (sb->no_chain || !a->any || a->no_hist || !a->rq_wait_cnt)
		return NULL;
	chain_hist(sb, cgs, a, &first, &n, span);
	for (size_t j = 0; j < nmore; j++)
		chain_hist(sb, cgs, &more[j], &first, &n, span);
	if (n <= 1)
		return first;
	hist_span_bounds(*span, &lo, &hi);
	return &sb->hist[lo]; /* handed out from its span's first slot */
}

/* Entity @a's stats, with its histogram this tick when one is read. */
static void entity_stats(struct snapbuild *sb, const struct snapbuild_input *in,
			 const struct snapshot *s, const struct cg_acc *a, const struct cg_cum *c,
			 const struct cg_acc *more, size_t nmore, struct snap_stats *st)
{
	struct hist_span span;
	const __u32 *h = entity_hist(sb, in->cgs, a, more, nmore, &span);

	sample_stats(a, c, h, span, in->dt_ns, s->pmu, s->pmu_n, st);
}

/* Room for one more "other": most cgroups belong to a pod, so the list grows as it needs. */
static struct snap_other *other_slot(struct snapshot *s, size_t *cap)
{
	struct snap_other *v;
	size_t n;

	if (s->nr_others < *cap)
		return &s->others[s->nr_others];
	n = *cap ? 2 * *cap : 16;
	v = realloc(s->others, n * sizeof(*v));
	if (!v)
		return NULL;
	s->others = v;
	*cap = n;
	return &s->others[s->nr_others];
}

static int add_other(struct snapshot *s, size_t *cap, const struct cg_delta *d, struct cg_cum *c,
		     __u64 dt)
{
	struct cg_acc one = { 0 };
	struct snap_other *o = other_slot(s, cap);

	if (!o)
		return -ENOMEM;
	*o = (struct snap_other){ 0 };
	o->cgroup = strdup(d->path);
	if (!o->cgroup)
		return -ENOMEM;
	o->cgid = d->d.cgid;
	o->st.pmu = s->pmu_n ? &o->pmu : NULL;
	cg_acc_add(&one, d);
	sample_stats(&one, c, d->d.no_hist ? NULL : d->d.rq_hist, d->d.rq_span, dt, s->pmu,
		     s->pmu_n, &o->st);
	rq_quantiles_carry(&c->q, &o->st);
	cg_cum_le(c, o->hist_total);
	s->nr_others++;
	return 0;
}

/* Once the list stopped growing (it moves as it grows): each other's figures are its own. */
static void others_own(struct snapshot *s)
{
	for (size_t i = 0; i < s->nr_others; i++) {
		s->others[i].st.rq_hist_total = s->others[i].hist_total;
		s->others[i].st.pmu = s->pmu_n ? &s->others[i].pmu : NULL;
	}
}

/* A cgroup of no pod: its counters since start, and an "other" if it ran. */
static bool charge_other(struct snapbuild *sb, struct snapshot *s, size_t *cap,
			 const struct cg_delta *d, __u64 dt, bool others)
{
	struct cg_cum *c = other_cum(&sb->others, d->d.cgid);

	if (!c)
		return others;
	cg_cum_add_delta(c, &d->d);
	if (others && (d->d.oncpu_ns || d->d.nr_switch_in))
		return !add_other(s, cap, d, c, dt);
	return others;
}

/* in->cgs is sorted by cgid, so each pod's list comes out ascending. */
static void add_member(struct snap_pod *p, __u64 cgid)
{
	size_t n = p->nr_cgids;
	__u64 *v;

	if (!p->cgids)
		p->cgids = p->cgids_inline;
	if (n == SNAP_CGIDS_INLINE && p->cgids == p->cgids_inline) {
		v = malloc(2 * n * sizeof(*v));
		if (!v)
			return;
		memcpy(v, p->cgids_inline, sizeof(p->cgids_inline));
		p->cgids = v;
	} else if (n > SNAP_CGIDS_INLINE && (n & (n - 1)) == 0) { /* 8, 16, ...: doubling */
		v = realloc(p->cgids, 2 * n * sizeof(*v));
		if (!v)
			return;
		p->cgids = v;
	}
	p->cgids[p->nr_cgids++] = cgid;
}

/* Room for this tick's histogram chains; without it the tick's quantiles are stale. */
static void size_chains(struct snapbuild *sb, size_t n)
{
	__u32 *v;

	sb->no_chain = false;
	if (n <= sb->hnext_cap)
		return;
	v = realloc(sb->hnext, n * sizeof(*v));
	if (!v) {
		sb->no_chain = true;
		return;
	}
	sb->hnext = v;
	sb->hnext_cap = n;
}

/* Charge each cgroup the collector knows to its owner, or list it as an "other" if it ran. */
static void distribute(struct snapbuild *sb, const struct snapbuild_input *in, struct snapshot *s)
{
	struct layout *l = &sb->lay;
	size_t cap = 0;
	bool others = true;

	layout_begin(l);
	size_chains(sb, in->nr_cgs);
	for (size_t k = 0; k < in->nr_cgs; k++) {
		const struct cg_delta *d = &in->cgs[k];
		size_t pod;
		long e;

		if (!d->path)
			continue;
		e = layout_owner(l, d->d.cgid, d->path, &pod);
		if (e >= 0 && pod < s->nr_pods) {
			struct cg_acc *a = layout_acc(l, e);

			cg_acc_add(a, d);
			if (!sb->no_chain) {
				sb->hnext[k] = a->hist_head;
				a->hist_head = (__u32)k + 1;
			}
			add_member(&s->pods[pod], d->d.cgid);
		} else {
			others = charge_other(sb, s, &cap, d, in->dt_ns, others);
		}
	}
	other_cums_end(&sb->others);
	others_own(s);
	/* on -ENOMEM the new ones are looked up by path again next tick */
	layout_end(l, in->cgs, in->nr_cgs);
}

/*
 * The export buckets @a's cgroups filled this tick (its chain), added to @b: each histogram
 * is an increase once, so it is folded where it is read. False when none had one.
 */
static bool fold_chain(const struct snapbuild *sb, const struct cg_delta *cgs,
		       const struct cg_acc *a, __u64 *b)
{
	bool any = false;

	for (__u32 k = a->hist_head; !sb->no_chain && k; k = sb->hnext[k - 1]) {
		const struct cg_totals *d = &cgs[k - 1].d;

		if (d->no_hist || !d->rq_hist || !d->rq_wait_cnt)
			continue;
		hist_fold(d->rq_hist, d->rq_span, b);
		any = true;
	}
	return any;
}

static void add_buckets(__u64 *dst, const __u64 *src)
{
	for (int b = 0; b < SNAP_RQ_BUCKETS; b++)
		dst[b] += src[b];
}

static void mark_moved(struct layout *l, size_t e)
{
	if (!l->moved[e]) {
		l->moved[e] = 1;
		l->nmoved++;
	}
}

/* Entity @e took @a this tick: its counters since start, and @b its buckets' increase. */
static void advance(struct layout *l, size_t e, const struct cg_acc *a, const __u64 *b, bool any)
{
	if (!a->any)
		return;
	cg_cum_add_acc(&l->cum[e], a);
	if (!any)
		return;
	add_buckets(l->cum[e].hist, b);
	mark_moved(l, e);
}

static void finish_container(struct snapbuild *sb, const struct snapbuild_input *in,
			     struct snapshot *s, size_t e, __u64 *pod_b, bool *pod_any,
			     struct snap_stats *st)
{
	struct layout *l = &sb->lay;
	const struct cg_acc *a = &l->acc[e];
	__u64 b[SNAP_RQ_BUCKETS] = { 0 };
	bool any = a->any && fold_chain(sb, in->cgs, a, b);

	advance(l, e, a, b, any);
	if (any) {
		add_buckets(pod_b, b);
		*pod_any = true;
	}
	entity_stats(sb, in, s, a, &l->cum[e], NULL, 0, st);
	rq_quantiles_carry(&l->cum[e].q, st);
}

static void finish_entities(struct snapbuild *sb, struct snapshot *s,
			    const struct snapbuild_input *in)
{
	struct layout *l = &sb->lay;

	for (size_t i = 0; i < s->nr_pods; i++) {
		struct snap_pod *p = &s->pods[i];
		const struct cg_acc *ctrs = &l->acc[l->npods + l->ctr_base[i]];
		__u64 b[SNAP_RQ_BUCKETS] = { 0 };
		bool any = false;

		for (size_t j = 0; j < p->nr_ctrs; j++)
			finish_container(sb, in, s, l->npods + l->ctr_base[i] + j, b, &any,
					 &p->ctrs[j].st);
		fold_containers(s, l, i);
		any |= l->acc[i].any && fold_chain(sb, in->cgs, &l->acc[i], b);
		advance(l, i, &l->acc[i], b, any);
		entity_stats(sb, in, s, &l->acc[i], &l->cum[i], ctrs, p->nr_ctrs, &p->st);
		rq_quantiles_carry(&l->cum[i].q, &p->st);
		s->classes[p->pod->qos].pods++;
		s->classes[p->pod->qos].cpu_cores += p->st.has_cpu ? p->st.cpu_cores : 0;
	}
}

/*
 * Shared buckets made again from every entity's counters: when there are none yet, or when
 * many moved (a histogram tick). Between, the few that moved (the watched LS cgroups, read
 * every tick) get their own in the snapshot. A failed allocation keeps the old.
 */
static void remake_totals(struct layout *l)
{
	size_t n = l->npods + l->nctrs;
	struct snap_hist_totals *t;

	if (l->totals && l->nmoved <= n / 8)
		return;
	t = snap_hist_totals__new(n);
	if (!t)
		return;
	for (size_t e = 0; e < n; e++)
		cg_cum_le(&l->cum[e], &t->v[e * SNAP_RQ_BUCKETS]);
	snap_hist_totals__put(l->totals);
	l->totals = t;
	memset(l->moved, 0, n);
	l->nmoved = 0;
}

/* Where entity @e's rq_hist_total is: the shared buckets, or the snapshot's own (NULL: none). */
static const __u64 *entity_buckets(const struct layout *l, struct snapshot *s, size_t e,
				   size_t *own)
{
	__u64 *v;

	if (l->totals && !l->moved[e])
		return &l->totals->v[e * SNAP_RQ_BUCKETS];
	if (!s->hist_own)
		return NULL;
	v = &s->hist_own[(*own)++ * SNAP_RQ_BUCKETS];
	cg_cum_le(&l->cum[e], v);
	return v;
}

static void share_buckets(struct layout *l, struct snapshot *s)
{
	size_t own = 0, nown;

	remake_totals(l);
	nown = l->totals ? l->nmoved : l->npods + l->nctrs;
	s->hist_totals = snap_hist_totals__ref(l->totals);
	if (nown)
		s->hist_own = malloc(nown * SNAP_RQ_BUCKETS * sizeof(*s->hist_own));
	for (size_t i = 0; i < s->nr_pods; i++) {
		struct snap_pod *p = &s->pods[i];

		p->st.rq_hist_total = entity_buckets(l, s, i, &own);
		for (size_t j = 0; j < p->nr_ctrs; j++)
			p->ctrs[j].st.rq_hist_total =
				entity_buckets(l, s, l->npods + l->ctr_base[i] + j, &own);
	}
}

/* Bump allocation from the snapshot's one block, sized by arena_size() beforehand. */
struct arena {
	char *p;
};

static void *take(struct arena *a, size_t size)
{
	void *p = a->p;

	a->p += (size + 7) & ~(size_t)7;
	return p;
}

static size_t round8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/*
 * Pods and their containers, as take() will hand them out. Their paths are the layout's
 * (s->paths): copied, each was a cold string read twice per entity per tick.
 */
static size_t arena_size(const struct layout *l, const struct pod_list *pods, int pmu_n)
{
	size_t pmu = pmu_n ? (l->npods + l->nctrs) * sizeof(struct snap_pmu_stats) : 0;

	return round8(pods->nr_pods * sizeof(struct snap_pod)) +
	       round8(l->nctrs * sizeof(struct snap_container)) + 8 * pods->nr_pods + round8(pmu);
}

/* Room for an entity's PMU figures when the host counts events. */
static struct snap_pmu_stats *take_pmu(const struct snapshot *s, struct arena *a)
{
	return s->pmu_n ? take(a, sizeof(struct snap_pmu_stats)) : NULL;
}

static void place_containers(const struct snapshot *s, const struct layout *l, size_t i,
			     const struct pod *pod, struct snap_pod *sp, struct arena *a)
{
	sp->ctrs = take(a, pod->nr_containers * sizeof(*sp->ctrs));
	for (size_t j = 0; j < pod->nr_containers; j++) {
		const struct pod_container *c = &pod->containers[j];
		const struct lay_ent *x = &l->ent[l->npods + l->ctr_base[i] + j];
		struct snap_container *sc = &sp->ctrs[sp->nr_ctrs++];

		sc->spec = c;
		sc->name = c->name ?: "";
		sc->id = c->id ?: "";
		sc->cgroup = x->cgroup;
		sc->cgid = x->cgid;
		sc->st.pmu = take_pmu(s, a);
	}
}

/*
 * One allocation for all pods and containers: at 1000 pods, four mallocs and frees per pod
 * per tick were a tenth of the agent's time.
 */
static int build_pods(struct snapbuild *sb, const struct snapbuild_input *in, struct snapshot *s)
{
	struct pod_list *l = current_pods(sb, in);
	int err = layout_update(&sb->lay, in, l);
	struct arena a;

	if (err || !l)
		return err;
	s->pods_list = pod_list__ref(l);
	s->paths = snap_strings__ref(sb->lay.paths);
	s->arena = calloc(1, arena_size(&sb->lay, l, s->pmu_n) + 8);
	if (!s->arena)
		return -ENOMEM;
	a.p = s->arena;
	s->pods = take(&a, l->nr_pods * sizeof(*s->pods));
	for (size_t i = 0; i < l->nr_pods; i++) {
		struct snap_pod *sp = &s->pods[s->nr_pods++];

		sp->pod = &l->pods[i];
		sp->cgroup = sb->lay.ent[i].cgroup;
		sp->cgid = sb->lay.ent[i].cgid;
		sp->st.pmu = take_pmu(s, &a);
		if (!l->pods[i].is_static)
			place_containers(s, &sb->lay, i, &l->pods[i], sp, &a);
	}
	return 0;
}

static void fill_meta(struct snapbuild *sb, struct snapbuild_input *in, struct snapshot *s)
{
	s->seq = ++sb->seq;
	s->mono_ns = in->mono_ns;
	s->wall_ns = in->wall_ns;
	s->interval_s = in->dt_ns / 1e9;
	snprintf(s->hierarchy, sizeof(s->hierarchy), "%s", sb->hierarchy);
	snprintf(s->mount, sizeof(s->mount), "%s", sb->mount);
	snprintf(s->pod_source, sizeof(s->pod_source), "%s", sb->pod_source);
	s->pods_stale = in->pods_stale;
	s->dropped_switches = in->dropped;
	s->counters = in->counters;
	s->events = in->events;
	s->pmu_n = in->pmu_n < KQOS_PMU_MAX ? in->pmu_n : KQOS_PMU_MAX;
	for (int i = 0; i < s->pmu_n; i++)
		s->pmu[i] = in->pmu[i];
	s->rdt_enabled = in->rdt_enabled;
	s->rdt = in->rdt;
	s->nr_rdt = in->nr_rdt;
	s->rdt_ids = in->rdt_ids;
	in->rdt = NULL;
	in->nr_rdt = 0;
}

struct snapshot *snapbuild__build(struct snapbuild *sb, struct snapbuild_input *in)
{
	struct snapshot *s = snapshot__new();

	if (!s) {
		free(in->rdt);
		in->rdt = NULL;
		return NULL;
	}
	fill_meta(sb, in, s);
	build_node(sb, in, s);
	if (build_pods(sb, in, s)) {
		snapshot__put(s);
		return NULL;
	}
	distribute(sb, in, s);
	finish_entities(sb, s, in);
	share_buckets(&sb->lay, s);
	throttle_all(&sb->lay, s);
	return s;
}
