// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* asprintf, strndup */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgroupfs.h"
#include "cgwalk.h"
#include "log.h"
#include "podsrc.h"
#include "sample.h"
#include "snapbuild.h"

#define NSEC_PER_SEC	1000000000ULL
#define WALK_MIN_GAP_NS NSEC_PER_SEC /* rescan the cgroup tree at most once a second */
#define CPUMGR_CHECK_NS (10 * NSEC_PER_SEC)

/* 64-bit cumulative counters of one cgroup: the BPF histogram slots are u32 and wrap. */
struct cum {
	__u64 cgid;
	__u64 oncpu, switches, waits, wait_ns;
	__u64 hist[SNAP_RQ_BUCKETS]; /* per bucket, not cumulative */
	__u64 pmu[KQOS_PMU_MAX];
};

/* What an entity (pod, container, group, other cgroup) gathers from its cgroups in a tick. */
struct acc {
	bool any;
	struct cg_totals d; /* summed deltas; d.rq_wait_max_ns = the largest interval max */
	struct cum c; /* summed cumulative counters */
	double pmu_scaled_per_s[KQOS_PMU_MAX];
};

struct owner {
	const char *path; /* "/kubepods/..." */
	struct acc *acc;
};

struct throttle_prev {
	char *path;
	__u64 periods, throttled;
};

struct snapbuild {
	struct kqos_config cfg;
	struct cg_hier hier;
	struct cgroupfs *cgfs;
	struct topology *topo;
	struct cpumgr_state *cpumgr;
	__u64 cpumgr_checked_ns;
	time_t cpumgr_mtime;
	struct podsrc *src;
	const char *src_kind;
	struct cgwalk_result *walk;
	__u64 walk_ns;
	struct pod_list *walk_pods; /* pods made from the walk (cgroup source) */
	unsigned long walk_gen,
		walk_pods_gen; /* rescans done; the rescan walk_pods was built from */
	struct cum *cum, *cum_next;
	size_t ncum, cum_cap;
	struct throttle_prev *thr;
	size_t nthr;
	__u64 stat_busy, stat_total;
	bool has_stat;
	__u64 seq;
};

/* --- pod source ---------------------------------------------------------------------------- */

static int open_kubelet(struct snapbuild *sb)
{
	const struct kqos_config *c = &sb->cfg;
	struct podsrc_kubelet_opts o = {
		.url = c->pods.kubelet.url,
		.token_path = *c->pods.kubelet.token_file ? c->pods.kubelet.token_file : NULL,
		.ca_path = *c->pods.kubelet.ca_file ? c->pods.kubelet.ca_file : NULL,
		.insecure_skip_verify = c->pods.kubelet.insecure_skip_verify,
		.timeout_ms = c->pods.kubelet.timeout_ns / 1000000,
		.interval_ms = c->pods.kubelet.interval_ns / 1000000,
	};

	sb->src_kind = "kubelet";
	return podsrc_kubelet__new(&o, &sb->src);
}

static int open_static(struct snapbuild *sb)
{
	struct podsrc_static_group g[CONFIG_MAX_GROUPS];
	struct podsrc_static_opts o = { .groups = g,
					.nr_groups = sb->cfg.pods.nr_groups,
					.cgroup_root = sb->hier.mount };

	for (__u32 i = 0; i < sb->cfg.pods.nr_groups; i++) {
		g[i].name = sb->cfg.pods.groups[i].name;
		g[i].cgroup = sb->cfg.pods.groups[i].cgroup;
		g[i].qos_class = sb->cfg.pods.groups[i].qos_class;
	}
	sb->src_kind = "static";
	return podsrc_static__new(&o, &sb->src);
}

static int open_source(struct snapbuild *sb)
{
	const struct kqos_config *c = &sb->cfg;
	__u32 kind = c->pods.source;

	/* In a pod with a service account the kubelet is the source; on a host, groups or walk. */
	if (kind == POD_SOURCE_AUTO)
		kind = !access(c->pods.kubelet.token_file, R_OK) ? POD_SOURCE_KUBELET :
		       c->pods.nr_groups			 ? POD_SOURCE_STATIC :
								   POD_SOURCE_CGROUP;
	switch (kind) {
	case POD_SOURCE_KUBELET:
		return open_kubelet(sb);
	case POD_SOURCE_FILE: {
		struct podsrc_file_opts o = { .path = c->pods.file.path,
					      .interval_ms = c->pods.file.interval_ns / 1000000 };

		sb->src_kind = "file";
		return podsrc_file__new(&o, &sb->src);
	}
	case POD_SOURCE_STATIC:
		return open_static(sb);
	case POD_SOURCE_NONE:
		sb->src_kind = "none";
		return 0;
	default:
		sb->src_kind = "cgroup";
		return 0;
	}
}

void snapbuild__poll_pods(struct snapbuild *sb, __u64 now_ns)
{
	if (sb->src)
		podsrc__poll(sb->src, now_ns);
}

static void node_cpu(struct snapbuild *sb, __u64 dt_ns, struct snap_node *n);

/* --- construction ----------------------------------------------------------------------------- */

int snapbuild__new(const struct kqos_config *cfg, const struct cg_hier *hier,
		   struct snapbuild **ret)
{
	struct snapbuild *sb = calloc(1, sizeof(*sb));
	int err;

	if (!sb)
		return -ENOMEM;
	sb->cfg = *cfg;
	sb->hier = *hier;
	err = cgroupfs__open(cfg->cgroup_root, CGFS_MODE_AUTO, &sb->cgfs);
	if (err) {
		log_warn("cgroup stat files unavailable, no throttling figures", "root=%s err=%d",
			 cfg->cgroup_root, err);
		sb->cgfs = NULL;
	}
	err = topology__load(cfg->sys_root, &sb->topo);
	if (err) {
		log_warn("CPU topology unavailable", "sys_root=%s err=%d", cfg->sys_root, err);
		sb->topo = NULL;
	}
	node_cpu(sb, 0, &(struct snap_node){ 0 }); /* baseline for the first interval */
	err = open_source(sb);
	if (err) {
		log_err("cannot start the pod source", "source=%s err=%d", sb->src_kind, err);
		snapbuild__free(sb);
		return err;
	}
	log_info("pod source", "kind=%s", sb->src_kind);
	*ret = sb;
	return 0;
}

static void free_throttle(struct snapbuild *sb)
{
	for (size_t i = 0; i < sb->nthr; i++)
		free(sb->thr[i].path);
	free(sb->thr);
	sb->thr = NULL;
	sb->nthr = 0;
}

void snapbuild__free(struct snapbuild *sb)
{
	if (!sb)
		return;
	cgroupfs__free(sb->cgfs);
	topology__free(sb->topo);
	cpumgr_state__free(sb->cpumgr);
	podsrc__free(sb->src);
	cgwalk_result__free(sb->walk);
	pod_list__free(sb->walk_pods);
	free(sb->cum);
	free(sb->cum_next);
	free_throttle(sb);
	free(sb);
}

/* --- cumulative counters per cgroup -------------------------------------------------------- */

/* Bucket of the coarse export histogram that holds BPF slot @slot (bounds are powers of 2). */
static int coarse_bucket(__u32 slot)
{
	__u64 upper = kqos_hist_slot_lower(slot) + kqos_hist_slot_width(slot);

	for (int i = 0; i < SNAP_RQ_BUCKETS; i++)
		if (upper <= (1ULL << (SNAP_RQ_FIRST_LOG + i)))
			return i;
	return -1; /* only in +Inf */
}

static void cum_add(struct cum *c, const struct cg_totals *d)
{
	c->oncpu += d->oncpu_ns;
	c->switches += d->nr_switch_in;
	c->waits += d->rq_wait_cnt;
	c->wait_ns += d->rq_wait_ns;
	for (__u32 s = 0; s < KQOS_HIST_SLOTS; s++) {
		int b = d->rq_hist[s] ? coarse_bucket(s) : -1;

		if (b >= 0)
			c->hist[b] += d->rq_hist[s];
	}
	for (int i = 0; i < KQOS_PMU_MAX; i++)
		c->pmu[i] += d->pmu_count[i];
}

static int cum_reserve(struct snapbuild *sb, size_t n)
{
	struct cum *a, *b;

	if (n <= sb->cum_cap)
		return 0;
	a = realloc(sb->cum, n * sizeof(*a));
	if (a)
		sb->cum = a;
	b = realloc(sb->cum_next, n * sizeof(*b));
	if (b)
		sb->cum_next = b;
	if (!a || !b)
		return -ENOMEM;
	sb->cum_cap = n;
	return 0;
}

/* Merge-join the previous cumulative table with this tick's deltas (both sorted by cgid). */
static int cum_update(struct snapbuild *sb, const struct snapbuild_input *in)
{
	size_t i = 0, j = 0;
	struct cum *t;

	if (cum_reserve(sb, in->ncur ? in->ncur : 1))
		return -ENOMEM;
	for (size_t k = 0; k < in->ncur; k++) {
		static const struct cg_totals zero;
		const struct cg_totals *p = &zero;
		struct cg_totals d;
		struct cum *c = &sb->cum_next[k];

		while (i < sb->ncum && sb->cum[i].cgid < in->cur[k].cgid)
			i++;
		while (j < in->nprev && in->prev[j].cgid < in->cur[k].cgid)
			j++;
		if (i < sb->ncum && sb->cum[i].cgid == in->cur[k].cgid)
			*c = sb->cum[i];
		else
			*c = (struct cum){ .cgid = in->cur[k].cgid };
		if (j < in->nprev && in->prev[j].cgid == in->cur[k].cgid)
			p = &in->prev[j];
		totals_delta(p, &in->cur[k], &d);
		cum_add(c, &d);
	}
	t = sb->cum;
	sb->cum = sb->cum_next;
	sb->cum_next = t;
	sb->ncum = in->ncur;
	return 0;
}

/* --- entities and their cgroups ------------------------------------------------------------ */

static int cmp_owner(const void *a, const void *b)
{
	return strcmp(((const struct owner *)a)->path, ((const struct owner *)b)->path);
}

static struct acc *find_owner(const struct owner *v, size_t n, const char *path)
{
	struct owner key = { .path = path };
	const struct owner *o = bsearch(&key, v, n, sizeof(*v), cmp_owner);

	return o ? o->acc : NULL;
}

/* The entity owning @path: the deepest registered path that is @path or one of its parents. */
static struct acc *owner_of(const struct owner *v, size_t n, const char *path)
{
	char buf[PATH_MAX];
	struct acc *a;
	char *slash;

	snprintf(buf, sizeof(buf), "%s", path);
	for (;;) {
		a = find_owner(v, n, buf);
		if (a)
			return a;
		slash = strrchr(buf, '/');
		if (!slash || slash == buf)
			return NULL;
		*slash = '\0';
	}
}

static void acc_add(struct acc *a, const struct cg_totals *d, __u64 interval_max,
		    const struct cum *c, const double *pmu_per_s)
{
	a->any = true;
	a->d.oncpu_ns += d->oncpu_ns;
	a->d.nr_switch_in += d->nr_switch_in;
	a->d.rq_wait_cnt += d->rq_wait_cnt;
	a->d.rq_wait_ns += d->rq_wait_ns;
	if (interval_max > a->d.rq_wait_max_ns)
		a->d.rq_wait_max_ns = interval_max;
	for (int s = 0; s < KQOS_HIST_SLOTS; s++)
		a->d.rq_hist[s] += d->rq_hist[s];
	for (int i = 0; i < KQOS_PMU_MAX; i++) {
		a->d.pmu_count[i] += d->pmu_count[i];
		a->d.pmu_enabled[i] += d->pmu_enabled[i];
		a->d.pmu_running[i] += d->pmu_running[i];
		a->pmu_scaled_per_s[i] += pmu_per_s[i];
		a->c.pmu[i] += c->pmu[i];
	}
	a->c.oncpu += c->oncpu;
	a->c.switches += c->switches;
	a->c.waits += c->waits;
	a->c.wait_ns += c->wait_ns;
	for (int b = 0; b < SNAP_RQ_BUCKETS; b++)
		a->c.hist[b] += c->hist[b];
}

static void acc_finish(const struct acc *a, __u64 dt_ns, const struct snapshot *s,
		       struct snap_stats *st)
{
	__u64 run = 0;

	if (!a->any)
		return;
	st->has_cpu = true;
	st->cpu_cores = (double)a->d.oncpu_ns / (double)dt_ns;
	st->runs_per_s = (double)a->d.nr_switch_in * 1e9 / (double)dt_ns;
	st->rq_waits = a->d.rq_wait_cnt;
	if (a->d.rq_wait_cnt) {
		st->rq_wait_mean_ns = (double)a->d.rq_wait_ns / (double)a->d.rq_wait_cnt;
		st->rq_max_ns = a->d.rq_wait_max_ns;
		st->rq_p50_ns = hist_quantile(a->d.rq_hist, hist_total(a->d.rq_hist), 0.5);
		st->rq_p99_ns = hist_quantile(a->d.rq_hist, hist_total(a->d.rq_hist), 0.99);
		st->rq_p50_ns = st->rq_p50_ns < st->rq_max_ns ? st->rq_p50_ns : st->rq_max_ns;
		st->rq_p99_ns = st->rq_p99_ns < st->rq_max_ns ? st->rq_p99_ns : st->rq_max_ns;
	}
	st->cpu_ns_total = a->c.oncpu;
	st->rq_waits_total = a->c.waits;
	st->rq_wait_ns_total = a->c.wait_ns;
	for (int b = 0; b < SNAP_RQ_BUCKETS; b++) {
		run += a->c.hist[b];
		st->rq_hist_total[b] = run;
	}
	st->pmu_n = s->pmu_n;
	for (int i = 0; i < s->pmu_n; i++) {
		st->pmu_per_s[i] = a->pmu_scaled_per_s[i];
		/* untracked times (software events, never multiplexed) read as always running */
		st->pmu_running_ratio[i] =
			a->d.pmu_enabled[i] ?
				(double)a->d.pmu_running[i] / (double)a->d.pmu_enabled[i] :
				1;
		st->pmu_total[i] = a->c.pmu[i];
	}
	if (s->pmu_n) {
		struct cg_rate r = { 0 };

		memcpy(r.pmu_per_s, st->pmu_per_s, sizeof(r.pmu_per_s));
		st->has_cpi = !rate_cpi(&r, s->pmu, s->pmu_n, &st->cpi);
		st->has_mpki = !rate_mpki(&r, s->pmu, s->pmu_n, &st->llc_mpki);
	}
}

/* --- pods from the walk or the source --------------------------------------------------------- */

static void rescan(struct snapbuild *sb, __u64 now)
{
	struct cgwalk_result *res;

	if (sb->walk && now - sb->walk_ns < WALK_MIN_GAP_NS)
		return;
	if (cgwalk_scan(sb->hier.mount, &res))
		return;
	cgwalk_result__free(sb->walk);
	sb->walk = res;
	sb->walk_ns = now;
	sb->walk_gen++;
}

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
static struct pod_list *walk_pod_list(struct snapbuild *sb)
{
	struct pod_list *l;

	if (sb->walk_pods && sb->walk_pods_gen == sb->walk_gen)
		return sb->walk_pods;
	l = pod_list__new();
	if (!l)
		return sb->walk_pods;
	l->pods = calloc(sb->walk->nr_pods ? sb->walk->nr_pods : 1, sizeof(*l->pods));
	for (size_t i = 0; l->pods && i < sb->walk->nr_pods; i++) {
		if (pod_from_walk(&sb->walk->pods[i], &l->pods[l->nr_pods++]))
			break;
	}
	pod_list__free(sb->walk_pods);
	sb->walk_pods = l;
	sb->walk_pods_gen = sb->walk_gen;
	return l;
}

static struct pod_list *current_pods(struct snapbuild *sb)
{
	if (sb->src)
		return podsrc__list(sb->src);
	if (!strcmp(sb->src_kind, "cgroup") && sb->walk)
		return walk_pod_list(sb);
	return NULL;
}

static char *abs_path(const char *rel)
{
	char *p = NULL;

	if (asprintf(&p, "/%s", rel) < 0)
		return NULL;
	return p;
}

static void place_containers(const struct pod *pod, const struct cgwalk_pod *w, struct snap_pod *sp)
{
	sp->ctrs = calloc(pod->nr_containers ? pod->nr_containers : 1, sizeof(*sp->ctrs));
	if (!sp->ctrs)
		return;
	for (size_t i = 0; i < pod->nr_containers; i++) {
		const struct pod_container *c = &pod->containers[i];
		struct snap_container *sc = &sp->ctrs[sp->nr_ctrs++];

		sc->spec = c;
		snprintf(sc->name, sizeof(sc->name), "%s", c->name ? c->name : "");
		snprintf(sc->id, sizeof(sc->id), "%s", c->id ? c->id : "");
		for (size_t j = 0; w && c->id && j < w->nr_containers; j++)
			if (!strcmp(w->containers[j].id, c->id))
				sc->cgroup = abs_path(w->containers[j].path);
	}
}

static void place_pod(struct snapbuild *sb, const struct pod *pod, struct snap_pod *sp)
{
	const struct cgwalk_pod *w = NULL;

	sp->pod = pod;
	if (pod->is_static) {
		if (pod->nr_cgroups)
			sp->cgroup = strdup(pod->cgroups[0]);
		return;
	}
	if (sb->walk)
		w = cgwalk_result__find(sb->walk, pod->uid);
	if (w)
		sp->cgroup = abs_path(w->path);
	place_containers(pod, w, sp);
}

static void set_ids(struct snapbuild *sb, const char *rel, __u64 *ret)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s%s", sb->hier.mount, rel);
	if (cgid_of_path(path, ret))
		*ret = 0;
}

/* --- throttling ---------------------------------------------------------------------------- */

static const struct throttle_prev *thr_find(const struct snapbuild *sb, const char *path)
{
	for (size_t i = 0; i < sb->nthr; i++)
		if (!strcmp(sb->thr[i].path, path))
			return &sb->thr[i];
	return NULL;
}

static void read_throttle(struct snapbuild *sb, const char *rel, struct snap_stats *st,
			  struct throttle_prev *next, size_t *nnext)
{
	const struct throttle_prev *p;
	struct cg_cpu_stat cs;
	__u64 dp, dt;

	if (!sb->cgfs || !rel || cgroupfs__read_cpu_stat(sb->cgfs, rel, &cs))
		return;
	st->has_throttle = true;
	st->nr_periods = cs.nr_periods;
	st->nr_throttled = cs.nr_throttled;
	st->throttled_ns = cs.throttled_ns;
	p = thr_find(sb, rel);
	if (p && cs.nr_periods > p->periods) {
		dp = cs.nr_periods - p->periods;
		dt = cs.nr_throttled >= p->throttled ? cs.nr_throttled - p->throttled : 0;
		st->throttled_ratio = (double)dt / (double)dp;
	}
	next[*nnext] = (struct throttle_prev){ strdup(rel), cs.nr_periods, cs.nr_throttled };
	if (next[*nnext].path)
		(*nnext)++;
}

/* The CPUs the cgroup really runs on (cpuset's effective list), for kqos-top and the socket. */
static void read_cpuset(struct snapbuild *sb, const char *rel, char *buf, size_t len)
{
	struct cpumask m;

	buf[0] = '\0';
	if (!sb->cgfs || !rel || cgroupfs__read_cpuset(sb->cgfs, CG_KNOB_CPUSET_EFFECTIVE, rel, &m))
		return;
	if (cpulist_format(&m, buf, len) < 0)
		buf[0] = '\0';
}

static void throttle_all(struct snapbuild *sb, struct snapshot *s)
{
	size_t cap = 1, n = 0;
	struct throttle_prev *next;

	for (size_t i = 0; i < s->nr_pods; i++)
		cap += 1 + s->pods[i].nr_ctrs;
	next = calloc(cap, sizeof(*next));
	if (!next)
		return;
	for (size_t i = 0; i < s->nr_pods; i++) {
		struct snap_pod *p = &s->pods[i];

		read_throttle(sb, p->cgroup, &p->st, next, &n);
		read_cpuset(sb, p->cgroup, p->cpuset, sizeof(p->cpuset));
		for (size_t j = 0; j < p->nr_ctrs; j++) {
			read_throttle(sb, p->ctrs[j].cgroup, &p->ctrs[j].st, next, &n);
			read_cpuset(sb, p->ctrs[j].cgroup, p->ctrs[j].cpuset,
				    sizeof(p->ctrs[j].cpuset));
		}
	}
	free_throttle(sb);
	sb->thr = next;
	sb->nthr = n;
}

/* --- node ------------------------------------------------------------------------------------ */

static void node_cpu(struct snapbuild *sb, __u64 dt_ns, struct snap_node *n)
{
	unsigned long long v[8] = { 0 };
	char path[PATH_MAX + 16];
	__u64 busy, total;
	FILE *f;

	snprintf(path, sizeof(path), "%s/stat", sb->cfg.proc_root);
	f = fopen(path, "re");
	if (!f)
		return;
	/* user nice system idle iowait irq softirq steal */
	if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		   &v[4], &v[5], &v[6], &v[7]) != 8) {
		fclose(f);
		return;
	}
	fclose(f);
	busy = v[0] + v[1] + v[2] + v[5] + v[6];
	total = busy + v[3] + v[4] + v[7];
	if (sb->has_stat && busy >= sb->stat_busy && dt_ns) {
		n->has_cpu_usage = true;
		n->cpu_cores_used = (double)(busy - sb->stat_busy) / (double)sysconf(_SC_CLK_TCK) /
				    ((double)dt_ns / 1e9);
	}
	sb->stat_busy = busy;
	sb->stat_total = total;
	sb->has_stat = true;
}

static void node_memory(struct snapbuild *sb, struct snap_node *n)
{
	unsigned long long total = 0, avail = 0, v;
	char path[PATH_MAX + 16], key[64];
	FILE *f;

	snprintf(path, sizeof(path), "%s/meminfo", sb->cfg.proc_root);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%63s %llu kB\n", key, &v) == 2) {
		if (!strcmp(key, "MemTotal:"))
			total = v;
		else if (!strcmp(key, "MemAvailable:"))
			avail = v;
	}
	fclose(f);
	if (!total)
		return;
	n->has_memory = true;
	n->mem_total_bytes = total * 1024;
	n->mem_used_bytes = (total - (avail < total ? avail : total)) * 1024;
}

static bool dir_exists(const char *mount, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s%s", mount, rel) >= (int)sizeof(path))
		return false;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

static void kubepods_dirs(struct snapbuild *sb, struct snap_node *n)
{
	/* Nested kubelet roots (kind) are found through a walked pod's parents instead. */
	for (size_t i = 0; sb->walk && i < sb->walk->nr_pods; i++) {
		const struct cgwalk_pod *w = &sb->walk->pods[i];
		char parent[PATH_MAX], *slash;

		snprintf(parent, sizeof(parent), "/%s", w->path);
		slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			continue;
		*slash = '\0';
		if (w->qos == CGWALK_QOS_GUARANTEED && strlen(parent) < sizeof(n->kubepods)) {
			memcpy(n->kubepods, parent, strlen(parent) + 1);
			break;
		}
	}
	if (!*n->kubepods && dir_exists(sb->hier.mount, "/kubepods.slice"))
		snprintf(n->kubepods, sizeof(n->kubepods), "/kubepods.slice");
	else if (!*n->kubepods && dir_exists(sb->hier.mount, "/kubepods"))
		snprintf(n->kubepods, sizeof(n->kubepods), "/kubepods");
	if (!*n->kubepods)
		return;
	if (strstr(n->kubepods, ".slice")) {
		char stem[128];
		const char *base = strrchr(n->kubepods, '/') + 1;

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

static void load_cpumgr(struct snapbuild *sb, __u64 now)
{
	char path[PATH_MAX + 32];
	struct cpumgr_state *st = NULL;
	struct stat sta;

	if (now - sb->cpumgr_checked_ns < CPUMGR_CHECK_NS && sb->cpumgr_checked_ns)
		return;
	sb->cpumgr_checked_ns = now;
	snprintf(path, sizeof(path), "%s/cpu_manager_state", sb->cfg.pods.kubelet_root);
	if (stat(path, &sta) || sta.st_mtime == sb->cpumgr_mtime)
		return;
	sb->cpumgr_mtime = sta.st_mtime;
	if (cpumgr_state__load(path, &st))
		return; /* logged; keep the last good state */
	cpumgr_state__free(sb->cpumgr);
	sb->cpumgr = st;
}

static void build_node(struct snapbuild *sb, const struct snapbuild_input *in, struct snapshot *s)
{
	struct snap_node *n = &s->node;

	n->topo = sb->topo;
	n->nr_cpus = sb->topo ? (unsigned int)sb->topo->nr_cpus :
				(unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	n->cpumgr = sb->cpumgr;
	node_cpu(sb, in->dt_ns, n);
	node_memory(sb, n);
	kubepods_dirs(sb, n);
}

/* --- assembling ------------------------------------------------------------------------------ */

static int add_owner(struct owner *v, size_t *n, const char *path, struct acc *a)
{
	if (!path)
		return 0;
	v[(*n)++] = (struct owner){ .path = path, .acc = a };
	return 0;
}

struct build_ctx {
	struct owner *owners;
	size_t nowners;
	struct acc *pod_acc; /* one per pod */
	struct acc *ctr_acc; /* one per container slot, pods' containers back to back */
	size_t *ctr_base; /* index of pod i's first container in ctr_acc */
};

static int index_entities(struct snapshot *s, struct build_ctx *b)
{
	size_t nctr = 0, cap = 1;

	for (size_t i = 0; i < s->nr_pods; i++) {
		nctr += s->pods[i].nr_ctrs;
		cap += 1 + s->pods[i].nr_ctrs + s->pods[i].pod->nr_cgroups;
	}
	b->owners = calloc(cap, sizeof(*b->owners));
	b->pod_acc = calloc(s->nr_pods + 1, sizeof(*b->pod_acc));
	b->ctr_acc = calloc(nctr + 1, sizeof(*b->ctr_acc));
	b->ctr_base = calloc(s->nr_pods + 1, sizeof(*b->ctr_base));
	if (!b->owners || !b->pod_acc || !b->ctr_acc || !b->ctr_base)
		return -ENOMEM;
	nctr = 0;
	for (size_t i = 0; i < s->nr_pods; i++) {
		const struct snap_pod *p = &s->pods[i];

		b->ctr_base[i] = nctr;
		if (p->pod->is_static)
			for (size_t k = 0; k < p->pod->nr_cgroups; k++)
				add_owner(b->owners, &b->nowners, p->pod->cgroups[k],
					  &b->pod_acc[i]);
		else
			add_owner(b->owners, &b->nowners, p->cgroup, &b->pod_acc[i]);
		for (size_t j = 0; j < p->nr_ctrs; j++, nctr++)
			add_owner(b->owners, &b->nowners, p->ctrs[j].cgroup, &b->ctr_acc[nctr]);
	}
	qsort(b->owners, b->nowners, sizeof(*b->owners), cmp_owner);
	return 0;
}

static void free_ctx(struct build_ctx *b)
{
	free(b->owners);
	free(b->pod_acc);
	free(b->ctr_acc);
	free(b->ctr_base);
}

/* A container's cgroups count for its pod too. */
static void fold_containers(struct snapshot *s, struct build_ctx *b, size_t i)
{
	for (size_t j = 0; j < s->pods[i].nr_ctrs; j++) {
		const struct acc *c = &b->ctr_acc[b->ctr_base[i] + j];

		if (c->any)
			acc_add(&b->pod_acc[i], &c->d, c->d.rq_wait_max_ns, &c->c,
				c->pmu_scaled_per_s);
	}
}

static int add_other(struct snapshot *s, size_t cap, const char *path, __u64 cgid, struct acc *a,
		     __u64 dt)
{
	struct snap_other *o;

	if (s->nr_others == cap)
		return 0;
	o = &s->others[s->nr_others];
	o->cgroup = strdup(path);
	if (!o->cgroup)
		return -ENOMEM;
	o->cgid = cgid;
	acc_finish(a, dt, s, &o->st);
	s->nr_others++;
	return 0;
}

static const struct cum *cum_find(const struct snapbuild *sb, __u64 cgid)
{
	size_t lo = 0, hi = sb->ncum;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (sb->cum[mid].cgid < cgid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sb->ncum && sb->cum[lo].cgid == cgid ? &sb->cum[lo] : NULL;
}

/* Charge each cgroup the collector knows to its owner, or list it as an "other" if it ran. */
static void distribute(struct snapbuild *sb, const struct snapbuild_input *in, struct snapshot *s,
		       struct build_ctx *b)
{
	size_t j = 0;

	s->others = calloc(in->ncur + 1, sizeof(*s->others));
	for (size_t k = 0; k < in->ncur; k++) {
		static const struct cg_totals zero;
		const struct cg_totals *p = &zero;
		const struct cum *c = cum_find(sb, in->cur[k].cgid);
		double pmu_per_s[KQOS_PMU_MAX];
		struct cg_totals d;
		const char *path;
		struct acc *a, one;
		__u64 max;

		while (j < in->nprev && in->prev[j].cgid < in->cur[k].cgid)
			j++;
		if (j < in->nprev && in->prev[j].cgid == in->cur[k].cgid)
			p = &in->prev[j];
		if (!c || cgid_index__path(in->ids, in->cur[k].cgid, &path))
			continue;
		totals_delta(p, &in->cur[k], &d);
		max = d.rq_wait_cnt ? totals_interval_max(p == &zero ? NULL : p, &in->cur[k], &d) :
				      0;
		totals_pmu_per_s(&d, in->dt_ns, pmu_per_s);
		a = owner_of(b->owners, b->nowners, path);
		if (a) {
			acc_add(a, &d, max, c, pmu_per_s);
			continue;
		}
		if (!d.oncpu_ns && !d.nr_switch_in)
			continue;
		memset(&one, 0, sizeof(one));
		acc_add(&one, &d, max, c, pmu_per_s);
		if (s->others)
			add_other(s, in->ncur, path, in->cur[k].cgid, &one, in->dt_ns);
	}
}

static void finish_entities(struct snapshot *s, struct build_ctx *b, __u64 dt)
{
	for (size_t i = 0; i < s->nr_pods; i++) {
		struct snap_pod *p = &s->pods[i];

		for (size_t j = 0; j < p->nr_ctrs; j++)
			acc_finish(&b->ctr_acc[b->ctr_base[i] + j], dt, s, &p->ctrs[j].st);
		fold_containers(s, b, i);
		acc_finish(&b->pod_acc[i], dt, s, &p->st);
		s->classes[p->pod->qos].pods++;
		s->classes[p->pod->qos].cpu_cores += p->st.has_cpu ? p->st.cpu_cores : 0;
	}
}

static int build_pods(struct snapbuild *sb, struct snapshot *s)
{
	struct pod_list *l = current_pods(sb);

	if (!l)
		return 0;
	s->pods_list = pod_list__ref(l);
	s->pods = calloc(l->nr_pods ? l->nr_pods : 1, sizeof(*s->pods));
	if (!s->pods)
		return -ENOMEM;
	for (size_t i = 0; i < l->nr_pods; i++) {
		struct snap_pod *sp = &s->pods[s->nr_pods++];

		place_pod(sb, &l->pods[i], sp);
		if (sp->cgroup)
			set_ids(sb, sp->cgroup, &sp->cgid);
		for (size_t j = 0; j < sp->nr_ctrs; j++)
			if (sp->ctrs[j].cgroup)
				set_ids(sb, sp->ctrs[j].cgroup, &sp->ctrs[j].cgid);
	}
	return 0;
}

static void fill_meta(struct snapbuild *sb, const struct snapbuild_input *in, struct snapshot *s)
{
	s->seq = ++sb->seq;
	s->mono_ns = in->mono_ns;
	s->wall_ns = in->wall_ns;
	s->interval_s = in->dt_ns / 1e9;
	snprintf(s->hierarchy, sizeof(s->hierarchy), "%s", sb->hier.name);
	snprintf(s->mount, sizeof(s->mount), "%s", sb->hier.mount);
	snprintf(s->pod_source, sizeof(s->pod_source), "%s", sb->src_kind);
	s->pods_stale = sb->src && podsrc__is_stale(sb->src);
	s->dropped_switches = in->dropped;
	s->pmu_n = collector__pmu_count(in->col);
	for (int i = 0; i < s->pmu_n; i++)
		s->pmu[i] = *collector__pmu_event(in->col, i);
}

struct snapshot *snapbuild__build(struct snapbuild *sb, const struct snapbuild_input *in)
{
	struct snapshot *s = snapshot__new();
	struct build_ctx b = { 0 };

	if (!s)
		return NULL;
	fill_meta(sb, in, s);
	rescan(sb, in->mono_ns);
	load_cpumgr(sb, in->mono_ns);
	build_node(sb, in, s);
	if (cum_update(sb, in) || build_pods(sb, s) || index_entities(s, &b)) {
		free_ctx(&b);
		snapshot__free(s);
		return NULL;
	}
	distribute(sb, in, s, &b);
	finish_entities(s, &b, in->dt_ns);
	free_ctx(&b);
	throttle_all(sb, s);
	return s;
}
