// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cgfiles.h"
#include "cgwalk.h"
#include "cputopo.h"
#include "host.h"
#include "log.h"
#include "nodestat.h"

#define NSEC_PER_SEC	1000000000ULL
#define WALK_MIN_GAP_NS NSEC_PER_SEC /* cgroup events rescan at most once a second */
#define CPUMGR_CHECK_NS NSEC_PER_SEC /* a stat(2) a second; kubelet rewrites it on pod changes */

struct host {
	char mount[PATH_MAX];
	char proc_root[PATH_MAX];
	struct cgroupfs *cgfs; /* NULL: no throttling or cpuset figures */
	struct cgid_index *ids;
	struct topology *topo; /* NULL when sysfs could not be read */
	unsigned int nr_online;
	struct cpumgr_watch *cpumgr;
	struct podsrc *src;
	struct nodestat_files node_files;
	struct node_stat node; /* as last read: memory on the stat cadence */
	uint64_t meminfo_ns;
	bool pods_from_walk;
	struct cgwalk_result *walk;
	uint64_t walk_ns;
	unsigned long walk_gen; /* rescans done */
	bool walk_stale; /* cgroups changed since: rescan at the next read */
	uint64_t walk_every_ns; /* full rescan even without events (a lost one, a foreign root) */
	struct cgfiles files;
	unsigned long files_walk_gen; /* the rescan the file list was made from */
	unsigned long pods_gen, files_pods_gen; /* pod lists seen, and the one the list is from */
	unsigned long files_gen; /* lists made: the snapshot's layout follows it */
	uint64_t files_ns, files_every_ns; /* last read of the files, and the cadence */
	uint64_t files_all_ns; /* last read of every file (on the walk's cadence) */
	bool pod_memory; /* pods' memory.stat on the stat cadence, not only the slow one */
	bool has_root_cpus;
	struct cpumask root_cpus; /* the cpuset root's effective CPUs, as last read */
	uint64_t root_cpus_ns;
	char kubepods[128];
};

static void open_readers(struct host *h, const struct host_opts *o)
{
	struct cpumask online;
	int err;

	err = cgroupfs__open(o->cgroup_root, CGFS_MODE_AUTO, &h->cgfs);
	if (err) {
		log_warn("cgroup stat files unavailable, no throttling figures", "root=%s err=%d",
			 o->cgroup_root, err);
		h->cgfs = NULL;
	}
	err = topology__load(o->sys_root, &h->topo);
	if (err) {
		log_warn("CPU topology unavailable", "sys_root=%s err=%d", o->sys_root, err);
		h->topo = NULL;
	}
	h->nr_online = !cputopo_read_online(o->sys_root, &online) ? cpumask_count(&online) : 0;
}

int host__new(const struct host_opts *o, struct host **ret)
{
	struct host *h = calloc(1, sizeof(*h));
	int err;

	if (!h) {
		podsrc__free(o->src);
		return -ENOMEM;
	}
	h->node_files = (struct nodestat_files)NODESTAT_FILES_INIT;
	h->src = o->src;
	h->pods_from_walk = o->pods_from_walk;
	snprintf(h->mount, sizeof(h->mount), "%s", o->mount);
	snprintf(h->proc_root, sizeof(h->proc_root), "%s", o->proc_root);
	host__set_cadence(h, o->walk_interval_ns, o->stat_interval_ns);
	err = cgid_index__new(o->mount, &h->ids);
	if (err) {
		log_err("cannot open the cgroup hierarchy", "mount=%s err=%d", o->mount, err);
		goto err;
	}
	err = cpumgr_watch__new(o->cpu_manager_state, CPUMGR_CHECK_NS, &h->cpumgr);
	if (err)
		goto err;
	open_readers(h, o);
	*ret = h;
	return 0;
err:
	host__free(h);
	return err;
}

void host__free(struct host *h)
{
	if (!h)
		return;
	cgfiles_fini(&h->files);
	nodestat_files_close(&h->node_files);
	cgwalk_result__free(h->walk);
	podsrc__free(h->src);
	cpumgr_watch__free(h->cpumgr);
	topology__free(h->topo);
	cgid_index__free(h->ids);
	cgroupfs__free(h->cgfs);
	free(h);
}

void host__set_cadence(struct host *h, uint64_t walk_ns, uint64_t stat_ns)
{
	h->walk_every_ns = walk_ns ? walk_ns : HOST_WALK_DEFAULT_NS;
	h->files_every_ns = stat_ns ? stat_ns : HOST_STAT_DEFAULT_NS;
}

void host__set_pod_memory(struct host *h, bool on)
{
	h->pod_memory = on;
}

void host__poll_pods(struct host *h, uint64_t now_ns)
{
	if (h->src && podsrc__poll(h->src, now_ns) > 0)
		h->pods_gen++;
}

int host__cgid_of(const struct host *h, const char *rel, uint64_t *ret)
{
	char path[PATH_MAX];
	__u64 id;
	int err;

	if (snprintf(path, sizeof(path), "%s%s", h->mount, rel) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	err = cgid_of_path(path, &id);
	if (!err)
		*ret = id;
	return err;
}

void host__rewalk(struct host *h)
{
	h->walk_stale = true;
}

void host__invalidate(struct host *h)
{
	host__rewalk(h);
	if (h->src)
		podsrc__poll_now(h->src);
}

void host__read_node(struct host *h, struct node_stat *ret)
{
	nodestat_read(h->proc_root, &h->node_files, NODESTAT_ALL, ret);
}

struct cgid_index *host__ids(struct host *h)
{
	return h->ids;
}

static void rescan(struct host *h, uint64_t now)
{
	struct cgwalk_result *res;
	uint64_t age = now - h->walk_ns;

	/*
	 * The walk was a third of the agent's time at 1000 cgroups: now mkdir/rmdir events below
	 * the roots ask for it, and the slow rescan catches what no event reported.
	 */
	bool asked = h->walk_stale;

	if (h->walk && (asked ? age < WALK_MIN_GAP_NS : age < h->walk_every_ns))
		return;
	h->walk_stale = false;
	if (cgwalk_scan(h->mount, &res))
		return;
	/*
	 * The slow rescan mostly finds what the events already told: the same tree keeps its
	 * generation, so the file list keeps its resolved ids (2000 path lookups at 1000 pods).
	 * An event's rescan always starts a new one: a cgroup may be new under an old name.
	 */
	if (!asked && h->walk && cgwalk_result__same(h->walk, res)) {
		cgwalk_result__free(res);
		h->walk_ns = now;
		return;
	}
	cgwalk_result__free(h->walk);
	h->walk = res;
	h->walk_ns = now;
	h->walk_gen++;
}

static bool dir_exists(const char *mount, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s%s", mount, rel) >= (int)sizeof(path))
		return false;
	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* The Kubernetes QoS root: a Guaranteed pod's parent (nested kubelet roots such as kind's), or
 * the driver's default name when the walk found none. */
static void find_kubepods(struct host *h)
{
	h->kubepods[0] = '\0';
	for (size_t i = 0; h->walk && i < h->walk->nr_pods; i++) {
		const struct cgwalk_pod *w = &h->walk->pods[i];
		char parent[PATH_MAX], *slash;

		snprintf(parent, sizeof(parent), "/%s", w->path);
		slash = strrchr(parent, '/');
		if (!slash || slash == parent)
			continue;
		*slash = '\0';
		if (w->qos == CGWALK_QOS_GUARANTEED && strlen(parent) < sizeof(h->kubepods)) {
			memcpy(h->kubepods, parent, strlen(parent) + 1);
			return;
		}
	}
	if (dir_exists(h->mount, "/kubepods.slice"))
		snprintf(h->kubepods, sizeof(h->kubepods), "/kubepods.slice");
	else if (dir_exists(h->mount, "/kubepods"))
		snprintf(h->kubepods, sizeof(h->kubepods), "/kubepods");
}

/* @cgs are sorted by id: one walk of the index, not a search per cgroup per tick. */
static void resolve(struct host *h, struct cg_delta *cgs, size_t n)
{
	size_t cursor = 0;

	for (size_t i = 0; i < n; i++)
		if (cgid_index__path_next(h->ids, cgs[i].d.cgid, &cursor, &cgs[i].path))
			cgs[i].path = NULL;
}

/* /proc/stat every tick (node CPU feeds BE suppression), meminfo as pods' memory.stat is. */
static void read_node(struct host *h, uint64_t now_ns)
{
	unsigned int what = NODESTAT_CPU;

	if (!h->meminfo_ns || now_ns - h->meminfo_ns >= h->files_every_ns) {
		what |= NODESTAT_MEMORY;
		h->meminfo_ns = now_ns;
	}
	nodestat_read(h->proc_root, &h->node_files, what, &h->node);
}

/* The files of pods' cgroups on their own cadences; a cgroup new to the list is read at once. */
static void read_files(struct host *h, uint64_t now_ns, const struct pod_list *pods)
{
	unsigned int what = 0;

	if (h->files_walk_gen != h->walk_gen || h->files_pods_gen != h->pods_gen || !h->files_ns)
		what |= CGFILES_PATHS;
	if (now_ns - h->files_ns >= h->files_every_ns)
		what |= CGFILES_VALUES | (h->pod_memory ? CGFILES_MEMORY : 0);
	if (!h->files_all_ns || now_ns - h->files_all_ns >= h->walk_every_ns)
		what |= CGFILES_ALL;
	if (!what)
		return;
	if (what & CGFILES_PATHS)
		h->files_gen++;
	if (cgfiles_read(&h->files, h->cgfs, h->mount, h->walk, pods, what, now_ns))
		log_warn("cgroup stat files: no memory for a new list, keeping the last", "err=%d",
			 -ENOMEM);
	h->files_walk_gen = h->walk_gen;
	h->files_pods_gen = h->pods_gen;
	if (what & (CGFILES_VALUES | CGFILES_ALL))
		h->files_ns = now_ns;
	if (what & CGFILES_ALL)
		h->files_all_ns = now_ns;
}

/* The root's effective CPUs change with hotplug only: read on the stat cadence, not a tick. */
static void read_root_cpus(struct host *h, uint64_t now_ns)
{
	if (h->root_cpus_ns && now_ns - h->root_cpus_ns < h->files_every_ns)
		return;
	h->has_root_cpus = h->cgfs && !cgroupfs__read_cpuset(h->cgfs, CG_KNOB_CPUSET_EFFECTIVE, "/",
							     &h->root_cpus);
	h->root_cpus_ns = now_ns;
}

void host__read(struct host *h, uint64_t now_ns, struct snapbuild_input *in, struct cg_delta *cgs,
		size_t nr_cgs)
{
	struct pod_list *pods = h->src ? podsrc__list(h->src) : NULL;

	rescan(h, now_ns);
	find_kubepods(h);
	resolve(h, cgs, nr_cgs);
	read_files(h, now_ns, pods);
	read_node(h, now_ns);
	in->node = h->node;
	in->pods = pods;
	in->pods_from_walk = h->pods_from_walk;
	in->pods_stale = h->src && podsrc__is_stale(h->src);
	in->walk = h->walk;
	in->walk_gen = h->walk_gen;
	in->files = h->files.v;
	in->nr_files = h->files.n;
	in->files_gen = h->files_gen;
	in->topo = h->topo;
	in->nr_online = h->nr_online;
	in->cpumgr = cpumgr_watch__poll(h->cpumgr, now_ns);
	in->kubepods = h->kubepods;
	read_root_cpus(h, now_ns);
	in->has_root_cpus = h->has_root_cpus;
	in->root_cpus = h->root_cpus;
	in->cgs = cgs;
	in->nr_cgs = nr_cgs;
}
