// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "agent.h"
#include "caps.h"
#include "cgroupfs.h"
#include "collector.h"
#include "enforce.h"
#include "events.h"
#include "evictor.h"
#include "export.h"
#include "host.h"
#include "log.h"
#include "nodeslo.h"
#include "pmu.h"
#include "podsrc.h"
#include "react.h"
#include "rdtmon.h"
#include "report.h"
#include "sample.h"
#include "slo.h"
#include "snapbuild.h"
#include "stages.h"
#include "window.h"

_Static_assert(CG_MODE_AUTO == (int)CG_IDS_AUTO && CG_MODE_V1 == (int)CG_IDS_V1_CPU &&
		       CG_MODE_V2 == (int)CG_IDS_V2,
	       "cgroupMode names the id trees");

enum { EV_TIMER = 1, EV_SIGNAL, EV_RINGBUF, EV_EXPORT, EV_SOON, EV_DEADLINE, EV_RDT };

/* The first tick comes this soon after start: decide and apply without waiting an interval. */
#define FIRST_TICK_NS 100000000ULL
/* Ticks that cgroup events ask for come no closer than this to the one before. */
#define MIN_TICK_GAP_NS 20000000ULL

/* A cgroup's CPU time at the last reap. */
struct reap_mark {
	__u64 cgid;
	__u64 oncpu_ns;
};

struct agent {
	struct kqos_opts *opts;
	struct kqos_config cfg;
	struct cgroupfs *cgfs; /* hierarchy detection */
	enum cg_ids ids_kind;
	const char *mount; /* the collector's hierarchy, borrowed from cgfs */
	struct collector *col;
	struct host *host;
	struct snapbuild *sb;
	struct exporter *exp;
	struct rdtmon *rdt; /* NULL without resctrl */
	struct enforcer *enf; /* NULL with --once (monitoring only) */
	struct window *win; /* metric history for the strategies; with enf */
	struct evictor *ev; /* the only place that evicts; with enf */
	struct nodeslo *nslo; /* nodeSLO.source "apiserver"; NULL otherwise */
	struct reactor *react; /* the event path */
	struct snapshot *snap; /* the latest */
	struct snap_enforce enforce; /* what enforcement did in the latest tick */
	const char *src_kind;
	int epfd, tfd, sfd;
	int rdt_tfd; /* the resctrl reconcile between ticks; -1 when off */
	size_t cap;
	struct cg_totals *prev, *cur;
	struct cg_delta *deltas;
	size_t nprev;
	struct reap_mark *marks, *marks_next; /* sorted by cgid; marks_cap each */
	size_t nmarks, marks_cap;
	__u64 prev_ns, last_reap_ns;
	__u64 last_hist_ns; /* when every histogram was last read */
	/* what the heap was last trimmed after: a walk, a file list, a pod list */
	unsigned long trim_walk_gen, trim_files_gen;
	const void *trim_pods;
	__u64 last_trim_ns;
	__u64 events_lost; /* ring buffer records lost so far, in the kernel and here */
	/* the roots the reactor hears mkdirs below, found again only when the walk changes */
	uint64_t root_ids[CONFIG_MAX_GROUPS + 1];
	size_t nroots;
	unsigned long roots_walk_gen;
	char roots_kubepods[128];
	bool has_roots;
	struct agent_stages stages; /* the agent's own cost, per stage of the tick */
	bool stop;
};

static __u64 clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int arm_timer(struct agent *a, __u64 first_ns)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = a->cfg.interval_ns / 1000000000ULL;
	its.it_interval.tv_nsec = a->cfg.interval_ns % 1000000000ULL;
	its.it_value.tv_sec = first_ns / 1000000000ULL;
	its.it_value.tv_nsec = first_ns % 1000000000ULL;
	return timerfd_settime(a->tfd, 0, &its, NULL) ? -errno : 0;
}

static int watch(struct agent *a, int fd, __u64 tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * resctrl placement is rescanned on the resctrl cadence, not only on the tick: a lost attach
 * event then costs at most one resctrl interval.
 */
static int arm_rdt_reconcile(struct agent *a)
{
	struct itimerspec its = { 0 };

	if (!a->enf || !a->rdt || !a->cfg.resctrl.reconcile || a->opts->once)
		return 0;
	a->rdt_tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (a->rdt_tfd < 0)
		return -errno;
	its.it_interval.tv_sec = a->cfg.resctrl.interval_ns / 1000000000ULL;
	its.it_interval.tv_nsec = a->cfg.resctrl.interval_ns % 1000000000ULL;
	its.it_value = its.it_interval;
	if (timerfd_settime(a->rdt_tfd, 0, &its, NULL))
		return -errno;
	return watch(a, a->rdt_tfd, EV_RDT);
}

static int setup_loop(struct agent *a)
{
	sigset_t mask;
	int err;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	/* A client that goes away mid-write must not kill the agent. */
	signal(SIGPIPE, SIG_IGN);
	if (sigprocmask(SIG_BLOCK, &mask, NULL))
		return -errno;
	a->sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	a->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	a->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (a->sfd < 0 || a->tfd < 0 || a->epfd < 0)
		return -errno;
	err = watch(a, a->sfd, EV_SIGNAL);
	if (!err)
		err = watch(a, a->tfd, EV_TIMER);
	if (!err)
		err = watch(a, kevents__epoll_fd(collector__kevents(a->col)), EV_RINGBUF);
	if (!err && a->exp && exporter__epoll_fd(a->exp) >= 0)
		err = watch(a, exporter__epoll_fd(a->exp), EV_EXPORT);
	if (!err)
		err = watch(a, reactor__soon_fd(a->react), EV_SOON);
	if (!err)
		err = watch(a, reactor__deadline_fd(a->react), EV_DEADLINE);
	if (!err)
		err = arm_rdt_reconcile(a);
	/* --once samples one full interval; the daemon decides as soon as it can */
	if (!err)
		err = arm_timer(a, a->opts->once || a->cfg.interval_ns < FIRST_TICK_NS ?
					   a->cfg.interval_ns :
					   FIRST_TICK_NS);
	return err;
}

static int alloc_buffers(struct agent *a)
{
	/* Sized once from the map capacity: reading the maps never allocates. */
	a->cap = collector__capacity(a->col);
	a->prev = calloc(a->cap, sizeof(*a->prev));
	a->cur = calloc(a->cap, sizeof(*a->cur));
	a->deltas = calloc(a->cap, sizeof(*a->deltas));
	return a->prev && a->cur && a->deltas ? 0 : -ENOMEM;
}

static int open_collector(struct agent *a)
{
	struct collector_opts copts = {
		.max_cgroups = a->cfg.collector.max_cgroups,
		.counter_slots = a->cfg.collector.counter_slots,
		.cgroup_mode = a->ids_kind == CG_IDS_V2 ? KQOS_CG_MODE_V2 : KQOS_CG_MODE_V1_CPU,
		.sys_root = a->cfg.sys_root,
	};
	struct pmu_event_cfg pmu[KQOS_PMU_MAX];
	int hier = 0;

	/* cgroup events come from every hierarchy: the kernel keeps those of the id tree */
	if (a->ids_kind == CG_IDS_V1_CPU && cg_v1_hierarchy_id(a->cfg.proc_root, "cpu", &hier))
		log_warn("cpu hierarchy id unknown: no cgroup mkdir events, new cgroups wait for "
			 "the walk",
			 "proc_root=%s", a->cfg.proc_root);
	copts.hierarchy_id = hier;
	copts.pmu_events = pmu;
	copts.pmu_n = config_pmu_events(&a->cfg, pmu);
	return collector__open(&copts, &a->col);
}

static int open_exporter(struct agent *a)
{
	struct export_opts o = {
		.textfile_dir = a->cfg.export.textfile_dir,
		.textfile_interval_ns = a->cfg.export.textfile_interval_ns,
		/* --once prints and exits: no socket for kqos-top to find. */
		.socket_path = a->opts->once ? NULL : a->cfg.export.socket,
		.socket_group = a->cfg.export.socket_group,
		/* three missed ticks, and a second of slack for a slow textfile write */
		.health_max_age_ns = 3 * a->cfg.interval_ns + 1000000000ULL,
	};

	int err = exporter__new(&o, &a->exp);

	if (!err)
		exporter__set_stages(a->exp, &a->stages);
	return err;
}

static void open_resctrl(struct agent *a)
{
	int err = rdtmon__new(a->cfg.resctrl.root, a->cfg.resctrl.interval_ns, NULL, &a->rdt);

	if (err == -ENOENT)
		log_info(
			"resctrl is not mounted: LLC and memory bandwidth monitoring and control are "
			"off",
			"root=%s", a->cfg.resctrl.root);
	else if (err)
		log_warn(
			"resctrl unusable: LLC and memory bandwidth monitoring and control are off",
			"root=%s err=%d", a->cfg.resctrl.root, err);
}

static const char *json_or_null(const char *s)
{
	return *s ? s : NULL;
}

static int open_enforcer(struct agent *a)
{
	struct enforce_opts o = {
		.cgroup_root = a->cfg.cgroup_root,
		.state_dir = a->cfg.state_dir,
		.dry_run = a->cfg.dry_run,
		.policy_json = json_or_null(a->cfg.node_slo_json),
		.kqos_json = json_or_null(a->cfg.strategies_json),
		.resctrl_root = a->rdt ? a->cfg.resctrl.root : NULL,
		.rdt_no_reconcile = !a->cfg.resctrl.reconcile,
	};

	/* --once samples and exits: it never changes (and so never restores) anything. */
	if (a->opts->once)
		return 0;
	return enforcer__new(&o, &a->enf);
}

/*
 * History for the longest window a strategy asks for: BECPUEvict/CPUEvict's, 10 s for the CPU
 * burst share pool, two intervals for "last" values. Only "last" values while no strategy
 * reads further back: at 100 ms the 10 s per pod were 10 MB of 1000 pods' RSS.
 */
static unsigned int window_cap(const struct agent *a)
{
	const struct slo_config *c = enforcer__config(a->enf);
	__u64 longest = 10 * 1000000000ULL;

	if (!enforcer__needs_history(a->enf))
		longest = 0;
	else if (c->evict.window_s > 0 && (__u64)c->evict.window_s * 1000000000ULL > longest)
		longest = (__u64)c->evict.window_s * 1000000000ULL;
	if (2 * a->cfg.interval_ns > longest)
		longest = 2 * a->cfg.interval_ns;
	return window_capacity(longest, a->cfg.interval_ns);
}

static int open_evictor(struct agent *a)
{
	struct evictor_group g[CONFIG_MAX_GROUPS];
	char freezer[PATH_MAX + 16], journal[PATH_MAX + 32];
	const struct kqos_config *c = &a->cfg;
	struct evictor_opts o = {
		.dry_run = c->dry_run || c->eviction.dry_run,
		.api_url = json_or_null(c->eviction.api_server),
		.token_path = json_or_null(c->eviction.token_file),
		.ca_path = json_or_null(c->eviction.ca_file),
		.insecure_skip_verify = c->eviction.insecure_skip_verify,
		.timeout_ns = c->eviction.timeout_ns,
		.retry_ns = c->eviction.retry_ns,
		.kill_grace_ns = c->eviction.kill_grace_ns,
		.cgroup_mount = a->mount,
		.groups = g,
		.nr_groups = c->pods.nr_groups,
		.journal_path = journal,
	};
	int err;

	if (!a->enf)
		return 0;
	err = window__new(window_cap(a), &a->win);
	if (err)
		return err;
	for (__u32 i = 0; i < c->pods.nr_groups; i++)
		g[i] = (struct evictor_group){
			.name = c->pods.groups[i].name,
			.action = (enum evict_action)c->pods.groups[i].evict_action
		};
	/* v1: the freezer is its own hierarchy, where the groups' paths are the same */
	snprintf(freezer, sizeof(freezer), "%s/freezer", c->cgroup_root);
	if (a->ids_kind == CG_IDS_V1_CPU)
		o.freezer_mount = freezer;
	snprintf(journal, sizeof(journal), "%s/evictions.log", c->state_dir);
	o.cpu_cool_ns = enforcer__config(a->enf)->evict.cpu_cool_ns;
	o.memory_cool_ns = enforcer__config(a->enf)->evict.memory_cool_ns;
	return evictor__new(&o, &a->ev);
}

/* nodeSLO.source "apiserver": the cluster's NodeSLO replaces the file's nodeSLO spec. */
static int open_nodeslo(struct agent *a)
{
	struct nodeslo_opts o;
	char err[256];
	int r;

	if (!a->enf)
		return 0;
	r = nodeslo_opts_parse(a->cfg.node_slo_json, &o, err, sizeof(err));
	if (r) {
		log_err("invalid nodeSLO source", "err=\"%s\"", err);
		return r;
	}
	return o.apiserver ? nodeslo__new(&o, &a->nslo) : 0;
}

/* The spec in force: the API server's last good one, else the file's. */
static const char *policy_json(const struct agent *a, const struct kqos_config *c)
{
	const char *spec = a->nslo ? nodeslo__spec(a->nslo) : NULL;

	return spec ? spec : json_or_null(c->node_slo_json);
}

/* The file's strategies with the Node's annotations over them (caller frees), or NULL. */
static char *strategies_json(const struct agent *a, const struct kqos_config *c)
{
	const struct nodeslo_node *n = a->nslo ? nodeslo__node(a->nslo) : NULL;
	char *out = NULL;

	if (n && nodeslo_overlay(json_or_null(c->strategies_json), n, &out))
		log_warn("node annotations not applied", "err=%d", -ENOMEM);
	return out;
}

/* Apply a new NodeSLO exactly as a reload applies the file's nodeSLO. */
/* What the enabled strategies read decides how much history and which files are kept. */
static void follow_strategies(struct agent *a)
{
	host__set_pod_memory(a->host, enforcer__needs_pod_memory(a->enf));
	if (a->win && window__set_capacity(a->win, window_cap(a)))
		log_warn("metric window keeps its size: no memory for the new one", NULL);
}

static void poll_nodeslo(struct agent *a, __u64 now)
{
	char *strat;

	if (!a->nslo || nodeslo__poll(a->nslo, now) <= 0)
		return;
	strat = strategies_json(a, &a->cfg);
	if (enforcer__reconfigure(a->enf, policy_json(a, &a->cfg),
				  strat ? strat : json_or_null(a->cfg.strategies_json),
				  a->cfg.dry_run))
		log_err("NodeSLO from the API server not applied, keeping the running spec",
			"node=%s", nodeslo__node_name(a->nslo));
	else
		log_info("NodeSLO applied", "node=%s spec=%s", nodeslo__node_name(a->nslo),
			 nodeslo__spec(a->nslo));
	/* the spec may turn strategies on or off, or name a longer eviction window */
	follow_strategies(a);
	free(strat);
}

static void fill_nodeslo(const struct agent *a, struct snap_enforce *e)
{
	e->nodeslo.apiserver = a->nslo != NULL;
	if (!a->nslo)
		return;
	e->nodeslo.stale = nodeslo__stale(a->nslo);
	e->nodeslo.has_spec = nodeslo__spec(a->nslo) != NULL;
	e->nodeslo.updates = nodeslo__updates(a->nslo);
	e->nodeslo.failures = nodeslo__failures(a->nslo);
	snprintf(e->nodeslo.node, sizeof(e->nodeslo.node), "%s", nodeslo__node_name(a->nslo));
}

static int open_kubelet(const struct kqos_config *c, struct podsrc **ret)
{
	struct podsrc_kubelet_opts o = {
		.url = c->pods.kubelet.url,
		.token_path = *c->pods.kubelet.token_file ? c->pods.kubelet.token_file : NULL,
		.ca_path = *c->pods.kubelet.ca_file ? c->pods.kubelet.ca_file : NULL,
		.insecure_skip_verify = c->pods.kubelet.insecure_skip_verify,
		.timeout_ms = c->pods.kubelet.timeout_ns / 1000000,
		.interval_ms = c->pods.kubelet.interval_ns / 1000000,
		.max_bytes = c->pods.max_bytes,
		.max_pods = c->pods.max_pods,
	};

	return podsrc_kubelet__new(&o, ret);
}

static int open_static(const struct kqos_config *c, const char *mount, struct podsrc **ret)
{
	struct podsrc_static_group g[CONFIG_MAX_GROUPS];
	struct podsrc_static_opts o = { .groups = g,
					.nr_groups = c->pods.nr_groups,
					.cgroup_root = mount };

	for (__u32 i = 0; i < c->pods.nr_groups; i++) {
		g[i].name = c->pods.groups[i].name;
		g[i].cgroup = c->pods.groups[i].cgroup;
		g[i].qos_class = c->pods.groups[i].qos_class;
		g[i].wait_target_ns = c->pods.groups[i].wait_target_ns;
	}
	return podsrc_static__new(&o, ret);
}

static int open_file_source(const struct kqos_config *c, struct podsrc **ret)
{
	struct podsrc_file_opts o = { .path = c->pods.file.path,
				      .interval_ms = c->pods.file.interval_ns / 1000000,
				      .max_bytes = c->pods.max_bytes,
				      .max_pods = c->pods.max_pods };

	return podsrc_file__new(&o, ret);
}

/* In a pod with a service account the kubelet is the source; on a host, groups or the walk. */
static __u32 source_kind(const struct kqos_config *c)
{
	if (c->pods.source != POD_SOURCE_AUTO)
		return c->pods.source;
	if (!access(c->pods.kubelet.token_file, R_OK))
		return POD_SOURCE_KUBELET;
	return c->pods.nr_groups ? POD_SOURCE_STATIC : POD_SOURCE_CGROUP;
}

static int open_source(struct agent *a, struct podsrc **ret)
{
	*ret = NULL;
	switch (source_kind(&a->cfg)) {
	case POD_SOURCE_KUBELET:
		a->src_kind = "kubelet";
		return open_kubelet(&a->cfg, ret);
	case POD_SOURCE_FILE:
		a->src_kind = "file";
		return open_file_source(&a->cfg, ret);
	case POD_SOURCE_STATIC:
		a->src_kind = "static";
		return open_static(&a->cfg, a->mount, ret);
	case POD_SOURCE_NONE:
		a->src_kind = "none";
		return 0;
	default:
		a->src_kind = "cgroup";
		return 0;
	}
}

static int open_model(struct agent *a)
{
	struct host_opts ho = { .cgroup_root = a->cfg.cgroup_root,
				.mount = a->mount,
				.sys_root = a->cfg.sys_root,
				.proc_root = a->cfg.proc_root,
				.cpu_manager_state = a->cfg.cpu_manager_state,
				.walk_interval_ns = a->cfg.collector.walk_interval_ns,
				.stat_interval_ns = a->cfg.collector.stat_interval_ns };
	struct snapbuild_opts so = { .hierarchy = cg_ids_name(a->ids_kind), .mount = a->mount };
	int err = open_source(a, &ho.src);

	if (err) {
		/* -ELIBACC: libcurl is not installed, and the message says so */
		log_err("cannot start the pod source", "source=%s err=%d why=\"%s\"", a->src_kind,
			err, strerror(-err));
		return err;
	}
	log_info("pod source", "kind=%s", a->src_kind);
	ho.pods_from_walk = !strcmp(a->src_kind, "cgroup");
	err = host__new(&ho, &a->host);
	so.pod_source = a->src_kind;
	return err ? err : snapbuild__new(&so, &a->sb);
}

/* The one hierarchy detector (cgroupfs) says which tree the collector's ids come from. */
static int open_hierarchy(struct agent *a)
{
	int err = cgroupfs__open(a->cfg.cgroup_root, CGFS_MODE_AUTO, &a->cgfs);

	if (!err)
		err = cgroupfs__ids_tree(a->cgfs, (enum cg_ids)a->cfg.cgroup_mode, &a->ids_kind,
					 &a->mount);
	if (err)
		log_err("no usable cgroup hierarchy", "root=%s mode=%u err=%d", a->cfg.cgroup_root,
			a->cfg.cgroup_mode, err);
	return err;
}

/*
 * The agent reacts for LS while BE saturates the CPUs: with the same weight as BE it would
 * wait in the run queue itself (18 ms seen here before this). A failure is no reason to stop.
 */
static void set_nice(const struct agent *a)
{
	if (setpriority(PRIO_PROCESS, 0, a->cfg.nice))
		log_warn("cannot set the agent's nice value", "nice=%d err=%d", a->cfg.nice,
			 -errno);
}

/* Refuse to start short of a capability, naming it, rather than fail somewhere obscure later. */
static int check_caps(const struct agent *a)
{
	char missing[512];
	bool chown_socket;
	uint64_t eff;
	int err = caps_effective(&eff);

	if (err) {
		log_warn("cannot read this process's capabilities, not checked", "err=%d", err);
		return 0;
	}
	chown_socket = *a->cfg.export.socket && *a->cfg.export.socket_group;
	if (!caps_missing(eff, chown_socket, missing, sizeof(missing)))
		return 0;
	log_err("missing capabilities, not starting: grant them (securityContext.capabilities.add, "
		"AmbientCapabilities=) or run as root with all capabilities",
		"missing=\"%s\"", missing);
	return -EPERM;
}

static int start(struct agent *a)
{
	int err;

	err = check_caps(a);
	if (err)
		return err;
	set_nice(a);
	err = open_hierarchy(a);
	if (err)
		return err;
	open_resctrl(a);
	err = open_collector(a);
	pmu_unload_names(); /* the events are open: their names are not needed until a reload */
	if (!err)
		err = open_model(a);
	if (!err)
		err = open_enforcer(a);
	if (!err)
		host__set_pod_memory(a->host, enforcer__needs_pod_memory(a->enf));
	if (!err)
		err = open_evictor(a);
	if (!err)
		err = open_nodeslo(a);
	if (!err)
		err = open_exporter(a);
	if (!err)
		err = reactor__new(a->col, a->enf, &a->react);
	if (!err)
		err = alloc_buffers(a);
	if (!err)
		err = setup_loop(a);
	if (err)
		return err;
	log_info("kqosd started",
		 "version=%s hierarchy=%s mount=%s interval_ms=%llu dry_run=%d pmu_events=%d",
		 KQOS_VERSION, cg_ids_name(a->ids_kind), a->mount, a->cfg.interval_ns / 1000000ULL,
		 a->cfg.dry_run, collector__pmu_count(a->col));
	return 0;
}

static void stop(struct agent *a)
{
	/* Every value kqos changed goes back before the agent goes away. */
	if (a->enf && enforcer__restore(a->enf))
		log_err("restoring cgroup values failed, the journal keeps them for the next start",
			"state_dir=%s", a->cfg.state_dir);
	reactor__free(a->react);
	evictor__free(a->ev);
	window__free(a->win);
	nodeslo__free(a->nslo);
	enforcer__free(a->enf);
	snapshot__put(a->snap);
	exporter__free(a->exp);
	snapbuild__free(a->sb);
	host__free(a->host);
	rdtmon__free(a->rdt);
	free(a->deltas);
	free(a->marks);
	free(a->marks_next);
	free(a->cur);
	free(a->prev);
	collector__free(a->col);
	cgroupfs__free(a->cgfs);
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->tfd >= 0)
		close(a->tfd);
	if (a->rdt_tfd >= 0)
		close(a->rdt_tfd);
	if (a->sfd >= 0)
		close(a->sfd);
}

static int marks_reserve(struct agent *a, size_t n)
{
	struct reap_mark *m;

	if (n <= a->marks_cap)
		return 0;
	m = realloc(a->marks, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	a->marks = m;
	m = realloc(a->marks_next, n * sizeof(*m));
	if (!m)
		return -ENOMEM;
	a->marks_next = m;
	a->marks_cap = n;
	return 0;
}

/*
 * Whether a cgroup ran since the last reap, and so still exists (a removed cgroup holds no
 * task). One that is new since is not checked either: it is, with its CPU time frozen, at
 * the next reap. At 1000 busy pods this left 2000 handle lookups a reap to none.
 */
static bool ran_since(const struct agent *a, size_t *j, const struct cg_totals *t)
{
	while (*j < a->nmarks && a->marks[*j].cgid < t->cgid)
		(*j)++;
	return *j >= a->nmarks || a->marks[*j].cgid != t->cgid ||
	       a->marks[*j].oncpu_ns != t->oncpu_ns;
}

/*
 * Drop map entries of cgroups that were removed; their ids are never reused. A cgroup gone
 * without an event may have a namesake: the tree is walked again.
 */
static void reap(struct agent *a)
{
	bool marked = !marks_reserve(a, a->nprev ?: 1);
	size_t gone = 0, j = 0, n = 0;
	struct reap_mark *t;

	for (size_t i = 0; i < a->nprev; i++) {
		const struct cg_totals *c = &a->prev[i];

		if ((!marked || !ran_since(a, &j, c)) &&
		    cgid_index__check(host__ids(a->host), c->cgid) == -ESTALE) {
			collector__forget(a->col, c->cgid);
			gone++;
			continue;
		}
		if (marked)
			a->marks_next[n++] = (struct reap_mark){ c->cgid, c->oncpu_ns };
	}
	if (marked) {
		t = a->marks;
		a->marks = a->marks_next;
		a->marks_next = t;
	}
	a->nmarks = n;
	if (!gone)
		return;
	host__rewalk(a->host);
	log_dbg("reaped vanished cgroups", "count=%zu", gone);
}

static void publish(struct agent *a, struct snapshot *s, __u64 now)
{
	snapshot__put(a->snap);
	a->snap = s;
	if (a->exp)
		exporter__publish(a->exp, s, &a->enforce, now);
}

/* One tick's inputs: the maps' deltas, what the host shows, resctrl's last readings. */
static void gather(struct agent *a, __u64 now, size_t n, struct snapbuild_input *in)
{
	size_t nd = sample_deltas(a->prev, a->nprev, a->cur, n, now - a->prev_ns, a->deltas);

	*in = (struct snapbuild_input){ .dt_ns = now - a->prev_ns,
					.mono_ns = now,
					.wall_ns = clock_ns(CLOCK_REALTIME),
					.pmu_n = collector__pmu_count(a->col),
					.dropped = collector__dropped(a->col) };
	collector__event_stats(a->col, &in->events);
	collector__counter_src(a->col, &in->counters);
	in->pmu = in->pmu_n ? collector__pmu_event(a->col, 0) : NULL;
	host__poll_pods(a->host, now);
	host__read(a->host, now, in, a->deltas, nd);
	rdtmon__poll(a->rdt, now);
	if (a->rdt && rdtmon__copy(a->rdt, &in->rdt, &in->nr_rdt))
		log_warn("resctrl figures left out of the snapshot", "err=%d", -ENOMEM);
	in->rdt_enabled = a->rdt;
	rdtmon__ids(a->rdt, &in->rdt_ids);
}

/*
 * Where new cgroups matter at once: the kubepods dir and each bare-metal group's parent (the
 * dir part of its pattern before any glob character).
 */
static size_t roots(const struct agent *a, const struct snapshot *s, uint64_t *ids, size_t cap)
{
	size_t n = 0;

	if (*s->node.kubepods && n < cap && !host__cgid_of(a->host, s->node.kubepods, &ids[n]))
		n++;
	for (__u32 i = 0; i < a->cfg.pods.nr_groups && n < cap; i++) {
		const char *pat = a->cfg.pods.groups[i].cgroup;
		char dir[256], *cut;

		/* "be*" is "/be*": relative to the hierarchy, as the static source reads it */
		pat += strspn(pat, "/");
		snprintf(dir, sizeof(dir), "/%s", pat);
		dir[strcspn(dir, "*?[")] = '\0';
		cut = strrchr(dir, '/');
		cut[cut == dir] = '\0'; /* "/a*" -> "/", "/x/y" -> "/x" */
		if (!host__cgid_of(a->host, cut == dir ? "" : dir, &ids[n]))
			n++;
	}
	return n;
}

/*
 * A lost record may have been a cgroup's mkdir or rmdir: the tree is walked again (at most
 * once a second) rather than at the slow rescan, collector.walkInterval later.
 */
static void follow_lost_events(struct agent *a, const struct snap_events *ev)
{
	__u64 lost = ev->dropped + ev->queue_lost;

	if (lost == a->events_lost)
		return;
	a->events_lost = lost;
	host__rewalk(a->host);
}

/*
 * The roots' ids, kept while the walk and the kubepods dir stay: looked up every tick, they
 * were a name_to_handle_at() and a path walk per root per tick. A root not there yet (a
 * group's parent made later) is looked for again every tick until it is.
 */
static void find_roots(struct agent *a, const struct snapshot *s, unsigned long walk_gen)
{
	size_t cap = sizeof(a->root_ids) / sizeof(a->root_ids[0]);
	size_t want = (*s->node.kubepods ? 1 : 0) + a->cfg.pods.nr_groups;

	if (a->has_roots && a->roots_walk_gen == walk_gen &&
	    !strcmp(a->roots_kubepods, s->node.kubepods))
		return;
	a->nroots = roots(a, s, a->root_ids, cap);
	a->roots_walk_gen = walk_gen;
	snprintf(a->roots_kubepods, sizeof(a->roots_kubepods), "%s", s->node.kubepods);
	a->has_roots = a->nroots == (want < cap ? want : cap);
}

/* The event path follows each new snapshot: what to watch, and when to look again. */
static void after_build(struct agent *a, const struct snapshot *s, unsigned long walk_gen)
{
	find_roots(a, s, walk_gen);
	reactor__fill(a->react, &a->enforce);
	reactor__sync(a->react, s, a->root_ids, a->nroots);
	reactor__arm(a->react);
}

/* The window first (strategies read it), then the strategies, then the evictor on their asks. */
static void decide(struct agent *a, const struct snapshot *s)
{
	struct window_be be = { .has_be_cpus = a->enforce.has_be_cpus,
				.be_cpus = cpumask_count(&a->enforce.be_cpus),
				.has_be_quota = a->enforce.has_be_quota,
				.be_quota_us = a->enforce.be_quota_us };

	if (window__feed(a->win, s, &be))
		log_warn("metric window: no memory for a new pod's history", NULL);
	enforcer__set_inputs(a->enf, a->win, evictor__pending(a->ev));
	if (enforcer__tick(a->enf, s, &a->enforce))
		log_warn("enforcement tick failed", NULL);
	evictor__tick(a->ev, s, enforcer__evictions(a->enf), s->mono_ns, s->wall_ns);
	evictor__fill(a->ev, &a->enforce);
}

/* The loop's CPU time since *@t0 goes to @stage; *@t0 moves on to now. */
static void lap(struct agent *a, enum stage stage, __u64 *t0)
{
	__u64 t = clock_ns(CLOCK_THREAD_CPUTIME_ID);

	stages_add(&a->stages, stage, t - *t0);
	*t0 = t;
}

/* decide() timed as two stages: the enforcer times its own strategies, the rest is applying. */
static void decide_timed(struct agent *a, const struct snapshot *s, __u64 *t0)
{
	__u64 strategies_ns, t;

	decide(a, s);
	t = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	strategies_ns = enforcer__decide_ns(a->enf);
	if (strategies_ns > t - *t0)
		strategies_ns = t - *t0;
	stages_add(&a->stages, STAGE_DECIDE, strategies_ns);
	stages_add(&a->stages, STAGE_APPLY, t - *t0 - strategies_ns);
	*t0 = t;
}

/*
 * Every histogram on collector.histInterval, the watched ones every tick: at 1000 cgroups the
 * 1 KB per cgroup and CPU was most of what a tick copied from the kernel and summed.
 */
static bool hist_due(struct agent *a, __u64 now)
{
	if (now - a->last_hist_ns + a->cfg.interval_ns / 2 < a->cfg.collector.hist_interval_ns)
		return false;
	a->last_hist_ns = now;
	return true;
}

/*
 * A new pod list, walk or file list frees the old one's many small blocks, and glibc keeps
 * them: at 1000 pods 3.1 MB of the 22 MB anonymous RSS was free heap. Given back after such a
 * change, at most once a second (the trim walks the heap: about a ms).
 */
static void trim_heap(struct agent *a, const struct snapbuild_input *in, __u64 now)
{
	if (in->walk_gen == a->trim_walk_gen && in->files_gen == a->trim_files_gen &&
	    (const void *)in->pods == a->trim_pods)
		return;
	if (now - a->last_trim_ns < 1000000000ULL)
		return;
	a->trim_walk_gen = in->walk_gen;
	a->trim_files_gen = in->files_gen;
	a->trim_pods = in->pods;
	a->last_trim_ns = now;
	malloc_trim(0);
}

static void tick(struct agent *a)
{
	__u64 now = clock_ns(CLOCK_MONOTONIC), cpu0 = clock_ns(CLOCK_THREAD_CPUTIME_ID), t0 = cpu0;
	struct snapbuild_input in;
	struct cg_totals *tmp;
	struct snapshot *s;
	int n;

	n = collector__read(a->col, a->cur, a->cap, hist_due(a, now));
	if (n < 0) {
		log_warn("reading the collector maps failed", "err=%d", n);
		return;
	}
	gather(a, now, (size_t)n, &in);
	follow_lost_events(a, &in.events);
	lap(a, STAGE_COLLECT, &t0);
	s = snapbuild__build(a->sb, &in);
	lap(a, STAGE_BUILD, &t0);
	poll_nodeslo(a, now);
	/* Decide and apply on the snapshot before anyone else sees it; the result goes beside. */
	if (s && a->enf)
		decide_timed(a, s, &t0);
	fill_nodeslo(a, &a->enforce);
	if (s)
		after_build(a, s, in.walk_gen);
	if (s)
		publish(a, s, now);
	else
		log_warn("building the snapshot failed, keeping the last one", "err=%d", -ENOMEM);
	trim_heap(a, &in, now);
	lap(a, STAGE_EXPORT, &t0);
	stages_add(&a->stages, STAGE_TICK, t0 - cpu0);
	stages_add(&a->stages, STAGE_WALL, clock_ns(CLOCK_MONOTONIC) - now);
	tmp = a->prev;
	a->prev = a->cur;
	a->cur = tmp;
	a->nprev = n;
	a->prev_ns = now;
	if (now - a->last_reap_ns >= a->cfg.collector.reap_interval_ns) {
		reap(a);
		collector__pmu_refresh(a->col);
		a->last_reap_ns = now;
	}
	log_dbg("tick", "cgroups=%d pods=%zu", n, a->snap ? a->snap->nr_pods : 0);
}

static int print_once(struct agent *a)
{
	if (!a->snap)
		return -ENODATA;
	if (a->opts->format == OUT_JSON)
		return report_json(stdout, a->snap, &a->enforce);
	return report_text(stdout, a->snap);
}

/* The client is made at start: a reload keeps its source and API server keys. */
static bool nodeslo_source_changed(const struct kqos_config *run, const struct kqos_config *cfg)
{
	struct nodeslo_opts a, b;

	if (nodeslo_opts_parse(run->node_slo_json, &a, NULL, 0) ||
	    nodeslo_opts_parse(cfg->node_slo_json, &b, NULL, 0))
		return false; /* the reload's own check has said why */
	return memcmp(&a, &b, sizeof(a)) != 0;
}

/*
 * Keys read only at start: a reload that changes them keeps the running values and names them,
 * rather than saying "reloaded" while nothing changed.
 */
static void keep_start_only(const struct agent *a, struct kqos_config *cfg)
{
	const struct kqos_config *run = &a->cfg;
	char changed[256] = "";
	size_t n = 0;

#define KEEP(field, name)                                                                         \
	do {                                                                                      \
		if (memcmp(&cfg->field, &run->field, sizeof(run->field))) {                       \
			n += snprintf(changed + n, n < sizeof(changed) ? sizeof(changed) - n : 0, \
				      "%s%s", n ? "," : "", name);                                \
			memcpy(&cfg->field, &run->field, sizeof(run->field));                     \
		}                                                                                 \
	} while (0)
	KEEP(cgroup_root, "cgroupRoot");
	KEEP(cgroup_mode, "cgroupMode");
	KEEP(collector, "collector");
	KEEP(pmu, "pmu");
	KEEP(pods, "pods");
	KEEP(export, "export");
	KEEP(resctrl, "resctrl");
	KEEP(state_dir, "stateDir");
	KEEP(sys_root, "sysRoot");
	KEEP(proc_root, "procRoot");
	KEEP(eviction, "eviction");
#undef KEEP
	if (nodeslo_source_changed(run, cfg))
		n += snprintf(changed + n, n < sizeof(changed) ? sizeof(changed) - n : 0, "%s%s",
			      n ? "," : "", "nodeSLO.source,nodeSLO.apiserver");
	if (n)
		log_warn("these keys apply after a restart; running values kept", "keys=%s",
			 changed);
}

static void reload(struct agent *a)
{
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN], *strat;
	bool err_cfg;
	int bad;

	bad = opts_load_config(a->opts, &cfg, err, sizeof(err));
	pmu_unload_names(); /* the check of the PMU names loaded it */
	if (bad) {
		log_err("config reload failed, keeping the running config", "detail=\"%s\"", err);
		return;
	}
	keep_start_only(a, &cfg);
	strat = strategies_json(a, &cfg);
	/* with the API server as source, its spec stays in force over the file's */
	err_cfg = a->enf && enforcer__reconfigure(a->enf, policy_json(a, &cfg),
						  strat ? strat : json_or_null(cfg.strategies_json),
						  cfg.dry_run);
	free(strat);
	if (err_cfg) {
		log_err("strategy reload failed, keeping the running config", NULL);
		return;
	}
	a->cfg = cfg;
	evictor__set_dry_run(a->ev, cfg.dry_run || cfg.eviction.dry_run);
	follow_strategies(a);
	log_set_level(cfg.log_level);
	set_nice(a);
	host__set_cadence(a->host, cfg.collector.walk_interval_ns, cfg.collector.stat_interval_ns);
	/* a new config acts now, not one interval later */
	arm_timer(a, a->cfg.interval_ns);
	tick(a);
	log_info("config reloaded", "interval_ms=%llu log_level=%s", cfg.interval_ns / 1000000ULL,
		 log_level_name(cfg.log_level));
}

static void on_signal(struct agent *a)
{
	struct signalfd_siginfo si;

	while (read(a->sfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			reload(a);
			continue;
		}
		log_info("stopping", "signal=%s", strsignal(si.ssi_signo));
		a->stop = true;
	}
}

static int on_timer(struct agent *a)
{
	__u64 expirations;

	if (read(a->tfd, &expirations, sizeof(expirations)) != sizeof(expirations))
		return 0;
	tick(a);
	if (!a->opts->once)
		return 0;
	a->stop = true;
	return print_once(a);
}

/*
 * cgroups came or went below a root: place them now (walk, classify, apply). Ticks stay at
 * least MIN_TICK_GAP_NS apart, so a churn of cgroups cannot turn into a churn of ticks.
 */
static void on_soon(struct agent *a)
{
	__u64 since;

	if (!reactor__take_soon(a->react))
		return;
	since = clock_ns(CLOCK_MONOTONIC) - a->prev_ns;
	if (since < MIN_TICK_GAP_NS) {
		reactor__soon_in(a->react, MIN_TICK_GAP_NS - since);
		return;
	}
	host__invalidate(a->host);
	tick(a);
}

static int loop(struct agent *a)
{
	struct epoll_event evs[8];
	int err = 0;

	while (!a->stop && !err) {
		int n = epoll_wait(a->epfd, evs, 8, -1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		for (int i = 0; i < n && !err; i++) {
			if (evs[i].data.u64 == EV_SIGNAL)
				on_signal(a);
			else if (evs[i].data.u64 == EV_TIMER)
				err = on_timer(a);
			else if (evs[i].data.u64 == EV_RINGBUF)
				reactor__on_events(a->react, a->snap, &a->enforce);
			else if (evs[i].data.u64 == EV_SOON)
				on_soon(a);
			else if (evs[i].data.u64 == EV_DEADLINE &&
				 reactor__ack(reactor__deadline_fd(a->react)))
				reactor__on_deadline(a->react, a->snap, &a->enforce);
			else if (evs[i].data.u64 == EV_RDT && reactor__ack(a->rdt_tfd))
				enforcer__rdt_reconcile(a->enf, clock_ns(CLOCK_MONOTONIC));
			else if (evs[i].data.u64 == EV_EXPORT)
				exporter__dispatch(a->exp, clock_ns(CLOCK_MONOTONIC));
		}
	}
	return err;
}

/* Baseline reads, so that the first tick covers exactly one interval. */
static int baseline(struct agent *a)
{
	struct node_stat node;
	int n;

	host__read_node(a->host, &node);
	snapbuild__baseline(a->sb, &node);
	a->prev_ns = clock_ns(CLOCK_MONOTONIC);
	a->last_reap_ns = a->prev_ns;
	n = collector__read(a->col, a->prev, a->cap, true);
	a->nprev = n > 0 ? n : 0;
	a->last_hist_ns = a->prev_ns;
	return n < 0 ? n : 0;
}

/*
 * From the very start: a SIGTERM that comes while kqosd still starts (and may already have
 * written something) waits for the loop's signalfd, which restores, instead of killing it.
 */
static void block_signals(void)
{
	sigset_t mask;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
}

int agent_run(struct kqos_opts *opts)
{
	struct agent a = {
		.opts = opts, .cfg = opts->cfg, .epfd = -1, .tfd = -1, .sfd = -1, .rdt_tfd = -1
	};
	int err;

	log_set_level(a.cfg.log_level);
	log_bridge_libbpf();
	block_signals();
	err = start(&a);
	if (!err)
		err = baseline(&a);
	if (!err)
		err = loop(&a);
	stop(&a);
	return err;
}
