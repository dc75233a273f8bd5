// SPDX-License-Identifier: GPL-2.0
/* The evictor: eviction requests -> the Eviction API, or kill/freeze of bare-metal groups. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "evictor.h"
#include "kube_client.h"
#include "log.h"

#define DEFAULT_TIMEOUT_NS  2000000000ULL
#define DEFAULT_RETRY_NS    10000000000ULL
#define DEFAULT_CPU_COOL_NS 20000000000ULL
#define DEFAULT_MEM_COOL_NS 4000000000ULL
#define DEFAULT_GRACE_NS    10000000000ULL
#define MAX_ENTRIES	    256
#define MAX_CGROUPS	    8
#define BODY_MAX	    65536 /* a Status */
#define CGROUP_DEPTH_MAX    16
#define MIN_CALL_MS	    1

enum entry_state {
	ST_RETRY = 0, /* an API eviction not accepted yet: asked again at due_ns */
	ST_ACCEPTED, /* the API accepted: pending until the pod leaves the list */
	ST_KILLING, /* SIGTERM sent: SIGKILL at due_ns */
	ST_FROZEN,
};

struct entry {
	struct evict_request req;
	enum entry_state state;
	uint64_t due_ns;
	unsigned int attempts;
	size_t nr_cgroups;
	char cgroups[MAX_CGROUPS][256];
};

struct evictor {
	struct evictor_opts o;
	char *mount, *freezer, *journal;
	struct evictor_group *groups;
	struct kube_client *kube; /* NULL: no API server, no API evictions */
	struct entry *ent;
	size_t nr_ent;
	const char **uids; /* pending, sorted: what the strategies see */
	struct evict_pending pending;
	uint64_t counts[POD_EVICT_NR][EVICT_RES_NR];
	uint64_t wall_ns;
	size_t nr_recent;
	struct snap_action recent[SNAP_RECENT]; /* this run's newest decisions, newest last */
	size_t recent_head;
};

static const char *const result_names[EVICT_RES_NR] = { "ok",	 "gone",    "retry",
							"error", "skipped", "dry_run" };
static const char *const action_names[] = { "none", "kill", "freeze" };

const char *evict_result_name(enum evict_result r)
{
	return (unsigned int)r < EVICT_RES_NR ? result_names[r] : "?";
}

const char *evict_action_name(enum evict_action a)
{
	return (unsigned int)a <= EVICT_ACTION_FREEZE ? action_names[a] : "?";
}

/* --- decisions: log, journal, count ----------------------------------------------------- */

static void journal(struct evictor *e, const struct evict_request *r, const char *action,
		    enum evict_result res, const char *detail)
{
	FILE *f;

	if (!e->journal)
		return;
	f = fopen(e->journal, "ae");
	if (!f) {
		log_warn("cannot append to the eviction journal", "path=%s err=%d", e->journal,
			 -errno);
		return;
	}
	fprintf(f, "%llu uid=%s pod=%s/%s strategy=%s action=%s result=%s detail=\"%s\"\n",
		(unsigned long long)(e->wall_ns / 1000000000ULL), r->uid, r->namespace, r->name,
		pod_evictor_name(r->strategy), action, evict_result_name(res), detail);
	fclose(f);
}

static void decided(struct evictor *e, const struct evict_request *r, const char *action,
		    enum evict_result res, const char *detail)
{
	struct snap_action *a = &e->recent[e->recent_head];

	e->counts[r->strategy][res]++;
	log_msg(res == EVICT_RES_ERROR ? LOG_WARN : LOG_INFO, "eviction",
		"pod=%s/%s uid=%s strategy=%s action=%s result=%s detail=\"%s\" reason=\"%s\"",
		r->namespace, r->name, r->uid, pod_evictor_name(r->strategy), action,
		evict_result_name(res), detail, r->reason);
	journal(e, r, action, res, detail);
	memset(a, 0, sizeof(*a));
	a->wall_ns = e->wall_ns;
	snprintf(a->strategy, sizeof(a->strategy), "%s", pod_evictor_name(r->strategy));
	snprintf(a->cgroup, sizeof(a->cgroup), "%.60s/%.60s", r->namespace, r->name);
	snprintf(a->knob, sizeof(a->knob), "evict");
	snprintf(a->value, sizeof(a->value), "%s", action);
	snprintf(a->result, sizeof(a->result), "%s", evict_result_name(res));
	snprintf(a->why, sizeof(a->why), "%.95s", r->reason);
	e->recent_head = (e->recent_head + 1) % SNAP_RECENT;
	if (e->nr_recent < SNAP_RECENT)
		e->nr_recent++;
}

/* --- the API server ------------------------------------------------------------------------ */

/* policy/v1 Eviction with the UID precondition, so that a new pod of the same name survives. */
static char *eviction_body(const struct evict_request *r)
{
	json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:{s:s}}}", "apiVersion", "policy/v1",
			      "kind", "Eviction", "metadata", "name", r->name, "namespace",
			      r->namespace, "deleteOptions", "preconditions", "uid", r->uid);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	return s;
}

struct call {
	long code;
	bool garbage;
	char why[KUBE_ERR_LEN];
};

/* 0 when the API server answered, whatever the status (in ret->code); else -errno. */
static int post(struct evictor *e, const char *path, const char *json, long timeout_ms,
		struct call *ret)
{
	struct kube_resp r;
	json_t *j;
	int err;

	*ret = (struct call){ 0 };
	/* libcurl reads 0 as "no timeout": a call without time left is not made */
	if (timeout_ms < MIN_CALL_MS) {
		snprintf(ret->why, sizeof(ret->why), "no API time left in this tick");
		return -ETIMEDOUT;
	}
	err = kube_client__post(e->kube, path, json, (uint32_t)timeout_ms, &r);
	if (!r.code) {
		snprintf(ret->why, sizeof(ret->why), "%s", r.err);
		return err;
	}
	ret->code = r.code;
	if (!err) {
		j = json_loadb(r.body ? r.body : "", r.len, 0, NULL);
		/* the API server answers with an object (a Status); anything else is not it */
		ret->garbage = !json_is_object(j);
		json_decref(j);
	}
	free(r.body);
	snprintf(ret->why, sizeof(ret->why), "HTTP %ld%s", ret->code,
		 ret->garbage ? ", not a JSON object" : "");
	return 0;
}

static uint64_t mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* What is left of the tick's API time, in ms (0 when spent). */
static long left_ms(uint64_t deadline_ns)
{
	uint64_t t = mono_now();

	return t < deadline_ns ? (long)((deadline_ns - t) / 1000000) : 0;
}

/* koordlet's Warning Event for each eviction: best effort, within what is left of the tick. */
static void post_event(struct evictor *e, const struct evict_request *r, bool ok,
		       uint64_t deadline_ns)
{
	long ms = left_ms(deadline_ns);
	char path[512], name[160], msg[320];
	struct call c;
	json_t *o;
	char *s;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/events", r->namespace);
	snprintf(name, sizeof(name), "%.100s.kqos-%llx", r->name, (unsigned long long)e->wall_ns);
	snprintf(msg, sizeof(msg), "evicted by kqos, strategy %s: %s",
		 pod_evictor_name(r->strategy), r->reason);
	o = json_pack("{s:s, s:s, s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s, s:s}, s:s, s:s, s:s, "
		      "s:{s:s}}",
		      "apiVersion", "v1", "kind", "Event", "metadata", "name", name, "namespace",
		      r->namespace, "involvedObject", "kind", "Pod", "apiVersion", "v1", "name",
		      r->name, "namespace", r->namespace, "uid", r->uid, "reason",
		      ok ? "evictPodSuccess" : "evictPodFail", "message", msg, "type", "Warning",
		      "source", "component", "kqos");
	s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	if (s && ms >= MIN_CALL_MS && !post(e, path, s, ms, &c) && c.code / 100 != 2)
		log_dbg("eviction event not recorded", "pod=%s/%s why=\"%s\"", r->namespace,
			r->name, c.why);
	free(s);
}

static uint64_t cool_of(const struct evictor *e, enum pod_evictor s)
{
	return s == POD_EVICT_BE_MEMORY || s == POD_EVICT_MEMORY ? e->o.memory_cool_ns :
								   e->o.cpu_cool_ns;
}

/* One attempt at @en; returns false when the entry is done (accepted stays, gone goes). */
static bool api_evict(struct evictor *e, struct entry *en, uint64_t deadline_ns, uint64_t now_ns)
{
	long ms = left_ms(deadline_ns);
	char path[512], *body = eviction_body(&en->req);
	struct call c;
	int err;

	snprintf(path, sizeof(path), "/api/v1/namespaces/%s/pods/%s/eviction", en->req.namespace,
		 en->req.name);
	en->attempts++;
	err = body ? post(e, path, body, ms, &c) : -ENOMEM;
	free(body);
	if (!err && c.code / 100 == 2 && !c.garbage) {
		en->state = ST_ACCEPTED;
		decided(e, &en->req, "api", EVICT_RES_OK, c.why);
		post_event(e, &en->req, true, deadline_ns);
		return true;
	}
	if (!err && c.code == 404) {
		decided(e, &en->req, "api", EVICT_RES_GONE, c.why);
		return false;
	}
	/* 429: a PodDisruptionBudget said no; ask again once the strategy would */
	en->due_ns =
		now_ns + (!err && c.code == 429 ? cool_of(e, en->req.strategy) : e->o.retry_ns);
	decided(e, &en->req, "api", EVICT_RES_RETRY, c.why);
	if (!err && c.code == 429)
		post_event(e, &en->req, false, deadline_ns);
	return true;
}

/* --- bare-metal groups --------------------------------------------------------------------- */

/* Signal every task of @dir and the cgroups below it; the number of tasks found. */
static int signal_tree(const char *dir, int sig, int depth)
{
	char path[4096], line[32];
	struct dirent *d;
	int n = 0;
	FILE *f;
	DIR *dh;

	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	f = fopen(path, "re");
	while (f && fgets(line, sizeof(line), f)) {
		long pid = strtol(line, NULL, 10);

		if (pid > 1 && kill((pid_t)pid, sig) == 0)
			n++;
	}
	if (f)
		fclose(f);
	dh = depth < CGROUP_DEPTH_MAX ? opendir(dir) : NULL;
	while (dh && (d = readdir(dh))) {
		if (d->d_type != DT_DIR || d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		n += signal_tree(path, sig, depth + 1);
	}
	if (dh)
		closedir(dh);
	return n;
}

static int signal_group(const struct evictor *e, const struct entry *en, int sig)
{
	char dir[4096];
	int n = 0;

	for (size_t i = 0; i < en->nr_cgroups; i++) {
		snprintf(dir, sizeof(dir), "%s%s", e->mount, en->cgroups[i]);
		n += signal_tree(dir, sig, 0);
	}
	return n;
}

static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, val, strlen(val)) < 0)
		err = -errno;
	close(fd);
	return err;
}

/* v1: freezer.state in the freezer hierarchy; v2: cgroup.freeze beside the group's files. */
static int freeze_group(const struct evictor *e, const struct entry *en, bool freeze)
{
	char path[4096];
	int err = 0, r;

	for (size_t i = 0; i < en->nr_cgroups; i++) {
		if (e->freezer)
			snprintf(path, sizeof(path), "%s%s/freezer.state", e->freezer,
				 en->cgroups[i]);
		else
			snprintf(path, sizeof(path), "%s%s/cgroup.freeze", e->mount,
				 en->cgroups[i]);
		r = write_file(path,
			       e->freezer ? (freeze ? "FROZEN" : "THAWED") : (freeze ? "1" : "0"));
		if (r && !err)
			err = r;
	}
	return err;
}

static enum evict_action action_of(const struct evictor *e, const char *group)
{
	for (size_t i = 0; i < e->o.nr_groups; i++)
		if (!strcmp(e->groups[i].name, group))
			return e->groups[i].action;
	return EVICT_ACTION_NONE;
}

/* Start acting on a group; false when there is nothing to keep pending. */
static bool group_evict(struct evictor *e, struct entry *en, uint64_t now_ns)
{
	enum evict_action act = action_of(e, en->req.name);
	char detail[96];
	int n, err;

	switch (act) {
	case EVICT_ACTION_KILL:
		n = signal_group(e, en, SIGTERM);
		snprintf(detail, sizeof(detail), "SIGTERM to %d tasks, SIGKILL in %llu ms", n,
			 (unsigned long long)(e->o.kill_grace_ns / 1000000));
		decided(e, &en->req, "kill", n ? EVICT_RES_OK : EVICT_RES_SKIPPED,
			n ? detail : "no task left");
		en->state = ST_KILLING;
		en->due_ns = now_ns + e->o.kill_grace_ns;
		return n > 0;
	case EVICT_ACTION_FREEZE:
		err = freeze_group(e, en, true);
		snprintf(detail, sizeof(detail), err ? "freeze failed: %s" : "frozen%s",
			 err ? strerror(-err) : "");
		decided(e, &en->req, "freeze", err ? EVICT_RES_ERROR : EVICT_RES_OK, detail);
		en->state = ST_FROZEN;
		if (err)
			freeze_group(e, en, false); /* a partial freeze must not stay */
		return !err;
	default:
		decided(e, &en->req, "none", EVICT_RES_SKIPPED, "the group has no evictAction");
		return false;
	}
}

/* --- the pending set ----------------------------------------------------------------------- */

static struct entry *find(struct evictor *e, const char *uid)
{
	for (size_t i = 0; i < e->nr_ent; i++)
		if (!strcmp(e->ent[i].req.uid, uid))
			return &e->ent[i];
	return NULL;
}

static void drop(struct evictor *e, size_t i)
{
	e->ent[i] = e->ent[--e->nr_ent];
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static void publish_pending(struct evictor *e)
{
	size_t n = 0;

	for (size_t i = 0; i < e->nr_ent; i++)
		if (e->ent[i].state != ST_RETRY)
			e->uids[n++] = e->ent[i].req.uid;
	qsort(e->uids, n, sizeof(*e->uids), cmp_str);
	e->pending = (struct evict_pending){ .uids = e->uids, .nr = n };
}

void evictor__set_dry_run(struct evictor *e, bool dry_run)
{
	if (e)
		e->o.dry_run = dry_run;
}

const struct evict_pending *evictor__pending(const struct evictor *e)
{
	return &e->pending;
}

/* Pods gone from the list are done; groups whose tasks are gone are done. */
static void sync_pending(struct evictor *e, const struct snapshot *snap, bool pressure,
			 uint64_t now_ns)
{
	for (size_t i = e->nr_ent; i-- > 0;) {
		struct entry *en = &e->ent[i];
		const struct snap_pod *sp = snapshot__pod(snap, en->req.uid);

		if (en->state == ST_FROZEN) {
			if (pressure && sp)
				continue;
			if (!freeze_group(e, en, false))
				decided(e, &en->req, "thaw", EVICT_RES_OK, "no pressure left");
			drop(e, i);
		} else if (en->state == ST_KILLING) {
			if (now_ns < en->due_ns)
				continue;
			if (signal_group(e, en, SIGKILL))
				decided(e, &en->req, "kill", EVICT_RES_OK,
					"SIGKILL to the tasks left after the grace period");
			drop(e, i);
		} else if (!sp) {
			log_info("eviction done: the pod left the pod list", "pod=%s/%s uid=%s",
				 en->req.namespace, en->req.name, en->req.uid);
			drop(e, i);
		}
	}
}

static void add_request(struct evictor *e, const struct evict_request *r,
			const struct snapshot *snap, uint64_t now_ns)
{
	const struct snap_pod *sp = snapshot__pod(snap, r->uid);
	struct entry *en;

	if (find(e, r->uid))
		return; /* counted once while pending */
	if (e->o.dry_run) {
		decided(e, r, r->is_bare_metal ? evict_action_name(action_of(e, r->name)) : "api",
			EVICT_RES_DRY_RUN, "dry run: nothing touched");
		return;
	}
	if (!r->is_bare_metal && !e->kube) {
		decided(e, r, "api", EVICT_RES_ERROR, "no API server configured");
		return;
	}
	if (e->nr_ent == MAX_ENTRIES) {
		log_warn("too many evictions in flight; request dropped", "pod=%s/%s", r->namespace,
			 r->name);
		return;
	}
	en = &e->ent[e->nr_ent++];
	memset(en, 0, sizeof(*en));
	en->req = *r;
	en->due_ns = now_ns;
	for (size_t i = 0;
	     sp && sp->pod->is_static && i < sp->pod->nr_cgroups && en->nr_cgroups < MAX_CGROUPS;
	     i++)
		snprintf(en->cgroups[en->nr_cgroups++], sizeof(en->cgroups[0]), "%s",
			 sp->pod->cgroups[i]);
	if (r->is_bare_metal && !group_evict(e, en, now_ns))
		e->nr_ent--;
}

/* API evictions due, within one timeout for the whole tick. */
static void run_api(struct evictor *e, uint64_t now_ns)
{
	uint64_t deadline = mono_now() + e->o.timeout_ns;

	for (size_t i = e->nr_ent; i-- > 0;) {
		struct entry *en = &e->ent[i];

		if (en->state != ST_RETRY || en->due_ns > now_ns)
			continue;
		if (left_ms(deadline) < MIN_CALL_MS) {
			log_dbg("eviction waits for the next tick: this tick's API time is spent",
				"pod=%s/%s", en->req.namespace, en->req.name);
			break;
		}
		if (!api_evict(e, en, deadline, now_ns))
			drop(e, i);
	}
}

void evictor__tick(struct evictor *e, const struct snapshot *snap, const struct evict_list *list,
		   uint64_t now_ns, uint64_t wall_ns)
{
	e->wall_ns = wall_ns;
	if (snap)
		sync_pending(e, snap, list && list->pressure, now_ns);
	for (size_t i = 0; snap && list && i < list->nr; i++)
		add_request(e, &list->req[i], snap, now_ns);
	if (list && list->nr_dropped)
		log_warn("eviction requests past the per-tick limit wait", "dropped=%zu",
			 list->nr_dropped);
	run_api(e, now_ns);
	publish_pending(e);
}

uint64_t evictor__count(const struct evictor *e, enum pod_evictor s, enum evict_result r)
{
	return (unsigned int)s < POD_EVICT_NR && (unsigned int)r < EVICT_RES_NR ? e->counts[s][r] :
										  0;
}

static void fill_counts(const struct evictor *e, struct snap_enforce *ret)
{
	for (unsigned int s = 0; s < POD_EVICT_NR; s++) {
		for (unsigned int r = 0; r < EVICT_RES_NR; r++) {
			struct snap_action_count *c;

			if (!e->counts[s][r] || ret->nr_counts == SNAP_ACTION_KINDS)
				continue;
			c = &ret->counts[ret->nr_counts++];
			memset(c, 0, sizeof(*c));
			snprintf(c->strategy, sizeof(c->strategy), "%s", pod_evictor_name(s));
			snprintf(c->knob, sizeof(c->knob), "evict");
			snprintf(c->result, sizeof(c->result), "%s", result_names[r]);
			c->count = e->counts[s][r];
		}
	}
}

/* Merge the newest decisions into the recent actions, newest first, by time. */
static void fill_recent(const struct evictor *e, struct snap_enforce *ret)
{
	struct snap_action all[2 * SNAP_RECENT];
	size_t n = 0, a = 0, b = 0;

	while (n < SNAP_RECENT && (a < ret->nr_recent || b < e->nr_recent)) {
		const struct snap_action *mine =
			b < e->nr_recent ?
				&e->recent[(e->recent_head + SNAP_RECENT - 1 - b) % SNAP_RECENT] :
				NULL;

		if (mine && (a == ret->nr_recent || mine->wall_ns >= ret->recent[a].wall_ns)) {
			all[n++] = *mine;
			b++;
		} else {
			all[n++] = ret->recent[a++];
		}
	}
	memcpy(ret->recent, all, n * sizeof(all[0]));
	ret->nr_recent = n;
}

void evictor__fill(const struct evictor *e, struct snap_enforce *ret)
{
	if (!e || !ret)
		return;
	fill_counts(e, ret);
	fill_recent(e, ret);
}

/* --- lifetime ------------------------------------------------------------------------------ */

static char *dup_or_null(const char *s, bool *oom)
{
	char *d = s && *s ? strdup(s) : NULL;

	if (s && *s && !d)
		*oom = true;
	return d;
}

/* The token and the CA default to the pod's service account's. */
static int open_api(struct evictor *e, const struct evictor_opts *o, const char *url)
{
	const char *ca = o->ca_path ? o->ca_path : KUBE_SA_DIR "/ca.crt";

	if (!o->ca_path && access(ca, R_OK))
		ca = NULL; /* libcurl's default CAs */
	return kube_client__new(
		&(struct kube_client_opts){
			.base_url = url,
			.token_path = o->token_path ? o->token_path : KUBE_SA_DIR "/token",
			.ca_path = ca,
			.insecure_skip_verify = o->insecure_skip_verify,
			.max_body_bytes = BODY_MAX,
		},
		&e->kube);
}

static void defaults(struct evictor_opts *o)
{
	if (!o->timeout_ns)
		o->timeout_ns = DEFAULT_TIMEOUT_NS;
	if (!o->retry_ns)
		o->retry_ns = DEFAULT_RETRY_NS;
	if (!o->cpu_cool_ns)
		o->cpu_cool_ns = DEFAULT_CPU_COOL_NS;
	if (!o->memory_cool_ns)
		o->memory_cool_ns = DEFAULT_MEM_COOL_NS;
	if (!o->kill_grace_ns)
		o->kill_grace_ns = DEFAULT_GRACE_NS;
}

static int copy_groups(struct evictor *e, const struct evictor_opts *o)
{
	if (!o->nr_groups)
		return 0;
	e->groups = calloc(o->nr_groups, sizeof(*e->groups));
	if (!e->groups)
		return -ENOMEM;
	for (size_t i = 0; i < o->nr_groups; i++) {
		e->groups[i].action = o->groups[i].action;
		e->groups[i].name = strdup(o->groups[i].name ? o->groups[i].name : "");
		if (!e->groups[i].name)
			return -ENOMEM;
	}
	return 0;
}

int evictor__new(const struct evictor_opts *opts, struct evictor **ret)
{
	struct evictor *e = calloc(1, sizeof(*e));
	const char *url = opts->api_url;
	char in_cluster[512];
	bool oom = false;
	int err;

	if (!e)
		return -ENOMEM;
	e->o = *opts;
	defaults(&e->o);
	if (!url && !kube_in_cluster_url(in_cluster, sizeof(in_cluster)))
		url = in_cluster;
	if (url && !*url)
		url = NULL; /* no API server: each API eviction is refused and logged */
	e->mount = dup_or_null(opts->cgroup_mount ? opts->cgroup_mount : "/sys/fs/cgroup", &oom);
	e->freezer = dup_or_null(opts->freezer_mount, &oom);
	e->journal = dup_or_null(opts->journal_path, &oom);
	e->ent = calloc(MAX_ENTRIES, sizeof(*e->ent));
	e->uids = calloc(MAX_ENTRIES, sizeof(*e->uids));
	err = oom || !e->ent || !e->uids ? -ENOMEM : copy_groups(e, opts);
	if (err)
		goto err;
	e->o.groups = NULL;
	err = url ? open_api(e, opts, url) : 0;
	if (err)
		goto err;
	log_info("evictor ready", "api=%s dry_run=%d groups=%zu", url ? url : "none", e->o.dry_run,
		 e->o.nr_groups);
	*ret = e;
	return 0;
err:
	evictor__free(e);
	return err;
}

void evictor__free(struct evictor *e)
{
	if (!e)
		return;
	/* a frozen group must not outlive kqos */
	for (size_t i = 0; e->ent && i < e->nr_ent; i++)
		if (e->ent[i].state == ST_FROZEN)
			freeze_group(e, &e->ent[i], false);
	kube_client__free(e->kube);
	for (size_t i = 0; e->groups && i < e->o.nr_groups; i++)
		free((char *)e->groups[i].name);
	free(e->groups);
	free(e->ent);
	free(e->uids);
	free(e->mount);
	free(e->freezer);
	free(e->journal);
	free(e);
}
