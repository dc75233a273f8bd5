// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rdtmon.h"

#define MAX_GROUPS 256

struct rdt_state {
	struct snap_rdt_group g;
	struct resctrl_rate total[SNAP_RDT_DOMAINS], local[SNAP_RDT_DOMAINS];
};

struct rdtmon {
	struct resctrl *r;
	bool owns_r;
	char *root; /* where r was opened, to open it again after it vanished; NULL: borrowed */
	bool gone; /* the root failed: no figures until it answers again */
	__u64 interval_ns, last_ns;
	bool polled;
	struct rdt_state *v;
	size_t n, n_next;
	struct snap_rdt_ids ids;
};

int rdtmon__new(const char *root, __u64 interval_ns, struct resctrl *r, struct rdtmon **ret)
{
	struct rdtmon *m = calloc(1, sizeof(*m));
	int err = 0;

	if (!m)
		return -ENOMEM;
	m->r = r;
	if (!r) {
		err = resctrl_open(root, &m->r);
		m->owns_r = !err;
		m->root = err ? NULL : strdup(root);
	}
	m->v = calloc(MAX_GROUPS, sizeof(*m->v));
	if (err || !m->v) {
		err = err ? err : -ENOMEM;
		rdtmon__free(m);
		return err;
	}
	m->interval_ns = interval_ns;
	*ret = m;
	return 0;
}

void rdtmon__free(struct rdtmon *m)
{
	if (!m)
		return;
	if (m->owns_r)
		resctrl_close(m->r);
	free(m->root);
	free(m->v);
	free(m);
}

struct resctrl *rdtmon__resctrl(struct rdtmon *m)
{
	return m ? m->r : NULL;
}

/* The state of group @name from the previous poll (rates need their baseline), or a fresh one. */
/* The state of directory @dir from the previous poll (rates need their baseline), or fresh. */
static struct rdt_state *keep_state(struct rdt_state *old, size_t nold, const char *dir,
				    struct rdt_state *dst)
{
	for (size_t i = 0; i < nold; i++) {
		if (!strcmp(old[i].g.name, dir)) {
			*dst = old[i];
			return dst;
		}
	}
	memset(dst, 0, sizeof(*dst));
	if (snprintf(dst->g.name, sizeof(dst->g.name), "%s", dir) >= (int)sizeof(dst->g.name))
		log_dbg("resctrl group name truncated", "name=%s", dir);
	return dst;
}

static void name_group(struct snap_rdt_group *g, const char *name)
{
	static const char *const classes[] = { "LSR", "LS", "BE" };

	for (int i = 0; i < 3; i++)
		if (!strcmp(name, classes[i]))
			snprintf(g->class_name, sizeof(g->class_name), "%s", classes[i]);
	if (!strncmp(name, "pod-", 4))
		snprintf(g->pod_uid, sizeof(g->pod_uid), "%s", name + 4);
}

static void read_schemata(struct rdtmon *m, const char *name, struct snap_rdt_group *g)
{
	struct resctrl_schemata sch;
	char buf[1024];
	int n;

	g->schemata[0] = '\0';
	if (resctrl_schemata_read(m->r, name, &sch))
		return;
	n = resctrl_schemata_format(&sch, NULL, buf, sizeof(buf));
	if (n <= 0)
		return;
	/* One line for JSON and labels: "L3:0=f;1=f;MB:0=100;1=100". */
	for (char *p = buf; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ';' : '\0';
	if (snprintf(g->schemata, sizeof(g->schemata), "%s", buf) >= (int)sizeof(g->schemata))
		log_dbg("resctrl schemata truncated for the snapshot", "group=%s", name);
}

static void read_counter(struct rdtmon *m, const char *name, const char *mon, enum resctrl_event ev,
			 struct rdt_state *st, __u64 now)
{
	struct resctrl_mon_value v;
	struct snap_rdt_group *g = &st->g;
	int err = resctrl_mon_read(m->r, name, mon, ev, &v);

	if (err && err != -ENODATA)
		return;
	g->nr_domains = v.nr < SNAP_RDT_DOMAINS ? v.nr : SNAP_RDT_DOMAINS;
	for (unsigned int d = 0; d < g->nr_domains; d++) {
		const struct resctrl_mon_dom *dom = &v.dom[d];
		bool ok = dom->state == RESCTRL_MON_OK;
		double bps;

		g->cache_id[d] = dom->id;
		if (ev == RESCTRL_EV_LLC_OCCUPANCY) {
			g->has_llc[d] = ok;
			g->llc_bytes[d] = ok ? dom->bytes : 0;
		} else if (ev == RESCTRL_EV_MBM_TOTAL) {
			g->has_mbm_total[d] = ok;
			g->mbm_total_bytes[d] = ok ? dom->bytes : 0;
			g->mbm_total_bps[d] = 0;
			g->has_mbm_total_bps[d] = !resctrl_rate_update(&st->total[d], dom->state,
								       dom->bytes, now, &bps);
			if (g->has_mbm_total_bps[d])
				g->mbm_total_bps[d] = bps;
		} else {
			g->has_mbm_local[d] = ok;
			g->mbm_local_bytes[d] = ok ? dom->bytes : 0;
			g->mbm_local_bps[d] = 0;
			g->has_mbm_local_bps[d] = !resctrl_rate_update(&st->local[d], dom->state,
								       dom->bytes, now, &bps);
			if (g->has_mbm_local_bps[d])
				g->mbm_local_bps[d] = bps;
		}
	}
}

/* Subdirectories of @path that are groups (not info/, mon_data/, mon_groups/); 0 when absent. */
static unsigned int count_groups(const char *path, unsigned int *ret_mon)
{
	char sub[PATH_MAX];
	unsigned int n = 0;
	struct dirent *de;
	DIR *d = opendir(path);

	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.' || !strcmp(de->d_name, "info") ||
		    !strcmp(de->d_name, "mon_data") || !strcmp(de->d_name, "mon_groups"))
			continue;
		n++;
		if (ret_mon && snprintf(sub, sizeof(sub), "%s/%s/mon_groups", path, de->d_name) <
				       (int)sizeof(sub))
			*ret_mon += count_groups(sub, NULL);
	}
	closedir(d);
	return n;
}

/* Every group on the node draws on the same ids, not only kqos's: count them all. */
static void count_ids(struct rdtmon *m)
{
	const struct resctrl_caps *caps = resctrl_caps(m->r);
	const char *root = resctrl_root(m->r);
	unsigned int mon = 0, ctrl;
	char path[PATH_MAX];

	ctrl = 1 + count_groups(root, &mon);
	if (snprintf(path, sizeof(path), "%s/mon_groups", root) < (int)sizeof(path))
		mon += count_groups(path, NULL);
	m->ids = (struct snap_rdt_ids){
		.has = true,
		.closids = caps->has_alloc ? caps->num_closids : 0,
		.ctrl_groups = ctrl,
		.rmids = caps->has_mon ? caps->num_rmids : 0,
		.rmids_used = caps->has_mon ? ctrl + mon : 0,
	};
}

static void read_all(struct rdtmon *m, const char *ctrl, const char *mon, struct rdt_state *st,
		     __u64 now)
{
	for (int ev = 0; ev < RESCTRL_EV_MAX; ev++)
		if (resctrl_caps(m->r)->has_event[ev])
			read_counter(m, ctrl, mon, ev, st, now);
}

/* The pods' monitoring groups under class group @ctrl (mon_groups/kqos-pod-<uid>). */
static void poll_mons(struct rdtmon *m, const char *ctrl, struct rdt_state *next, __u64 now)
{
	static char mons[MAX_GROUPS][RESCTRL_NAME_MAX];
	int n = resctrl_mon_group_list(m->r, ctrl, mons, MAX_GROUPS);

	for (int i = 0; i < n && i < MAX_GROUPS && m->n_next < MAX_GROUPS; i++) {
		char dir[2 * RESCTRL_NAME_MAX + 32];
		struct rdt_state *st;

		snprintf(dir, sizeof(dir),
			 RESCTRL_PREFIX "%.63s/mon_groups/" RESCTRL_PREFIX "%.63s", ctrl, mons[i]);
		st = keep_state(m->v, m->n, dir, &next[m->n_next++]);
		st->g.is_mon = true;
		if (!strncmp(mons[i], "pod-", 4))
			snprintf(st->g.pod_uid, sizeof(st->g.pod_uid), "%s", mons[i] + 4);
		read_all(m, ctrl, mons[i], st, now);
	}
}

void rdtmon__ids(const struct rdtmon *m, struct snap_rdt_ids *ids)
{
	static const struct snap_rdt_ids none;

	*ids = m ? m->ids : none;
}

/*
 * resctrl vanished: its figures go (they would be stale), and each poll tries the root again,
 * so a remount is monitored again as the actuator controls it again (enforce.c).
 */
static void root_failed(struct rdtmon *m, int err)
{
	struct resctrl *r;

	if (!resctrl_err_unreachable(err) || !m->owns_r || !m->root)
		return;
	if (!m->gone)
		log_warn("resctrl monitoring paused: the root does not answer, retrying each poll",
			 "root=%s err=%d", m->root, err);
	m->gone = true;
	m->n = 0;
	if (resctrl_open(m->root, &r))
		return;
	resctrl_close(m->r);
	m->r = r;
	m->gone = false;
	log_info("resctrl monitoring works again", "root=%s", m->root);
}

void rdtmon__poll(struct rdtmon *m, __u64 now_ns)
{
	static char names[MAX_GROUPS][RESCTRL_NAME_MAX];
	struct rdt_state *next;
	int n;

	if (!m || (m->polled && now_ns - m->last_ns < m->interval_ns))
		return;
	m->polled = true;
	m->last_ns = now_ns;
	n = resctrl_group_list(m->r, names, MAX_GROUPS);
	if (n < 0) {
		root_failed(m, n);
		if (m->gone)
			return;
		n = resctrl_group_list(m->r, names, MAX_GROUPS);
		if (n < 0)
			return;
	}
	n = n < MAX_GROUPS ? n : MAX_GROUPS;
	next = calloc(MAX_GROUPS, sizeof(*next));
	if (!next)
		return;
	for (int i = 0; i < n; i++) {
		char dir[RESCTRL_NAME_MAX + 8];
		struct rdt_state *st;

		snprintf(dir, sizeof(dir), RESCTRL_PREFIX "%.63s", names[i]);
		st = keep_state(m->v, m->n, dir, &next[i]);
		name_group(&st->g, names[i]);
		read_schemata(m, names[i], &st->g);
		read_all(m, names[i], NULL, st, now_ns);
	}
	m->n_next = (size_t)n;
	for (int i = 0; i < n; i++)
		poll_mons(m, names[i], next, now_ns);
	free(m->v);
	m->v = next;
	m->n = m->n_next;
	count_ids(m);
}

int rdtmon__copy(const struct rdtmon *m, struct snap_rdt_group **ret, size_t *nr)
{
	struct snap_rdt_group *v = calloc(m->n ? m->n : 1, sizeof(*v));

	*ret = NULL;
	*nr = 0;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < m->n; i++)
		v[i] = m->v[i].g;
	*ret = v;
	*nr = m->n;
	return 0;
}
