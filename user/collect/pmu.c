// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <perfmon/pfmlib_perf_event.h>

#include "cpulist.h"
#include "log.h"
#include "cputopo.h"
#include "pmu.h"

#define MAX_CPUS CPUMASK_MAX_CPUS

struct pmu_set {
	int n;
	struct pmu_event_cfg ev[KQOS_PMU_MAX];
	struct perf_event_attr attr[KQOS_PMU_MAX];
	int ncpus;
	int *fd; /* [event * ncpus + cpu], -1 where not open */
	const char *sys_root; /* the caller's, outlives the set */
	unsigned char online[MAX_CPUS];
	uint64_t enabled[MAX_CPUS]; /* event 0's enabled time at the last refresh */
	uint64_t checked_ns[MAX_CPUS]; /* CLOCK_MONOTONIC of that reading */
};

/*
 * libpfm4 only turns event names into perf attributes, at start and on a reload; linked in,
 * its relocated tables stayed resident (2.4 MB, a tenth of the agent's RSS at 1000 pods).
 * Loaded on the first name, unloaded by pmu_unload_names() once the events are open.
 */
static struct pfm_lib {
	void *dl;
	int state; /* 0 not tried, 1 ready, negative errno */
	typeof(pfm_initialize) *initialize;
	typeof(pfm_terminate) *terminate;
	typeof(pfm_strerror) *strerror;
	typeof(pfm_get_pmu_info) *get_pmu_info;
	typeof(pfm_get_event_next) *get_event_next;
	typeof(pfm_get_event_info) *get_event_info;
	typeof(pfm_get_os_event_encoding) *get_os_event_encoding;
} pfm;

static int pfm_bind(void)
{
	const struct {
		void **slot;
		const char *name;
	} syms[] = {
		{ (void **)&pfm.initialize, "pfm_initialize" },
		{ (void **)&pfm.terminate, "pfm_terminate" },
		{ (void **)&pfm.strerror, "pfm_strerror" },
		{ (void **)&pfm.get_pmu_info, "pfm_get_pmu_info" },
		{ (void **)&pfm.get_event_next, "pfm_get_event_next" },
		{ (void **)&pfm.get_event_info, "pfm_get_event_info" },
		{ (void **)&pfm.get_os_event_encoding, "pfm_get_os_event_encoding" },
	};

	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(pfm.dl, syms[i].name);
		if (!*syms[i].slot)
			return -ENOSYS;
	}
	return pfm.initialize() == PFM_SUCCESS ? 0 : -ENODEV;
}

static int pfm_ready(void)
{
	int err;

	if (pfm.state)
		return pfm.state < 0 ? pfm.state : 0;
	pfm.dl = dlopen(PMU_LIBPFM, RTLD_NOW | RTLD_LOCAL);
	if (!pfm.dl) {
		pfm.state = -ENOENT;
		return pfm.state;
	}
	err = pfm_bind();
	if (err) {
		dlclose(pfm.dl);
		pfm = (struct pfm_lib){ .state = err };
		return err;
	}
	pfm.state = 1;
	return 0;
}

void pmu_unload_names(void)
{
	if (pfm.state == 1) {
		pfm.terminate();
		dlclose(pfm.dl);
	}
	pfm = (struct pfm_lib){ 0 };
}

/* Names of the generic perf events libpfm4 knows, for an error message. */
static void list_generic(char *buf, size_t len)
{
	pfm_pmu_info_t pinfo = { .size = sizeof(pinfo) };
	size_t used = 0;
	int idx;

	buf[0] = '\0';
	if (pfm.get_pmu_info(PFM_PMU_PERF_EVENT, &pinfo) != PFM_SUCCESS)
		return;
	for (idx = pinfo.first_event; idx >= 0 && used + 40 < len; idx = pfm.get_event_next(idx)) {
		pfm_event_info_t info = { .size = sizeof(info) };

		if (pfm.get_event_info(idx, PFM_OS_PERF_EVENT, &info) != PFM_SUCCESS)
			continue;
		used += snprintf(buf + used, len - used, "%s%s", used ? ", " : "", info.name);
	}
}

static int encode_one(const char *name, struct perf_event_attr *attr)
{
	pfm_perf_encode_arg_t arg = { .attr = attr, .size = sizeof(arg) };

	memset(attr, 0, sizeof(*attr));
	return pfm.get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
}

int pmu_encode(const char *name, struct perf_event_attr *attr, char *err, size_t err_len)
{
	char alt[PMU_NAME_LEN], choices[1024];
	struct perf_event_attr scratch;
	int ret;

	if (!attr)
		attr = &scratch;
	ret = pfm_ready();
	if (ret) {
		snprintf(err, err_len, "libpfm4 (%s) %s", PMU_LIBPFM,
			 ret == -ENODEV ? "failed to initialise" : "could not be loaded");
		return -ENODEV;
	}
	ret = encode_one(name, attr);
	/* Intel's documentation writes INST_RETIRED.ANY; libpfm4 spells it INST_RETIRED:ANY. */
	if (ret == PFM_ERR_NOTFOUND && strchr(name, '.') && strlen(name) < sizeof(alt)) {
		snprintf(alt, sizeof(alt), "%s", name);
		for (char *p = alt; *p; p++)
			*p = *p == '.' ? ':' : *p;
		ret = encode_one(alt, attr);
	}
	if (ret == PFM_SUCCESS) {
		attr->size = sizeof(*attr);
		attr->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
		attr->disabled = 0;
		attr->inherit = 0;
		return 0;
	}
	list_generic(choices, sizeof(choices));
	snprintf(err, err_len,
		 "unknown PMU event '%s' (%s); generic events: %s; or a name of the host PMU as "
		 "listed by libpfm4's showevtinfo",
		 name, pfm.strerror(ret), choices);
	return -ENOENT;
}

static int read_online(const struct pmu_set *s, unsigned char *online)
{
	struct cpumask m;
	int err = cputopo_read_online(s->sys_root, &m);

	if (err)
		return err;
	for (int c = 0; c < MAX_CPUS; c++)
		online[c] = cpumask_test(&m, c);
	return 0;
}

static int perf_open(struct perf_event_attr *attr, int cpu)
{
	int fd = syscall(SYS_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* Open event @i on every online CPU; returns how many CPUs have it, or the first error. */
static int open_event(struct pmu_set *s, int i)
{
	int opened = 0, err = 0;

	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		int fd;

		if (!s->online[cpu])
			continue;
		fd = perf_open(&s->attr[i], cpu);
		if (fd < 0) {
			err = err ? err : fd;
			continue;
		}
		s->fd[i * s->ncpus + cpu] = fd;
		opened++;
	}
	return opened ? opened : err;
}

static void close_event(struct pmu_set *s, int i)
{
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		int *fd = &s->fd[i * s->ncpus + cpu];

		if (*fd >= 0)
			close(*fd);
		*fd = -1;
	}
}

static int alloc_set(const char *sys_root, struct pmu_set **ret)
{
	struct pmu_set *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->sys_root = sys_root;
	/* Possible, not online: a CPU that comes online later needs its slot in the maps. */
	s->ncpus = libbpf_num_possible_cpus();
	err = s->ncpus > 0 && s->ncpus <= MAX_CPUS ? read_online(s, s->online) : -ERANGE;
	if (err) {
		free(s);
		return err;
	}
	s->fd = malloc(sizeof(*s->fd) * KQOS_PMU_MAX * MAX_CPUS);
	if (!s->fd) {
		free(s);
		return -ENOMEM;
	}
	memset(s->fd, -1, sizeof(*s->fd) * KQOS_PMU_MAX * MAX_CPUS);
	*ret = s;
	return 0;
}

/* Keep event @i if it opened; returns 1 if kept, else appends its name to @dropped. */
static int try_event(struct pmu_set *s, const struct pmu_event_cfg *ev, char *dropped, size_t len)
{
	int i = s->n, r;

	s->ev[i] = *ev;
	r = open_event(s, i);
	if (r > 0) {
		s->n++;
		return 1;
	}
	close_event(s, i);
	snprintf(dropped + strlen(dropped), len - strlen(dropped), "%s%s (%s)",
		 *dropped ? ", " : "", ev->name, strerror(-r));
	return 0;
}

int pmu_set__open(const struct pmu_event_cfg *ev, int n, const char *sys_root, struct pmu_set **ret)
{
	char err[1400], dropped[512] = "";
	struct pmu_set *s;
	int rc;

	if (n > KQOS_PMU_MAX)
		return -E2BIG;
	rc = alloc_set(sys_root, &s);
	if (rc)
		return rc;
	for (int i = 0; i < n; i++) {
		rc = pmu_encode(ev[i].name, &s->attr[s->n], err, sizeof(err));
		if (rc) {
			log_err("bad PMU event in config", "detail=\"%s\"", err);
			pmu_set__free(s);
			return rc;
		}
		try_event(s, &ev[i], dropped, sizeof(dropped));
	}
	if (*dropped)
		log_warn("PMU events unavailable on this host, their metrics are absent",
			 "events=\"%s\"", dropped);
	*ret = s;
	return 0;
}

void pmu_set__free(struct pmu_set *s)
{
	if (!s)
		return;
	for (int i = 0; i < KQOS_PMU_MAX; i++)
		close_event(s, i);
	free(s->fd);
	free(s);
}

int pmu_set__count(const struct pmu_set *s)
{
	return s ? s->n : 0;
}

const struct pmu_event_cfg *pmu_set__event(const struct pmu_set *s, int i)
{
	return i >= 0 && i < s->n ? &s->ev[i] : NULL;
}

bool pmu_set__needs_times(const struct pmu_set *s, int i)
{
	return i >= 0 && i < s->n && s->attr[i].type != PERF_TYPE_SOFTWARE;
}

int pmu_set__install(struct pmu_set *s, int i, int map_fd)
{
	for (__u32 cpu = 0; cpu < (__u32)s->ncpus; cpu++) {
		int fd = s->fd[i * s->ncpus + cpu];

		if (fd >= 0 && bpf_map_update_elem(map_fd, &cpu, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

static int refresh_cpu(struct pmu_set *s, __u32 cpu, const int *map_fds)
{
	s->enabled[cpu] = s->checked_ns[cpu] = 0;
	for (int i = 0; i < s->n; i++) {
		int *slot = &s->fd[i * s->ncpus + cpu];
		int fd;

		if (*slot >= 0)
			close(*slot);
		*slot = -1;
		fd = perf_open(&s->attr[i], cpu);
		if (fd < 0)
			return fd;
		*slot = fd;
		if (bpf_map_update_elem(map_fds[i], &cpu, &fd, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * Whether the events of @cpu stopped: a CPU that went offline and came back between two
 * refreshes looks unchanged in the online mask, but its old events were torn down with it.
 * A live per-CPU event's enabled time keeps pace with the clock; one that fell behind by more
 * than a tenth of the time since the last look was off for a while.
 */
bool pmu_enabled_fell_behind(uint64_t *last_enabled, uint64_t *last_ns, uint64_t enabled)
{
	struct timespec ts;
	uint64_t now, elapsed;
	bool behind;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	elapsed = now - *last_ns;
	behind = *last_ns && enabled - *last_enabled < elapsed - elapsed / 10;
	*last_enabled = enabled;
	*last_ns = now;
	return behind;
}

static bool events_stalled(struct pmu_set *s, int cpu)
{
	uint64_t v[3];
	int fd = s->fd[cpu];

	/* A slot left empty by a failed re-open is retried too. */
	for (int i = 0; i < s->n; i++)
		if (s->fd[i * s->ncpus + cpu] < 0)
			return true;
	if (read(fd, v, sizeof(v)) != sizeof(v))
		return true;
	return pmu_enabled_fell_behind(&s->enabled[cpu], &s->checked_ns[cpu], v[1]);
}

int pmu_set__refresh(struct pmu_set *s, const int *map_fds)
{
	unsigned char now[MAX_CPUS];
	int changed = 0, err;

	if (!s || !s->n)
		return 0;
	err = read_online(s, now);
	if (err)
		return err;
	for (int cpu = 0; cpu < s->ncpus; cpu++) {
		if (now[cpu] == s->online[cpu] && !(now[cpu] && events_stalled(s, cpu)))
			continue;
		changed++;
		s->online[cpu] = now[cpu];
		/* An event of a CPU that went away is dead; one that came back needs a new fd. */
		if (now[cpu] && (err = refresh_cpu(s, cpu, map_fds)))
			log_warn("re-opening PMU events failed", "cpu=%d err=%d", cpu, err);
	}
	if (changed)
		log_info("CPU hotplug seen, PMU events updated", "changed_cpus=%d", changed);
	return changed;
}
