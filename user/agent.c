// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#include "agent.h"
#include "cgid.h"
#include "cgmode.h"
#include "collector.h"
#include "log.h"
#include "report.h"
#include "sample.h"

enum { EV_TIMER = 1, EV_SIGNAL, EV_RINGBUF };

struct agent {
	struct kqos_opts *opts;
	struct kqos_config cfg;
	struct cg_hier hier;
	struct collector *col;
	struct cgid_index *ids;
	int epfd, tfd, sfd;
	size_t cap;
	struct cg_totals *prev, *cur;
	size_t nprev;
	struct cg_rate *rates;
	struct cg_view *views;
	size_t nviews;
	__u64 prev_ns, last_reap_ns;
	bool stop;
};

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int arm_timer(struct agent *a)
{
	struct itimerspec its = { 0 };

	its.it_interval.tv_sec = a->cfg.interval_ns / 1000000000ULL;
	its.it_interval.tv_nsec = a->cfg.interval_ns % 1000000000ULL;
	its.it_value = its.it_interval;
	return timerfd_settime(a->tfd, 0, &its, NULL) ? -errno : 0;
}

static int watch(struct agent *a, int fd, __u64 tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(a->epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

static int setup_loop(struct agent *a)
{
	sigset_t mask;
	int err;

	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGHUP);
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
		err = watch(a, collector__events_fd(a->col), EV_RINGBUF);
	if (!err)
		err = arm_timer(a);
	return err;
}

static int alloc_buffers(struct agent *a)
{
	/* Sized once from the map capacity: the loop itself never allocates for samples. */
	a->cap = collector__capacity(a->col);
	a->prev = calloc(a->cap, sizeof(*a->prev));
	a->cur = calloc(a->cap, sizeof(*a->cur));
	a->rates = calloc(a->cap, sizeof(*a->rates));
	a->views = calloc(a->cap, sizeof(*a->views));
	return a->prev && a->cur && a->rates && a->views ? 0 : -ENOMEM;
}

static int start(struct agent *a)
{
	struct collector_opts copts = { .max_cgroups = a->cfg.collector.max_cgroups };
	struct pmu_event_cfg pmu[KQOS_PMU_MAX];
	int err;

	err = cg_hier_resolve(a->cfg.cgroup_root, a->cfg.cgroup_mode, &a->hier);
	if (err) {
		log_err("no usable cgroup hierarchy", "root=%s mode=%u err=%d", a->cfg.cgroup_root,
			a->cfg.cgroup_mode, err);
		return err;
	}
	copts.cgroup_mode = a->hier.bpf_mode;
	copts.pmu_events = pmu;
	copts.pmu_n = config_pmu_events(&a->cfg, pmu);
	err = cgid_index__new(a->hier.mount, &a->ids);
	if (err) {
		log_err("cannot open the cgroup hierarchy", "mount=%s err=%d", a->hier.mount, err);
		return err;
	}
	err = collector__open(&copts, &a->col);
	if (err)
		return err;
	err = alloc_buffers(a);
	if (!err)
		err = setup_loop(a);
	if (err)
		return err;
	log_info("kqosd started",
		 "version=%s hierarchy=%s mount=%s interval_ms=%llu dry_run=%d pmu_events=%d",
		 KQOS_VERSION, a->hier.name, a->hier.mount, a->cfg.interval_ns / 1000000ULL,
		 a->cfg.dry_run, collector__pmu_count(a->col));
	return 0;
}

static void stop(struct agent *a)
{
	free(a->views);
	free(a->rates);
	free(a->cur);
	free(a->prev);
	collector__free(a->col);
	cgid_index__free(a->ids);
	if (a->epfd >= 0)
		close(a->epfd);
	if (a->tfd >= 0)
		close(a->tfd);
	if (a->sfd >= 0)
		close(a->sfd);
}

/* Drop map entries of cgroups that were removed; their ids are never reused. */
static void reap(struct agent *a)
{
	size_t gone = 0;

	for (size_t i = 0; i < a->nprev; i++) {
		if (cgid_index__check(a->ids, a->prev[i].cgid) != -ESTALE)
			continue;
		collector__forget(a->col, a->prev[i].cgid);
		gone++;
	}
	if (gone)
		log_dbg("reaped vanished cgroups", "count=%zu", gone);
}

static void build_views(struct agent *a, size_t nrates)
{
	a->nviews = 0;
	for (size_t i = 0; i < nrates; i++) {
		const char *path;
		int err = cgid_index__path(a->ids, a->rates[i].cgid, &path);

		/* A cgroup that ran and vanished within the interval has no path left. */
		if (err)
			continue;
		a->views[a->nviews++] = (struct cg_view){ .path = path, .rate = a->rates[i] };
	}
}

static int tick(struct agent *a)
{
	__u64 now = now_ns();
	struct cg_totals *tmp;
	size_t nrates;
	int n;

	n = collector__read(a->col, a->cur, a->cap);
	if (n < 0) {
		log_warn("reading the collector maps failed", "err=%d", n);
		return 0;
	}
	nrates = sample_rates(a->prev, a->nprev, a->cur, n, now - a->prev_ns, a->rates, a->cap);
	build_views(a, nrates);
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
	log_dbg("tick", "cgroups=%d active=%zu", n, a->nviews);
	return 0;
}

static int print_once(struct agent *a)
{
	struct report_meta m = {
		.hierarchy = a->hier.name,
		.mount = a->hier.mount,
		.interval_s = a->cfg.interval_ns / 1e9,
		.dropped = collector__dropped(a->col),
		.pmu_n = collector__pmu_count(a->col),
	};

	for (int i = 0; i < m.pmu_n; i++)
		m.pmu[i] = collector__pmu_event(a->col, i);

	if (a->opts->format == OUT_JSON)
		return report_json(stdout, &m, a->views, a->nviews);
	return report_text(stdout, &m, a->views, a->nviews);
}

static void reload(struct agent *a)
{
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN];

	if (opts_load_config(a->opts, &cfg, err, sizeof(err))) {
		log_err("config reload failed, keeping the running config", "detail=\"%s\"", err);
		return;
	}
	if (strcmp(cfg.cgroup_root, a->cfg.cgroup_root) || cfg.cgroup_mode != a->cfg.cgroup_mode ||
	    cfg.collector.max_cgroups != a->cfg.collector.max_cgroups)
		log_warn("cgroupRoot, cgroupMode and collector.maxCgroups apply after a restart",
			 NULL);
	cfg.cgroup_mode = a->cfg.cgroup_mode;
	cfg.collector.max_cgroups = a->cfg.collector.max_cgroups;
	memcpy(cfg.cgroup_root, a->cfg.cgroup_root, sizeof(cfg.cgroup_root));
	a->cfg = cfg;
	log_set_level(cfg.log_level);
	arm_timer(a);
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
				collector__consume_events(a->col);
		}
	}
	return err;
}

int agent_run(struct kqos_opts *opts)
{
	struct agent a = { .opts = opts, .cfg = opts->cfg, .epfd = -1, .tfd = -1, .sfd = -1 };
	int err;

	log_set_level(a.cfg.log_level);
	log_bridge_libbpf();
	err = start(&a);
	if (!err) {
		/* Baseline read, so the first tick covers exactly one interval. */
		a.prev_ns = now_ns();
		a.last_reap_ns = a.prev_ns;
		err = collector__read(a.col, a.prev, a.cap);
		a.nprev = err > 0 ? err : 0;
		err = err < 0 ? err : loop(&a);
	}
	stop(&a);
	return err;
}
