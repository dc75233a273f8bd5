// SPDX-License-Identifier: GPL-2.0
/* The resctrl actuator: kqos groups, their schemata and their tasks, from a plan's rdt section. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "rdtact.h"

#define POD_GRACE_NS	(10ULL * 1000000000ULL) /* koordinator's reconciler: 10 s */
#define LOCK_TIMEOUT_MS 1000
#define MAX_LISTED	512

/* What failed, for one log line per (group, what, errno) while it persists. */
enum fail_kind { FAIL_MKDIR = 0, FAIL_SCHEMATA, FAIL_TASKS, FAIL_RMDIR, FAIL_NR };

static const char *const fail_names[FAIL_NR] = { "mkdir", "schemata", "tasks", "rmdir" };

struct rgroup {
	char name[PLAN_RDT_NAME_MAX];
	bool is_present; /* the directory exists */
	bool is_pod;
	bool no_closid; /* the kernel refused it a CLOSID: its members go to the fallback */
	bool placed_once; /* reconciled once: a tid missing later is a miss of the events */
	uint64_t unplanned_ns; /* since when no plan has it; 0 while planned */
	int logged[FAIL_NR]; /* -errno last logged per kind, 0 = none */
	struct resctrl_tids have; /* the group's tasks, read once per reconcile */
	bool has_read;
};

/* A pod's monitoring group under its class group: mon_groups/kqos-<name>. */
struct rmon {
	char ctrl[PLAN_RDT_NAME_MAX], name[PLAN_RDT_NAME_MAX];
	bool is_present, is_planned;
	uint64_t unplanned_ns;
	struct resctrl_tids have;
	bool has_read;
};

struct rdtact {
	struct resctrl *r;
	struct cgroupfs *cg;
	struct rdtact_opts o;
	struct rgroup *groups;
	size_t nr, cap;
	struct plan_rdt last; /* the last applied plan: what attach events are matched against */
	struct plan_rdt prev; /* the one before: tells a miss from a newcomer; buffers swap */
	struct plan_rdt again; /* the last plan, re-applied by a reconcile between ticks */
	int *target; /* per group of `last`: index into groups[] where its tasks go, or -1 */
	size_t cap_target;
	pid_t *pids;
	size_t cap_pids;
	bool logged_no_alloc;
	struct rmon *mons;
	size_t nr_mons, cap_mons;
	bool out_of_rmids; /* logged once: per-pod monitoring degrades to class level */
	int pass_err; /* of the last failed pass, logged once until a pass succeeds */
	struct snap_rdt_enforce st;
};

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

int rdtact__new(struct resctrl *r, struct cgroupfs *cg, const struct rdtact_opts *o,
		struct rdtact **ret)
{
	struct rdtact *a = calloc(1, sizeof(*a));

	if (!a)
		return -ENOMEM;
	a->r = r;
	a->cg = cg;
	if (o)
		a->o = *o;
	if (!a->o.pod_grace_ns)
		a->o.pod_grace_ns = POD_GRACE_NS;
	*ret = a;
	return 0;
}

void rdtact__free(struct rdtact *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nr; i++)
		resctrl_tids_fini(&a->groups[i].have);
	for (size_t i = 0; i < a->nr_mons; i++)
		resctrl_tids_fini(&a->mons[i].have);
	free(a->mons);
	free(a->groups);
	plan_rdt_fini(&a->last);
	plan_rdt_fini(&a->prev);
	plan_rdt_fini(&a->again);
	free(a->target);
	free(a->pids);
	free(a);
}

void rdtact__set_dry_run(struct rdtact *a, bool dry_run)
{
	a->o.dry_run = dry_run;
}

static int find(const struct rdtact *a, const char *name)
{
	for (size_t i = 0; i < a->nr; i++)
		if (!strcmp(a->groups[i].name, name))
			return (int)i;
	return -1;
}

static int get(struct rdtact *a, const char *name, struct rgroup **ret)
{
	int i = find(a, name);

	if (i < 0) {
		if (a->nr == a->cap) {
			size_t cap = a->cap ? a->cap * 2 : 16;
			void *n = realloc(a->groups, cap * sizeof(*a->groups));

			if (!n)
				return -ENOMEM;
			a->groups = n;
			a->cap = cap;
		}
		i = (int)a->nr++;
		memset(&a->groups[i], 0, sizeof(a->groups[i]));
		snprintf(a->groups[i].name, sizeof(a->groups[i].name), "%s", name);
		a->groups[i].is_pod = !strncmp(name, "pod-", 4);
	}
	*ret = &a->groups[i];
	return 0;
}

/* One line per (group, kind, errno) while the failure lasts, with the kernel's reason. */
static void fail(struct rdtact *a, struct rgroup *g, enum fail_kind k, int err, const char *what)
{
	a->st.errors++;
	if (g->logged[k] == err)
		return;
	g->logged[k] = err;
	log_warn("resctrl write failed",
		 "group=" RESCTRL_PREFIX "%s op=%s what=\"%s\" err=%d "
		 "(%s) last_cmd_status=\"%s\"",
		 g->name, fail_names[k], what ? what : "", err, strerror(-err),
		 resctrl_last_status(a->r));
}

/* The end of a logged failure is said too, so a log shows how long a fault lasted. */
static void ok(struct rgroup *g, enum fail_kind k)
{
	if (g->logged[k])
		log_info("resctrl write works again", "group=" RESCTRL_PREFIX "%s op=%s after=%d",
			 g->name, fail_names[k], g->logged[k]);
	g->logged[k] = 0;
}

/* --- schemata from percent ------------------------------------------------------------- */

static const struct plan_rdt_l3 *l3_for(const struct plan_rdt_group *g, unsigned int id)
{
	const struct plan_rdt_l3 *all = NULL;

	for (unsigned int i = 0; i < g->nr_l3; i++) {
		if (g->l3[i].cache_id == (int32_t)id)
			return &g->l3[i]; /* a per-cache entry overrides the all-cache value */
		if (g->l3[i].cache_id < 0)
			all = &g->l3[i];
	}
	return all;
}

static const struct plan_rdt_mb *mb_for(const struct plan_rdt_group *g, unsigned int id)
{
	const struct plan_rdt_mb *all = NULL;

	for (unsigned int i = 0; i < g->nr_mb; i++) {
		if (g->mb[i].cache_id == (int32_t)id)
			return &g->mb[i];
		if (g->mb[i].cache_id < 0)
			all = &g->mb[i];
	}
	return all;
}

static int set_l3(const struct resctrl_caps *caps, const struct plan_rdt_group *g,
		  enum resctrl_res res, struct resctrl_schemata *s, char *msg, size_t len)
{
	const struct resctrl_res_info *ri = &caps->res[res];

	for (unsigned int d = 0; d < caps->nr_domains; d++) {
		const struct plan_rdt_l3 *l = l3_for(g, caps->domain_ids[d]);
		uint64_t cbm;
		int err;

		if (!l)
			continue;
		err = resctrl_cbm_from_pct(ri->cbm_mask, l->start_pct, l->end_pct, &cbm);
		if (!err)
			err = resctrl_check_cbm(ri, cbm, msg, len);
		else
			snprintf(msg, len, "L3 range %u-%u%% of mask %llx gives no valid mask",
				 l->start_pct, l->end_pct, (unsigned long long)ri->cbm_mask);
		if (!err)
			err = resctrl_sline_set(&s->res[res], caps->domain_ids[d], cbm);
		if (err)
			return err;
	}
	return 0;
}

static int set_mb(const struct resctrl_caps *caps, const struct plan_rdt_group *g,
		  struct resctrl_schemata *s, char *msg, size_t len)
{
	const struct resctrl_res_info *ri = &caps->res[RESCTRL_RES_MB];

	for (unsigned int d = 0; d < caps->nr_domains; d++) {
		const struct plan_rdt_mb *m = mb_for(g, caps->domain_ids[d]);
		uint64_t v;
		int err;

		if (!m)
			continue;
		err = resctrl_mb_from_pct(ri, m->pct, &v);
		if (err)
			snprintf(msg, len, "MB %u%% out of range", m->pct);
		if (!err)
			err = resctrl_sline_set(&s->res[RESCTRL_RES_MB], caps->domain_ids[d], v);
		if (err)
			return err;
	}
	return 0;
}

int rdtact_schemata(const struct resctrl_caps *caps, const struct plan_rdt_group *g,
		    struct resctrl_schemata *ret, char *msg, size_t len)
{
	int err = 0;

	memset(ret, 0, sizeof(*ret));
	if (msg && len)
		msg[0] = '\0';
	/* CDP splits L3 into code and data: the class's range applies to both */
	if (g->has_l3 && caps->has_l3_cdp) {
		err = set_l3(caps, g, RESCTRL_RES_L3CODE, ret, msg, len);
		if (!err)
			err = set_l3(caps, g, RESCTRL_RES_L3DATA, ret, msg, len);
	} else if (g->has_l3 && caps->res[RESCTRL_RES_L3].is_present) {
		err = set_l3(caps, g, RESCTRL_RES_L3, ret, msg, len);
	}
	if (!err && g->has_mb && caps->res[RESCTRL_RES_MB].is_present)
		err = set_mb(caps, g, ret, msg, len);
	return err;
}

/* --- groups ----------------------------------------------------------------------------- */

/* The kqos groups on disk: a restart adopts them, and what no plan has goes later. */
static int scan(struct rdtact *a)
{
	static char names[MAX_LISTED][RESCTRL_NAME_MAX];
	struct rgroup *g;
	int n, err;

	n = resctrl_group_list(a->r, names, MAX_LISTED);
	if (n < 0)
		return n;
	for (size_t i = 0; i < a->nr; i++)
		a->groups[i].is_present = false;
	for (int i = 0; i < n && i < MAX_LISTED; i++) {
		err = get(a, names[i], &g);
		if (err)
			return err;
		g->is_present = true;
	}
	return 0;
}

static void create(struct rdtact *a, struct rgroup *g, const struct plan_rdt_group *pg)
{
	int err;

	if (g->is_present)
		return;
	if (a->o.dry_run) {
		log_info("dry-run: would create resctrl group", "group=" RESCTRL_PREFIX "%s",
			 g->name);
		return;
	}
	err = resctrl_group_create(a->r, g->name);
	if (err == -EEXIST)
		err = 0;
	if (err == -ENOSPC && g->is_pod) {
		/* the pod keeps its class group; never take another's group for it */
		if (!g->no_closid) {
			a->st.no_closid++;
			log_warn("out of CLOSIDs: pod stays in its class group",
				 "pod=%s group=" RESCTRL_PREFIX "%s last_cmd_status=\"%s\"",
				 pg->pod_uid, g->name, resctrl_last_status(a->r));
		}
		g->no_closid = true;
		return;
	}
	if (err) {
		fail(a, g, FAIL_MKDIR, err, pg->why);
		return;
	}
	ok(g, FAIL_MKDIR);
	g->is_present = true;
	g->no_closid = false;
	g->placed_once = false;
	a->st.groups_created++;
	log_info("resctrl group created", "group=" RESCTRL_PREFIX "%s why=\"%s\"", g->name,
		 pg->why);
}

static void write_schemata(struct rdtact *a, struct rgroup *g, const struct plan_rdt_group *pg)
{
	struct resctrl_schemata want;
	char msg[160];
	int err;

	if (!g->is_present || (!pg->has_l3 && !pg->has_mb))
		return;
	err = rdtact_schemata(resctrl_caps(a->r), pg, &want, msg, sizeof(msg));
	if (err) {
		fail(a, g, FAIL_SCHEMATA, err, msg);
		return;
	}
	if (a->o.dry_run)
		return;
	err = resctrl_schemata_write(a->r, g->name, &want);
	if (err < 0) {
		fail(a, g, FAIL_SCHEMATA, err, pg->why);
		return;
	}
	ok(g, FAIL_SCHEMATA);
	if (err > 0) {
		a->st.schemata_writes++;
		log_info("resctrl schemata written", "group=" RESCTRL_PREFIX "%s why=\"%s\"",
			 g->name, pg->why);
	}
}

static void drop(struct rdtact *a, struct rgroup *g)
{
	int err;

	if (a->o.dry_run) {
		log_info("dry-run: would remove resctrl group", "group=" RESCTRL_PREFIX "%s",
			 g->name);
		return;
	}
	err = resctrl_group_remove(a->r, g->name);
	if (err && err != -ENOENT) {
		fail(a, g, FAIL_RMDIR, err, NULL);
		return;
	}
	g->is_present = false;
	g->placed_once = false;
	a->st.groups_removed++;
	log_info("resctrl group removed", "group=" RESCTRL_PREFIX "%s", g->name);
}

/* Class groups go as soon as no plan has them; pod groups after the grace. */
static void release(struct rdtact *a, const struct plan_rdt *p, uint64_t now)
{
	for (size_t i = 0; i < a->nr; i++) {
		struct rgroup *g = &a->groups[i];

		if (plan_rdt_find(p, g->name)) {
			g->unplanned_ns = 0;
			continue;
		}
		g->no_closid = false;
		if (!g->is_present)
			continue;
		if (!g->unplanned_ns)
			g->unplanned_ns = now ? now : 1;
		if (g->is_pod && now - g->unplanned_ns < a->o.pod_grace_ns)
			continue;
		drop(a, g);
	}
}

/* --- monitoring groups of pods -------------------------------------------------------- */

static struct rmon *mon_find(struct rdtact *a, const char *ctrl, const char *name)
{
	for (size_t i = 0; i < a->nr_mons; i++)
		if (!strcmp(a->mons[i].ctrl, ctrl) && !strcmp(a->mons[i].name, name))
			return &a->mons[i];
	return NULL;
}

static struct rmon *mon_get(struct rdtact *a, const char *ctrl, const char *name)
{
	struct rmon *m = mon_find(a, ctrl, name);

	if (m)
		return m;
	if (a->nr_mons == a->cap_mons) {
		size_t cap = a->cap_mons ? a->cap_mons * 2 : 16;
		void *n = realloc(a->mons, cap * sizeof(*a->mons));

		if (!n)
			return NULL;
		a->mons = n;
		a->cap_mons = cap;
	}
	m = &a->mons[a->nr_mons++];
	memset(m, 0, sizeof(*m));
	snprintf(m->ctrl, sizeof(m->ctrl), "%s", ctrl);
	snprintf(m->name, sizeof(m->name), "%s", name);
	return m;
}

static void scan_mons(struct rdtact *a)
{
	static char names[MAX_LISTED][RESCTRL_NAME_MAX];

	for (size_t i = 0; i < a->nr_mons; i++)
		a->mons[i].is_present = false;
	for (size_t g = 0; g < a->nr; g++) {
		int n;

		if (!a->groups[g].is_present)
			continue;
		n = resctrl_mon_group_list(a->r, a->groups[g].name, names, MAX_LISTED);
		for (int i = 0; i < n && i < MAX_LISTED; i++) {
			struct rmon *m = mon_get(a, a->groups[g].name, names[i]);

			if (m)
				m->is_present = true;
		}
	}
}

static void mon_create(struct rdtact *a, struct rmon *m)
{
	int err;

	if (m->is_present || a->o.dry_run)
		return;
	err = resctrl_mon_group_create(a->r, m->ctrl, m->name);
	if (!err || err == -EEXIST) {
		m->is_present = true;
		a->st.mon_groups_created++;
		return;
	}
	/* EBUSY: freed RMIDs still in limbo, the next pass retries */
	if (err == -ENOSPC && !a->out_of_rmids)
		log_warn("out of RMIDs: per-pod monitoring degrades to class level",
			 "group=" RESCTRL_PREFIX "%s/mon_groups/" RESCTRL_PREFIX "%s "
			 "last_cmd_status=\"%s\"",
			 m->ctrl, m->name, resctrl_last_status(a->r));
	if (err == -ENOSPC) {
		a->out_of_rmids = true;
		a->st.no_rmid++;
	} else if (err != -EBUSY) {
		a->st.errors++;
	}
}

/* Planned mon groups exist; others go after the pod grace. */
static void sync_mons(struct rdtact *a, const struct plan_rdt *p, uint64_t now)
{
	bool any_missing = false;

	for (size_t i = 0; i < a->nr_mons; i++)
		a->mons[i].is_planned = false;
	for (size_t i = 0; i < p->nr_members; i++) {
		const struct plan_rdt_member *mb = &p->members[i];
		int t = a->target[mb->group];
		struct rmon *m;

		if (!mb->mon[0] || t < 0 || strcmp(a->groups[t].name, p->groups[mb->group].name))
			continue;
		m = mon_get(a, a->groups[t].name, mb->mon);
		if (!m)
			continue;
		m->is_planned = true;
		m->unplanned_ns = 0;
		mon_create(a, m);
		any_missing |= !m->is_present;
	}
	if (!any_missing)
		a->out_of_rmids = false;
	for (size_t i = 0; i < a->nr_mons; i++) {
		struct rmon *m = &a->mons[i];

		if (m->is_planned || !m->is_present || a->o.dry_run)
			continue;
		if (!m->unplanned_ns)
			m->unplanned_ns = now ? now : 1;
		if (now - m->unplanned_ns < a->o.pod_grace_ns)
			continue;
		if (!resctrl_mon_group_remove(a->r, m->ctrl, m->name))
			m->is_present = false;
	}
}

/* The member's monitoring group when it is in place, else NULL (class level only). */
static struct rmon *member_mon(struct rdtact *a, const struct plan_rdt_member *mb,
			       const struct rgroup *g)
{
	struct rmon *m = mb->mon[0] ? mon_find(a, g->name, mb->mon) : NULL;

	return m && m->is_present ? m : NULL;
}

/* --- tasks ------------------------------------------------------------------------------ */

/* Where planned group @i's tasks go: its own group, else its fallback, else nowhere (-1). */
static int resolve(const struct rdtact *a, const struct plan_rdt *p, unsigned int i)
{
	int g = find(a, p->groups[i].name);

	if (g >= 0 && a->groups[g].is_present)
		return g;
	if (p->groups[i].fallback >= 0 && (size_t)p->groups[i].fallback < p->nr_groups) {
		g = find(a, p->groups[p->groups[i].fallback].name);
		if (g >= 0 && a->groups[g].is_present)
			return g;
	}
	return -1;
}

static int remember(struct rdtact *a, const struct plan_rdt *p)
{
	int err;

	if (a->cap_target < p->nr_groups) {
		void *n = realloc(a->target, p->nr_groups * sizeof(*a->target));

		if (!n)
			return -ENOMEM;
		a->target = n;
		a->cap_target = p->nr_groups;
	}
	err = plan_rdt_copy(&a->last, p);
	if (err)
		return err;
	for (size_t i = 0; i < p->nr_groups; i++)
		a->target[i] = resolve(a, p, (unsigned int)i);
	return 0;
}

/* The cgroup's threads into a->pids; how many, or -errno. */
static int read_threads(struct rdtact *a, const char *cgroup)
{
	int n;

	for (;;) {
		n = cgroupfs__read_pids(a->cg, CG_KNOB_THREADS, cgroup, a->pids, a->cap_pids);
		if (n < 0 || (size_t)n <= a->cap_pids)
			return n;
		free(a->pids);
		a->cap_pids = (size_t)n + 256;
		a->pids = calloc(a->cap_pids, sizeof(*a->pids));
		if (!a->pids) {
			a->cap_pids = 0;
			return -ENOMEM;
		}
	}
}

static void move(struct rdtact *a, struct rgroup *g, const pid_t *tids, size_t n, bool is_miss)
{
	struct resctrl_tasks_result res = { 0 };
	int err;

	if (!n || a->o.dry_run)
		return;
	err = resctrl_tasks_add(a->r, g->name, NULL, tids, n, &res);
	if (err) {
		fail(a, g, FAIL_TASKS, err, NULL);
		return;
	}
	ok(g, FAIL_TASKS);
	a->st.placed_reconcile += res.nr_moved;
	if (is_miss) {
		a->st.misses += res.nr_moved;
		log_dbg("resctrl tasks placed by the reconcile, missed by events",
			"group=" RESCTRL_PREFIX "%s n=%zu", g->name, res.nr_moved);
	}
}

/* Then into the pod's monitoring group: a task must be in the control group first. */
static void reconcile_mon(struct rdtact *a, struct rgroup *g, struct rmon *mon, int n)
{
	struct resctrl_tasks_result res = { 0 };
	size_t k = 0;
	int err;

	if (a->o.dry_run)
		return;
	if (!mon->has_read) {
		if (resctrl_tasks_read(a->r, g->name, mon->name, &mon->have))
			return;
		mon->has_read = true;
	}
	for (int i = 0; i < n; i++)
		if (!resctrl_tids_contains(&mon->have, a->pids[i]))
			a->pids[k++] = a->pids[i];
	if (!k)
		return;
	err = resctrl_tasks_add(a->r, g->name, mon->name, a->pids, k, &res);
	if (err)
		fail(a, g, FAIL_TASKS, err, mon->name);
}

/* Every thread of the member's cgroup that is not in its group yet. */
static void reconcile_member(struct rdtact *a, const struct plan_rdt_member *m, struct rgroup *g,
			     struct rmon *mon, bool is_miss)
{
	size_t k = 0;
	int n;

	if (!g->has_read) {
		if (resctrl_tasks_read(a->r, g->name, NULL, &g->have))
			return;
		g->has_read = true;
	}
	n = read_threads(a, m->cgroup);
	if (n < 0)
		return; /* vanished between snapshot and apply: the next tick drops it */
	for (int i = 0; i < n; i++)
		if (!resctrl_tids_contains(&g->have, a->pids[i]))
			a->pids[k++] = a->pids[i];
	move(a, g, a->pids, k, is_miss);
	/* the list was compacted in place: read it again for the monitoring group */
	if (mon && (n = read_threads(a, m->cgroup)) > 0)
		reconcile_mon(a, g, mon, n);
}

static void reconcile(struct rdtact *a, const struct plan_rdt *p, const struct plan_rdt *prev)
{
	for (size_t i = 0; i < a->nr; i++)
		a->groups[i].has_read = false;
	for (size_t i = 0; i < a->nr_mons; i++)
		a->mons[i].has_read = false;
	for (size_t i = 0; i < p->nr_members; i++) {
		const struct plan_rdt_member *m = &p->members[i];
		int t = a->target[m->group];
		bool is_miss;

		if (t < 0 || !m->cgroup[0])
			continue;
		/* known at the last pass: its tasks should have come by events since */
		is_miss = a->groups[t].placed_once && plan_rdt_group_of(prev, m->cgid) >= 0;
		reconcile_member(a, m, &a->groups[t], member_mon(a, m, &a->groups[t]), is_miss);
	}
	for (size_t i = 0; i < a->nr; i++)
		if (a->groups[i].is_present)
			a->groups[i].placed_once = true;
}

/* --- passes ----------------------------------------------------------------------------- */

static bool can_alloc(struct rdtact *a, const struct plan_rdt *p)
{
	if (resctrl_caps(a->r)->has_alloc || !p->nr_groups)
		return true;
	if (!a->logged_no_alloc)
		log_warn("resctrl has no allocation resource: LLC and MB control off", "root=%s",
			 resctrl_root(a->r));
	a->logged_no_alloc = true;
	return false;
}

static void count(struct rdtact *a)
{
	a->st.groups = 0;
	a->st.pod_groups = 0;
	a->st.pods_no_closid = 0;
	a->st.mon_groups = 0;
	for (size_t i = 0; i < a->nr_mons; i++)
		a->st.mon_groups += a->mons[i].is_present;
	for (size_t i = 0; i < a->nr; i++) {
		const struct rgroup *g = &a->groups[i];

		a->st.groups += g->is_present;
		a->st.pod_groups += g->is_present && g->is_pod;
		if (g->no_closid) {
			if (a->st.pods_no_closid < SNAP_RDT_NO_CLOSID_PODS)
				snprintf(a->st.no_closid_uid[a->st.pods_no_closid], 64, "%s",
					 g->name + 4);
			a->st.pods_no_closid++;
		}
	}
}

static int apply_locked(struct rdtact *a, const struct plan_rdt *p, uint64_t now)
{
	struct plan_rdt tmp;
	struct rgroup *g;
	int err;

	err = scan(a);
	if (err)
		return err;
	for (size_t i = 0; i < p->nr_groups && can_alloc(a, p); i++) {
		err = get(a, p->groups[i].name, &g);
		if (err)
			return err;
		create(a, g, &p->groups[i]);
		write_schemata(a, g, &p->groups[i]);
	}
	release(a, p, now);
	tmp = a->prev;
	a->prev = a->last;
	a->last = tmp;
	err = remember(a, p);
	if (err)
		return err;
	scan_mons(a);
	sync_mons(a, p, now);
	if (!a->o.no_reconcile)
		reconcile(a, p, &a->prev);
	return 0;
}

/*
 * A failed pass is logged once until one succeeds: passes run every tick and every resctrl
 * interval, so a lasting failure would otherwise say the same thing twice a second.
 */
static void note_pass(struct rdtact *a, int err)
{
	if (!err) {
		if (a->pass_err)
			log_info("resctrl reachable again: control resumes", "root=%s",
				 resctrl_root(a->r));
		a->pass_err = 0;
		return;
	}
	a->st.errors++;
	if (err == a->pass_err)
		return;
	a->pass_err = err;
	if (err == -ETIMEDOUT)
		log_warn("resctrl busy: control waits for the next pass", "root=%s err=%d (%s)",
			 resctrl_root(a->r), err, strerror(-err));
	else if (resctrl_err_unreachable(err))
		log_warn("resctrl unreachable: resctrl control paused, cgroup monitoring and "
			 "enforcement go on",
			 "root=%s err=%d (%s)", resctrl_root(a->r), err, strerror(-err));
	else
		log_warn("resctrl pass incomplete", "root=%s err=%d (%s)", resctrl_root(a->r), err,
			 strerror(-err));
}

int rdtact__apply(struct rdtact *a, const struct plan_rdt *p, uint64_t mono_ns)
{
	int err;

	err = resctrl_lock(a->r, true, LOCK_TIMEOUT_MS);
	if (err) {
		note_pass(a, err);
		return err;
	}
	a->st.on = p->is_on;
	err = apply_locked(a, p, mono_ns);
	resctrl_unlock(a->r);
	count(a);
	note_pass(a, err);
	return err;
}

int rdtact__reconcile(struct rdtact *a, uint64_t mono_ns)
{
	int err;

	if (!a->last.is_on && !a->st.groups)
		return 0;
	err = plan_rdt_copy(&a->again, &a->last);
	return err ? err : rdtact__apply(a, &a->again, mono_ns);
}

static void note_latency(struct snap_rdt_enforce *st, uint64_t ns)
{
	static const uint64_t le_ns[SNAP_REACT_BUCKETS] = {
		50000,	 100000,   200000,   500000,   1000000,	  2000000,
		5000000, 10000000, 20000000, 50000000, 100000000, 1000000000,
	};

	st->place_count++;
	st->place_sum_s += ns / 1e9;
	if (ns / 1e9 > st->place_max_s)
		st->place_max_s = ns / 1e9;
	for (int i = 0; i < SNAP_REACT_BUCKETS; i++)
		if (ns <= le_ns[i])
			st->place_hist[i]++;
}

/* The event path's second write: the pod's monitoring group, when it has one. */
static void place_mon(struct rdtact *a, uint64_t cgid, struct rgroup *g, pid_t tid)
{
	struct resctrl_tasks_result res = { 0 };

	for (size_t i = 0; i < a->last.nr_members; i++) {
		struct rmon *m;

		if (a->last.members[i].cgid != cgid)
			continue;
		m = member_mon(a, &a->last.members[i], g);
		if (m && resctrl_tasks_add(a->r, g->name, m->name, &tid, 1, &res))
			fail(a, g, FAIL_TASKS, res.first_err, m->name);
		return;
	}
}

int rdtact__place(struct rdtact *a, uint64_t cgid, pid_t tid, uint64_t event_ns)
{
	struct resctrl_tasks_result res = { 0 };
	int i = plan_rdt_group_of(&a->last, cgid), t, err;
	uint64_t done;

	if (i < 0 || a->o.dry_run)
		return 0;
	t = a->target[i];
	if (t < 0)
		return 0;
	/* one write, no lock: a tasks write is atomic in the kernel, and nothing is read first */
	err = resctrl_tasks_add(a->r, a->groups[t].name, NULL, &tid, 1, &res);
	if (err) {
		fail(a, &a->groups[t], FAIL_TASKS, err, NULL);
		return err;
	}
	if (!res.nr_moved)
		return 0;
	place_mon(a, cgid, &a->groups[t], tid);
	a->st.placed_events++;
	done = mono_now();
	if (event_ns && done > event_ns)
		note_latency(&a->st, done - event_ns);
	return 1;
}

unsigned int rdtact__nr_groups(const struct rdtact *a)
{
	return a->st.groups;
}

bool rdtact__is_unreachable(const struct rdtact *a)
{
	return a && resctrl_err_unreachable(a->pass_err);
}

void rdtact__set_resctrl(struct rdtact *a, struct resctrl *r)
{
	a->r = r;
	/* a new mount holds nothing of ours: every group is made and written again */
	for (size_t i = 0; i < a->nr; i++) {
		a->groups[i].is_present = false;
		a->groups[i].placed_once = false;
		a->groups[i].no_closid = false;
		memset(a->groups[i].logged, 0, sizeof(a->groups[i].logged));
	}
	for (size_t i = 0; i < a->nr_mons; i++)
		a->mons[i].is_present = false;
	a->out_of_rmids = false;
}

int rdtact__restore(struct rdtact *a)
{
	int err, first = 0;

	err = resctrl_lock(a->r, true, LOCK_TIMEOUT_MS);
	if (err)
		return err;
	err = scan(a);
	for (size_t i = 0; !err && i < a->nr; i++) {
		if (!a->groups[i].is_present)
			continue;
		drop(a, &a->groups[i]);
		if (a->groups[i].is_present && !first)
			first = -EBUSY;
	}
	resctrl_unlock(a->r);
	plan_rdt_reset(&a->last);
	count(a);
	if (!err)
		log_info("resctrl groups removed", "left=%u", a->st.groups);
	return err ? err : first;
}

void rdtact__fill(const struct rdtact *a, struct snap_rdt_enforce *ret)
{
	*ret = a->st;
}
