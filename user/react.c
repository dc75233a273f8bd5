// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "events.h"
#include "log.h"
#include "react.h"

#define SOON_NS	    2000000ULL /* coalesce a burst of mkdirs into one tick */
#define MAX_WATCHES KQOS_MAX_WATCHES
#define MAX_MANAGED KQOS_MAX_MANAGED

/* Histogram bounds of snap_guard.react_hist, in ns. */
static const uint64_t react_le_ns[SNAP_REACT_BUCKETS] = {
	50000,	 100000,   200000,   500000,   1000000,	  2000000,
	5000000, 10000000, 20000000, 50000000, 100000000, 1000000000,
};

struct reactor {
	struct collector *col;
	struct kevents *ev;
	struct enforcer *enf; /* NULL: monitoring only */
	int soon_fd, deadline_fd;
	bool soon_armed;
	struct wait_watch *watches;
	uint64_t *ids;
	struct wait_event *waits;
	struct snap_guard stats; /* react_* only */
	uint64_t attaches;
};

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int reactor__new(struct collector *col, struct enforcer *enf, struct reactor **ret)
{
	struct reactor *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->col = col;
	r->ev = collector__kevents(col);
	r->enf = enf;
	r->soon_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	r->deadline_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	r->watches = calloc(MAX_WATCHES, sizeof(*r->watches));
	r->ids = calloc(MAX_MANAGED, sizeof(*r->ids));
	r->waits = calloc(KEVENTS_QUEUE, sizeof(*r->waits));
	if (r->soon_fd < 0 || r->deadline_fd < 0) {
		err = -errno;
		goto err;
	}
	if (!r->watches || !r->ids || !r->waits) {
		err = -ENOMEM;
		goto err;
	}
	*ret = r;
	return 0;
err:
	reactor__free(r);
	return err;
}

void reactor__free(struct reactor *r)
{
	if (!r)
		return;
	if (r->soon_fd >= 0)
		close(r->soon_fd);
	if (r->deadline_fd >= 0)
		close(r->deadline_fd);
	free(r->watches);
	free(r->ids);
	free(r->waits);
	free(r);
}

int reactor__soon_fd(const struct reactor *r)
{
	return r->soon_fd;
}

int reactor__deadline_fd(const struct reactor *r)
{
	return r->deadline_fd;
}

bool reactor__ack(int fd)
{
	uint64_t n;

	return read(fd, &n, sizeof(n)) == sizeof(n);
}

static void arm_at(int fd, uint64_t ns, int flags)
{
	struct itimerspec its = { 0 };

	its.it_value.tv_sec = ns / 1000000000ULL;
	its.it_value.tv_nsec = ns % 1000000000ULL;
	timerfd_settime(fd, flags, &its, NULL);
}

void reactor__arm(struct reactor *r)
{
	uint64_t at = r->enf ? enforcer__next_react_ns(r->enf) : 0;

	/* 0 disarms; a deadline in the past fires at once */
	if (at && at <= now_ns(CLOCK_MONOTONIC))
		at = now_ns(CLOCK_MONOTONIC) + 1;
	arm_at(r->deadline_fd, at, TFD_TIMER_ABSTIME);
}

/* --- what the kernel watches ------------------------------------------------------------ */

static size_t pod_ids(const struct snapshot *s, uint64_t *ids, size_t cap)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nr_pods && n < cap; i++) {
		const struct snap_pod *p = &s->pods[i];

		if (p->cgid)
			ids[n++] = p->cgid;
		for (size_t c = 0; c < p->nr_ctrs && n < cap; c++)
			if (p->ctrs[c].cgid)
				ids[n++] = p->ctrs[c].cgid;
		for (size_t c = 0; c < p->nr_cgids && n < cap; c++)
			ids[n++] = p->cgids[c];
	}
	return n;
}

void reactor__sync(struct reactor *r, const struct snapshot *s, const uint64_t *roots,
		   size_t nr_roots)
{
	size_t n = r->enf ? enforcer__watches(r->enf, s, r->watches, MAX_WATCHES) : 0;
	int err;

	err = kevents__set_watches(r->ev, r->watches, n);
	if (err)
		log_warn("kernel watches incomplete", "watches=%zu err=%d", n, err);
	kevents__set_fork_events(r->ev, r->enf && enforcer__places(r->enf));
	err = kevents__set_managed(r->ev, r->ids, pod_ids(s, r->ids, MAX_MANAGED));
	if (err)
		log_warn("managed cgroups incomplete for attach events", "err=%d", err);
	err = kevents__set_roots(r->ev, roots, nr_roots);
	if (err)
		log_warn("cgroup roots incomplete for mkdir events", "roots=%zu err=%d", nr_roots,
			 err);
}

/* --- events -------------------------------------------------------------------------------- */

static void note_reaction(struct reactor *r, uint64_t ns, uint64_t user_ns)
{
	struct snap_guard *g = &r->stats;

	g->react_count++;
	g->react_sum_s += ns / 1e9;
	g->react_user_sum_s += user_ns / 1e9;
	if (user_ns / 1e9 > g->react_user_max_s)
		g->react_user_max_s = user_ns / 1e9;
	for (int i = 0; i < SNAP_REACT_BUCKETS; i++)
		if (ns <= react_le_ns[i])
			g->react_hist[i]++;
}

static void react(struct reactor *r, const struct snapshot *s, size_t n, uint64_t first_ts,
		  uint64_t woke_ns, struct snap_enforce *en)
{
	struct enforcer_now now = { .mono_ns = now_ns(CLOCK_MONOTONIC),
				    .wall_ns = now_ns(CLOCK_REALTIME),
				    .waits = r->waits,
				    .nr_waits = n };
	uint64_t before = enforcer__nr_writes(r->enf), done;

	if (enforcer__react(r->enf, s, &now, en))
		log_warn("reaction failed, the next tick retries", NULL);
	done = now_ns(CLOCK_MONOTONIC);
	if (n && enforcer__nr_writes(r->enf) != before && done > first_ts) {
		note_reaction(r, done - first_ts, done - woke_ns);
		log_dbg("reacted", "waits=%zu event_to_write_us=%llu user_us=%llu", n,
			(unsigned long long)(done - first_ts) / 1000,
			(unsigned long long)(done - woke_ns) / 1000);
	}
	reactor__fill(r, en);
	reactor__arm(r);
}

static void soon(struct reactor *r)
{
	reactor__soon_in(r, SOON_NS);
}

void reactor__soon_in(struct reactor *r, uint64_t ns)
{
	if (r->soon_armed)
		return;
	arm_at(r->soon_fd, ns ? ns : 1, 0);
	r->soon_armed = true;
}

/* A task joined a managed cgroup: into its resctrl group now, not at the next reconcile. */
static void place(struct reactor *r, const struct kqos_event *e)
{
	r->attaches++;
	if (r->enf)
		enforcer__place(r->enf, e->cgid, (int)e->value, e->ts_ns);
}

/* LS waits into r->waits; the earliest timestamp in *first. Returns how many. */
static size_t sort_events(struct reactor *r, const struct kqos_event *q, size_t nq, uint64_t *first,
			  bool *changed)
{
	size_t n = 0;

	for (size_t i = 0; i < nq; i++) {
		const struct kqos_event *e = &q[i];

		if (e->type == KQOS_EV_CG_MKDIR || e->type == KQOS_EV_CG_RMDIR)
			*changed = true;
		else if (e->type == KQOS_EV_CG_ATTACH)
			place(r, e);
		if (e->type != KQOS_EV_LS_WAIT)
			continue;
		r->waits[n++] = (struct wait_event){ .cgid = e->cgid,
						     .wait_ns = e->value,
						     .ts_ns = e->ts_ns,
						     .prev_cgid = e->aux,
						     .cpu = e->cpu };
		if (!*first || e->ts_ns < *first)
			*first = e->ts_ns;
	}
	return n;
}

bool reactor__on_events(struct reactor *r, const struct snapshot *s, struct snap_enforce *en)
{
	uint64_t first = 0, woke = now_ns(CLOCK_MONOTONIC);
	const struct kqos_event *q;
	bool changed = false;
	size_t nq, n;

	kevents__consume(r->ev);
	nq = kevents__queued(r->ev, &q);
	n = sort_events(r, q, nq, &first, &changed);
	kevents__clear(r->ev);
	if (n && r->enf && s)
		react(r, s, n, first, woke, en);
	if (changed)
		soon(r);
	return changed;
}

void reactor__on_deadline(struct reactor *r, const struct snapshot *s, struct snap_enforce *en)
{
	if (r->enf && s)
		react(r, s, 0, 0, 0, en);
}

bool reactor__take_soon(struct reactor *r)
{
	if (!reactor__ack(r->soon_fd))
		return false;
	r->soon_armed = false;
	return true;
}

void reactor__fill(const struct reactor *r, struct snap_enforce *en)
{
	en->guard.react_count = r->stats.react_count;
	en->guard.react_sum_s = r->stats.react_sum_s;
	en->guard.react_user_sum_s = r->stats.react_user_sum_s;
	en->guard.react_user_max_s = r->stats.react_user_max_s;
	memcpy(en->guard.react_hist, r->stats.react_hist, sizeof(en->guard.react_hist));
}
