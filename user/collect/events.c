// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "events.h"
#include "log.h"

/* A map's keys as user space last wrote them: sorted, unique. */
struct keyset {
	struct wait_watch *v; /* target_ns unused for roots and managed */
	size_t n, cap;
	size_t max;
	int fd;
	/*
	 * The last list given that is in the map: a tick whose list is the same costs a
	 * compare, not a sort and a merge (the managed ids of 1000 pods are 3000).
	 */
	void *last;
	size_t last_len;
	bool has_last;
};

/* The same list as the last one that went in whole: nothing to do. */
static bool same_as_last(const struct keyset *ks, const void *in, size_t len)
{
	return ks->has_last && len == ks->last_len && !memcmp(in, ks->last, len);
}

/*
 * Keep @in as the last list once it is in the map. A failed sync is not kept, so that the
 * next call tries again, as every call did before; neither is a list without memory for it.
 */
static int remember(struct keyset *ks, const void *in, size_t len, int err)
{
	void *p;

	ks->has_last = false;
	if (err)
		return err;
	p = len > ks->last_len || !ks->last ? realloc(ks->last, len ? len : 1) : ks->last;
	if (!p)
		return 0;
	ks->last = p;
	memcpy(p, in, len);
	ks->last_len = len;
	ks->has_last = true;
	return 0;
}

struct kevents {
	struct ring_buffer *rb;
	struct kqos_event *q;
	size_t nq;
	__u64 lost;
	volatile __u64 *watch_min_ns;
	volatile __u32 *fork_events;
	int ncpus;
	struct kqos_watch *pcpu; /* one watch value per possible CPU, for updates */
	struct keyset watch, roots, managed;
};

static int on_record(void *ctx, void *data, size_t size)
{
	struct kevents *e = ctx;

	if (size < sizeof(struct kqos_event))
		return 0;
	if (e->nq == KEVENTS_QUEUE) {
		e->lost++;
		return 0;
	}
	memcpy(&e->q[e->nq++], data, sizeof(struct kqos_event));
	return 0;
}

int kevents__new(const struct kevents_maps *m, struct kevents **ret)
{
	struct kevents *e = calloc(1, sizeof(*e));
	int err;

	if (!e)
		return -ENOMEM;
	e->watch_min_ns = m->watch_min_ns;
	e->fork_events = m->fork_events;
	e->ncpus = m->ncpus;
	e->watch = (struct keyset){ .fd = m->watch_fd, .max = KQOS_MAX_WATCHES };
	e->roots = (struct keyset){ .fd = m->roots_fd, .max = KQOS_MAX_ROOTS };
	e->managed = (struct keyset){ .fd = m->managed_fd, .max = KQOS_MAX_MANAGED };
	e->q = calloc(KEVENTS_QUEUE, sizeof(*e->q));
	e->pcpu = calloc(m->ncpus > 0 ? m->ncpus : 1, sizeof(*e->pcpu));
	if (!e->q || !e->pcpu) {
		err = -ENOMEM;
		goto err;
	}
	e->rb = ring_buffer__new(m->ringbuf_fd, on_record, e, NULL);
	if (!e->rb) {
		err = -errno;
		log_err("failed to create the events ring buffer", "err=%d", err);
		goto err;
	}
	*ret = e;
	return 0;
err:
	kevents__free(e);
	return err;
}

void kevents__free(struct kevents *e)
{
	if (!e)
		return;
	ring_buffer__free(e->rb);
	free(e->watch.v);
	free(e->roots.v);
	free(e->managed.v);
	free(e->watch.last);
	free(e->roots.last);
	free(e->managed.last);
	free(e->pcpu);
	free(e->q);
	free(e);
}

int kevents__epoll_fd(const struct kevents *e)
{
	return ring_buffer__epoll_fd(e->rb);
}

int kevents__consume(struct kevents *e)
{
	return ring_buffer__consume(e->rb);
}

size_t kevents__queued(const struct kevents *e, const struct kqos_event **ret)
{
	*ret = e->q;
	return e->nq;
}

void kevents__clear(struct kevents *e)
{
	e->nq = 0;
}

__u64 kevents__lost(const struct kevents *e)
{
	return e->lost;
}

size_t kevents__nr_watches(const struct kevents *e)
{
	return e->watch.n;
}

size_t kevents__watch_ids(const struct kevents *e, const struct wait_watch **ret)
{
	*ret = e->watch.v;
	return e->watch.n;
}

/* --- map sync ---------------------------------------------------------------------------- */

static int cmp_watch(const void *a, const void *b)
{
	const struct wait_watch *x = a, *y = b;

	if (x->cgid != y->cgid)
		return x->cgid < y->cgid ? -1 : 1;
	return x->target_ns < y->target_ns ? -1 : x->target_ns > y->target_ns;
}

/* Sorted and unique by cgid, the smallest target first; at most @max kept. */
static size_t normalise(struct wait_watch *v, size_t n, size_t max)
{
	size_t k = 0;

	if (n)
		qsort(v, n, sizeof(*v), cmp_watch);
	for (size_t i = 0; i < n; i++)
		if (!k || v[k - 1].cgid != v[i].cgid)
			v[k++] = v[i];
	return k < max ? k : max;
}

static int put_watch(struct kevents *e, const struct wait_watch *w)
{
	for (int cpu = 0; cpu < e->ncpus; cpu++)
		e->pcpu[cpu] = (struct kqos_watch){ .target_ns = w->target_ns };
	return bpf_map_update_elem(e->watch.fd, &w->cgid, e->pcpu, BPF_ANY) ? -errno : 0;
}

static int put_key(struct kevents *e, struct keyset *ks, const struct wait_watch *w)
{
	__u8 one = 1;

	if (ks == &e->watch)
		return put_watch(e, w);
	return bpf_map_update_elem(ks->fd, &w->cgid, &one, BPF_ANY) ? -errno : 0;
}

/* Delete what left, write what is new or changed: a merge of two sorted lists. */
static int apply_diff(struct kevents *e, struct keyset *ks, const struct wait_watch *nv, size_t nn)
{
	size_t i = 0, j = 0;
	int err = 0, r;

	while (i < ks->n || j < nn) {
		if (j == nn || (i < ks->n && ks->v[i].cgid < nv[j].cgid)) {
			bpf_map_delete_elem(ks->fd, &ks->v[i].cgid); /* gone is gone */
			i++;
			continue;
		}
		r = 0;
		if (i == ks->n || nv[j].cgid < ks->v[i].cgid)
			r = put_key(e, ks, &nv[j]);
		else if (nv[j].target_ns != ks->v[i++].target_ns)
			r = put_key(e, ks, &nv[j]);
		if (r && !err)
			err = r;
		j++;
	}
	return err;
}

static int sync_set(struct kevents *e, struct keyset *ks, struct wait_watch *nv, size_t n)
{
	size_t nn = normalise(nv, n, ks->max);
	int err = apply_diff(e, ks, nv, nn);

	free(ks->v);
	ks->v = nv;
	ks->n = nn;
	ks->cap = n;
	if (!err && nn < n && n > ks->max)
		err = -ENOSPC;
	return err;
}

int kevents__set_watches(struct kevents *e, const struct wait_watch *w, size_t n)
{
	struct wait_watch *nv;
	__u64 min = ~0ULL;
	int err;

	if (same_as_last(&e->watch, w, n * sizeof(*w)))
		return 0;
	nv = malloc((n ? n : 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	memcpy(nv, w, n * sizeof(*nv));
	/* Lower the global first, raise it last: no breach is skipped while the map changes. */
	for (size_t i = 0; i < n; i++)
		if (nv[i].target_ns < min)
			min = nv[i].target_ns;
	if (min < *e->watch_min_ns)
		*e->watch_min_ns = min;
	err = sync_set(e, &e->watch, nv, n);
	*e->watch_min_ns = e->watch.n ? min : ~0ULL;
	return remember(&e->watch, w, n * sizeof(*w), err);
}

static int set_ids(struct kevents *e, struct keyset *ks, const uint64_t *ids, size_t n)
{
	struct wait_watch *nv;

	if (same_as_last(ks, ids, n * sizeof(*ids)))
		return 0;
	nv = malloc((n ? n : 1) * sizeof(*nv));
	if (!nv)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		nv[i] = (struct wait_watch){ .cgid = ids[i] };
	return remember(ks, ids, n * sizeof(*ids), sync_set(e, ks, nv, n));
}

int kevents__set_roots(struct kevents *e, const uint64_t *ids, size_t n)
{
	return set_ids(e, &e->roots, ids, n);
}

void kevents__set_fork_events(struct kevents *e, bool on)
{
	if (e->fork_events)
		*e->fork_events = on;
}

int kevents__set_managed(struct kevents *e, const uint64_t *ids, size_t n)
{
	return set_ids(e, &e->managed, ids, n);
}
