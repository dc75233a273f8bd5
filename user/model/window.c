// SPDX-License-Identifier: GPL-2.0
/* Metric windows: bounded per-pod and node histories and the queries over them. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "window.h"

struct win_series {
	char uid[POD_UID_MAX]; /* "" for the node */
	bool seen; /* fed by the current snapshot */
	unsigned int head; /* next slot to write */
	unsigned int n; /* samples held */
	struct win_sample *ring;
};

struct window {
	unsigned int cap;
	uint64_t interval_ns; /* of the last snapshot fed: the coverage rule's unit */
	struct win_series node;
	struct win_series *pods; /* sorted by uid, for bsearch */
	size_t nr_pods, cap_pods;
	/*
	 * The series of the last snapshot's pod i, by index: a steady pod list finds each with
	 * one compare instead of a search (the lookups were 5 % of kqosd at 1000 pods). Valid
	 * while no series came or went.
	 */
	size_t *hint, nhint, cap_hint;
	/*
	 * The pod list the hints were made on (a reference): fed again with it, pod i is the same
	 * pod, and its uid (a cold string per pod) need not be compared.
	 */
	struct pod_list *hint_list;
};

static const char *const metric_names[WIN_METRIC_NR] = {
	"cpu_cores", "memory_used_bytes", "throttled_ratio", "rq_p50_ns",      "rq_p99_ns",
	"llc_bytes", "mbm_total_bps",	  "be_cpu_used",     "be_cpu_request", "be_cpu_limit",
};

const char *win_metric_name(enum win_metric m)
{
	return (unsigned int)m < WIN_METRIC_NR ? metric_names[m] : "?";
}

unsigned int window_capacity(uint64_t longest_ns, uint64_t interval_ns)
{
	uint64_t n;

	if (!interval_ns)
		return 2;
	n = (longest_ns + interval_ns - 1) / interval_ns + 1;
	if (n < 2)
		n = 2;
	return n > WINDOW_MAX_SAMPLES ? WINDOW_MAX_SAMPLES : (unsigned int)n;
}

size_t window__entity_bytes(unsigned int cap)
{
	return sizeof(struct win_series) + (size_t)cap * sizeof(struct win_sample);
}

int window__new(unsigned int cap, struct window **ret)
{
	struct window *w;

	if (!cap || cap > WINDOW_MAX_SAMPLES)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cap = cap;
	w->node.ring = calloc(cap, sizeof(struct win_sample));
	if (!w->node.ring) {
		free(w);
		return -ENOMEM;
	}
	*ret = w;
	return 0;
}

void window__free(struct window *w)
{
	if (!w)
		return;
	free(w->node.ring);
	for (size_t i = 0; i < w->nr_pods; i++)
		free(w->pods[i].ring);
	free(w->pods);
	free(w->hint);
	pod_list__put(w->hint_list);
	free(w);
}

/* The i-th newest sample (0 = newest). */
static const struct win_sample *nth_newest(const struct win_series *s, unsigned int cap,
					   unsigned int i)
{
	return &s->ring[(s->head + cap - 1 - i) % cap];
}

/* The newest min(n, new_cap) samples of @s into @ring (new_cap slots), oldest first. */
static void reshape(struct win_series *s, unsigned int old_cap, struct win_sample *ring,
		    unsigned int new_cap)
{
	unsigned int keep = s->n < new_cap ? s->n : new_cap;

	for (unsigned int i = 0; i < keep; i++)
		ring[keep - 1 - i] = *nth_newest(s, old_cap, i);
	free(s->ring);
	s->ring = ring;
	s->n = keep;
	s->head = keep % new_cap;
}

int window__set_capacity(struct window *w, unsigned int cap)
{
	struct win_sample **rings;
	size_t n = w->nr_pods + 1, i;
	int err = 0;

	if (!cap || cap > WINDOW_MAX_SAMPLES)
		return -EINVAL;
	if (cap == w->cap)
		return 0;
	/* every ring first, so that a failure leaves the window as it was */
	rings = calloc(n, sizeof(*rings));
	for (i = 0; rings && i < n; i++) {
		rings[i] = calloc(cap, sizeof(struct win_sample));
		if (!rings[i])
			break;
	}
	if (!rings || i < n) {
		err = -ENOMEM;
		goto out;
	}
	reshape(&w->node, w->cap, rings[0], cap);
	for (i = 1; i < n; i++)
		reshape(&w->pods[i - 1], w->cap, rings[i], cap);
	w->cap = cap;
	n = 0; /* the rings are the series' now */
out:
	for (i = 0; rings && i < n; i++)
		free(rings[i]);
	free(rings);
	return err;
}

unsigned int window__capacity(const struct window *w)
{
	return w->cap;
}

size_t window__nr_entities(const struct window *w)
{
	return w->nr_pods;
}

static int cmp_series(const void *a, const void *b)
{
	return strcmp(((const struct win_series *)a)->uid, ((const struct win_series *)b)->uid);
}

/* @uid among the first @n (sorted) series. */
static struct win_series *find_sorted(const struct window *w, size_t n, const char *uid)
{
	struct win_series key;

	if (!n || strlen(uid) >= sizeof(key.uid))
		return NULL;
	strcpy(key.uid, uid);
	return bsearch(&key, w->pods, n, sizeof(*w->pods), cmp_series);
}

static void push(struct win_series *s, unsigned int cap, const struct win_sample *smp)
{
	s->ring[s->head] = *smp;
	s->head = (s->head + 1) % cap;
	if (s->n < cap)
		s->n++;
	s->seen = true;
}

static void put(struct win_sample *smp, enum win_metric m, double v)
{
	smp->v[m] = v;
	smp->has |= 1u << m;
}

/* The resctrl pod group of @uid, if kqos monitors one. */
static void add_rdt(const struct snapshot *snap, const char *uid, struct win_sample *smp)
{
	for (size_t i = 0; i < snap->nr_rdt; i++) {
		const struct snap_rdt_group *g = &snap->rdt[i];
		double llc = 0, mbm = 0;
		bool has_llc = false, has_mbm = false;

		if (strcmp(g->pod_uid, uid))
			continue;
		for (unsigned int d = 0; d < g->nr_domains && d < SNAP_RDT_DOMAINS; d++) {
			if (g->has_llc[d]) {
				llc += (double)g->llc_bytes[d];
				has_llc = true;
			}
			if (g->has_mbm_total_bps[d]) {
				mbm += g->mbm_total_bps[d];
				has_mbm = true;
			}
		}
		if (has_llc)
			put(smp, WIN_LLC, llc);
		if (has_mbm)
			put(smp, WIN_MBM, mbm);
		return;
	}
}

static void pod_sample(const struct snapshot *snap, const struct snap_pod *sp,
		       struct win_sample *smp)
{
	const struct snap_stats *st = &sp->st;

	*smp = (struct win_sample){ .t_ns = snap->mono_ns };
	if (st->has_cpu) {
		put(smp, WIN_CPU_CORES, st->cpu_cores);
		if (st->rq_waits) {
			put(smp, WIN_RQ_P50, (double)st->rq_p50_ns);
			put(smp, WIN_RQ_P99, (double)st->rq_p99_ns);
		}
	}
	if (st->has_throttle)
		put(smp, WIN_THROTTLED, st->throttled_ratio);
	if (st->has_memory)
		put(smp, WIN_MEM_USED, (double)st->mem_used_bytes);
	add_rdt(snap, sp->pod->uid, smp);
}

static int64_t be_request_milli(const struct pod *p)
{
	int64_t sum = 0;

	for (size_t i = 0; i < p->nr_containers; i++)
		if (p->containers[i].requests.batch_cpu_milli > 0)
			sum += p->containers[i].requests.batch_cpu_milli;
	return sum;
}

/* koordinator's BE real limit: min(BE cpuset x 1000, BE quota); the node when unsuppressed. */
static double be_limit_milli(const struct snapshot *snap, const struct window_be *be)
{
	double limit = 1000.0 * snap->node.nr_cpus;

	if (be && be->has_be_cpus && 1000.0 * be->be_cpus < limit)
		limit = 1000.0 * be->be_cpus;
	if (be && be->has_be_quota && be->be_quota_us >= 0 && be->be_quota_us / 100.0 < limit)
		limit = be->be_quota_us / 100.0; /* us per 100 ms -> milli-CPUs */
	return limit;
}

static void node_sample(const struct snapshot *snap, const struct window_be *be,
			struct win_sample *smp)
{
	double used = 0, req = 0;

	*smp = (struct win_sample){ .t_ns = snap->mono_ns };
	if (snap->node.has_cpu_usage)
		put(smp, WIN_CPU_CORES, snap->node.cpu_cores_used);
	if (snap->node.has_memory)
		put(smp, WIN_MEM_USED, (double)snap->node.mem_used_bytes);
	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];

		if (sp->pod->qos_raw != POD_QOS_BE || !sp->pod->is_active)
			continue;
		if (sp->st.has_cpu)
			used += 1000.0 * sp->st.cpu_cores;
		req += (double)be_request_milli(sp->pod);
	}
	put(smp, WIN_BE_CPU_USED, used);
	put(smp, WIN_BE_CPU_REQUEST, req);
	if (snap->node.nr_cpus)
		put(smp, WIN_BE_CPU_LIMIT, be_limit_milli(snap, be));
}

static struct win_series *add_pod(struct window *w, const char *uid)
{
	struct win_series *s;

	if (strlen(uid) >= sizeof(s->uid))
		return NULL;
	if (w->nr_pods == w->cap_pods) {
		size_t n = w->cap_pods ? 2 * w->cap_pods : 16;

		s = realloc(w->pods, n * sizeof(*s));
		if (!s)
			return NULL;
		w->pods = s;
		w->cap_pods = n;
	}
	s = &w->pods[w->nr_pods];
	*s = (struct win_series){ 0 };
	s->ring = calloc(w->cap, sizeof(*s->ring));
	if (!s->ring)
		return NULL;
	strcpy(s->uid, uid);
	w->nr_pods++;
	return s;
}

/* Pods the snapshot no longer has lose their history; the rest stay sorted. Any dropped? */
static bool drop_unseen(struct window *w)
{
	size_t j = 0, n = w->nr_pods;

	for (size_t i = 0; i < w->nr_pods; i++) {
		if (!w->pods[i].seen) {
			free(w->pods[i].ring);
			continue;
		}
		w->pods[i].seen = false;
		w->pods[j++] = w->pods[i];
	}
	w->nr_pods = j;
	return j != n;
}

static struct win_series *hinted(const struct window *w, size_t i, const char *uid, bool same)
{
	if (i >= w->nhint || w->hint[i] >= w->nr_pods ||
	    (!same && strcmp(w->pods[w->hint[i]].uid, uid)))
		return NULL;
	return &w->pods[w->hint[i]];
}

/*
 * The series of pod @uid: by the hint (trusted when @same, the hints' pod list), in the sorted
 * prefix, among this round's additions.
 */
static struct win_series *series_of(struct window *w, size_t i, size_t sorted, const char *uid,
				    bool same)
{
	struct win_series *s = hinted(w, i, uid, same);

	if (!s)
		s = find_sorted(w, sorted, uid);
	/* pods added this round are past the sorted prefix: look there too */
	for (size_t k = sorted; !s && k < w->nr_pods; k++)
		if (!strcmp(w->pods[k].uid, uid))
			s = &w->pods[k];
	return s ? s : add_pod(w, uid);
}

/* Room for one hint per pod of the snapshot; false without (a search each, this tick). */
static bool size_hints(struct window *w, size_t n)
{
	size_t *v;

	if (n <= w->cap_hint)
		return true;
	v = realloc(w->hint, n * sizeof(*v));
	if (!v) {
		w->nhint = 0;
		return false;
	}
	w->hint = v;
	w->cap_hint = n;
	return true;
}

int window__feed(struct window *w, const struct snapshot *snap, const struct window_be *be)
{
	struct win_sample smp;
	size_t sorted = w->nr_pods;
	bool same = snap->pods_list && snap->pods_list == w->hint_list;
	bool hints, added;
	int err = 0;

	if (snap->interval_s > 0)
		w->interval_ns = (uint64_t)(snap->interval_s * 1e9);
	node_sample(snap, be, &smp);
	push(&w->node, w->cap, &smp);
	hints = size_hints(w, snap->nr_pods);
	for (size_t i = 0; i < snap->nr_pods; i++) {
		const struct snap_pod *sp = &snap->pods[i];
		struct win_series *s = series_of(w, i, sorted, sp->pod->uid, same);

		if (!s) {
			err = -ENOMEM;
			continue;
		}
		if (hints)
			w->hint[i] = (size_t)(s - w->pods);
		if (s->seen)
			continue; /* a UID twice in one snapshot: the first wins */
		pod_sample(snap, sp, &smp);
		push(s, w->cap, &smp);
	}
	w->nhint = hints ? snap->nr_pods : 0;
	added = w->nr_pods > sorted;
	/* series moved: the hints point at old places (each is checked, but would all miss) */
	if (drop_unseen(w) || added)
		w->nhint = 0;
	/* additions were appended; a drop keeps the order */
	if (added && w->nr_pods > 1)
		qsort(w->pods, w->nr_pods, sizeof(*w->pods), cmp_series);
	if (w->hint_list != snap->pods_list) {
		pod_list__put(w->hint_list);
		w->hint_list = w->nhint ? pod_list__ref(snap->pods_list) : NULL;
	}
	return err;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Nearest rank: the smallest value with at least 95 % of the samples at or below it. */
static double p95(double *v, unsigned int n)
{
	unsigned int rank = (95 * n + 99) / 100;

	qsort(v, n, sizeof(*v), cmp_double);
	return v[rank ? rank - 1 : 0];
}

static double aggregate(enum win_agg agg, double *v, unsigned int n)
{
	double r = v[0];

	switch (agg) {
	case WIN_LAST:
		return v[0]; /* collected newest first */
	case WIN_AVG:
		for (unsigned int i = 1; i < n; i++)
			r += v[i];
		return r / n;
	case WIN_MAX:
		for (unsigned int i = 1; i < n; i++)
			r = v[i] > r ? v[i] : r;
		return r;
	case WIN_P95:
		return p95(v, n);
	}
	return r;
}

int window__query(const struct window *w, const char *uid, enum win_metric m, enum win_agg agg,
		  uint64_t window_ns, uint64_t now_ns, double *ret)
{
	const struct win_series *s = uid ? find_sorted(w, w->nr_pods, uid) : &w->node;
	double v[WINDOW_MAX_SAMPLES];
	unsigned int n = 0;

	if ((unsigned int)m >= WIN_METRIC_NR)
		return -EINVAL;
	if (!s)
		return -ENOENT;
	for (unsigned int i = 0; i < s->n; i++) {
		const struct win_sample *smp = nth_newest(s, w->cap, i);

		if (smp->t_ns > now_ns)
			continue;
		if (now_ns - smp->t_ns >= window_ns)
			break; /* older ones are older still */
		if (smp->has & (1u << m))
			v[n++] = smp->v[m];
	}
	/* koordinator: a window counts only when samples x collect interval >= window / 3 */
	if (!n || (double)n * (double)w->interval_ns < (double)window_ns / 3.0)
		return -ENODATA;
	*ret = aggregate(agg, v, n);
	return 0;
}
