/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_SOAK_H
#define KQOS_TESTS_SOAK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/*
 * The churn soak (bench/soakload.c, tests/live/test_soak_kqosd.c): a load that creates and
 * destroys cgroups with short-lived tasks in them, and what is measured of a running kqosd
 * from outside it (/proc, its BPF maps by id, its socket, its journal). No Criterion here:
 * the bench links this file alone.
 */

/* --- kqosd seen from outside --- */

#define SOAK_MAX_MAPS 32

/* One BPF hash map a process holds, found through /proc/<pid>/fdinfo (map_id, map_type). */
struct soak_map {
	__u32 id;
	__u32 type;
	__u32 max_entries;
	__u32 key_size;
	char name[16]; /* for the table only: maps are matched by id */
	long entries; /* keys counted with bpf_map_get_next_key(), or -errno */
	long stale; /* soak_maps_stale(): keys naming no cgroup; -1 not counted */
};

/*
 * Every hash-type map (hash, per-CPU hash, LRU, hash of maps) @pid holds, at most @cap,
 * sorted by id, with its keys counted. Keys deleted during the count can make the kernel
 * restart the walk, so a count taken during churn may overstate; a quiet map counts exact.
 * 0 or -errno.
 */
int soak_maps(pid_t pid, struct soak_map *maps, size_t cap, size_t *ret_n);
/*
 * For each map of @maps with 8-byte keys, count in ->stale the keys that, taken as cgroup ids
 * of the hierarchy mounted at @mount, name no cgroup (open_by_handle_at() says ESTALE): the
 * entries of removed cgroups, whatever else comes and goes on the host. A map keyed by
 * something else shows nearly all its keys stale. 0 or -errno.
 */
int soak_maps_stale(const char *mount, struct soak_map *maps, size_t n);
/* Open fds of @pid (entries of /proc/<pid>/fd), or -errno. */
long soak_fds(pid_t pid);
/* What each open fd of @pid points to, one per line (readlink), into @buf; 0 or -errno. */
int soak_fd_list(pid_t pid, char *buf, size_t len);
/* VmRSS of @pid in KiB, or -errno. */
long soak_rss_kb(pid_t pid);
/* utime + stime of @pid in clock ticks (sysconf(_SC_CLK_TCK)), or -errno. */
long soak_cpu_ticks(pid_t pid);

/* The journal's lines that name cgroups, and those whose cgroup no longer exists. */
struct soak_journal {
	size_t lines; /* knob lines */
	size_t ours; /* of them, below /<prefix>/ */
	size_t gone; /* of them, naming a cgroup that is not in the knob's hierarchy */
	char first_gone[256]; /* "knob cgroup" of the first gone line */
};

/*
 * Read @path (stateDir/journal; absent = empty) and check each line's cgroup in the knob's
 * controller under @cg_root (cpuset for cpuset, memory for memory_max, cpu otherwise). 0 or
 * -errno.
 */
int soak_journal_check(const char *path, const char *cg_root, const char *prefix,
		       struct soak_journal *ret);

/* A client that asks @sock for a snapshot every period and times each answer. */
struct soak_probe;

struct soak_probe_stats {
	size_t reads; /* answered with a snapshot line */
	size_t errors; /* connect, send or read failed, or an error answer */
	__u64 max_us;
	__u64 p99_us;
	__u64 last_max_us; /* the slowest read since the last call */
	char last_error[96];
};

/* Start the client thread; 0 or -errno. */
int soak_probe__new(const char *sock, unsigned int period_ms, struct soak_probe **ret);
void soak_probe__stats(struct soak_probe *p, struct soak_probe_stats *ret);
/* Stop the thread and free; NULL is a no-op. */
void soak_probe__free(struct soak_probe *p);

/* --- the churn --- */

struct soak_churn_opts {
	const char *cg_root; /* "/sys/fs/cgroup" */
	const char *top; /* dir created in each controller, e.g. kqos-test-<pid>-soak */
	const char *pods_file; /* PodList rewritten as pods come and go; NULL = no pods */
	unsigned int total; /* cgroups created and destroyed in all */
	unsigned int duration_ms;
	unsigned int live; /* how many exist at once */
};

/*
 * The churned cgroups, one in five of each kind: plain (<top>/cg-N), a bare-metal LS glob
 * match (<top>/ls-N), a BE glob match (<top>/be-N), a BE pod with batch-cpu
 * (<top>/kubepods/besteffort/pod<uid>/<cid>) and an LS pod (.../burstable/...). Each is made
 * in cpu, cpuacct and the unified tree (so v2 ids churn too), glob matches and pods also in
 * cpuset, pods in memory. A task runs in each from its mkdir, a second from half its life;
 * both are gone before its rmdir. No Guaranteed pod dir is made: it would tell every kqosd on
 * this host (other tests') that <top>/kubepods is a kubelet root.
 */
struct soak_churn;

struct soak_churn_stats {
	unsigned int created, destroyed, live, tasks, pod_writes;
	unsigned int errors; /* mkdir, attach or rmdir that failed (rmdir after retries) */
	unsigned int create_ms_max, destroy_ms_max; /* the slowest of each */
	char last_error[256];
};

/* Make <top> and the kubepods dirs in every controller, and an empty PodList; 0 or -errno. */
int soak_churn__new(const struct soak_churn_opts *o, struct soak_churn **ret);
/* Create and destroy what is due at @now_ms since start (0 = the first call); 1 while churning,
 * 0 once every cgroup was created and destroyed. */
int soak_churn__step(struct soak_churn *c, __u64 now_ms);
void soak_churn__stats(const struct soak_churn *c, struct soak_churn_stats *ret);
/* Kill every task, remove every dir (<top> too) and the PodList; NULL is a no-op. */
void soak_churn__free(struct soak_churn *c);

/* CLOCK_MONOTONIC in ms. */
__u64 soak_now_ms(void);

#endif
