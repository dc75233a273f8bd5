/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_CGROUP_CGROUPFS_H
#define KQOS_CGROUP_CGROUPFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgvalue.h"
#include "cpulist.h"

/*
 * cgroup access layer: one handle per cgroup mount root (default /sys/fs/cgroup), cgroup v1,
 * v2 or hybrid, with logical knobs mapped to per-version files in one table (cgroupfs.c).
 *
 * Paths: every `rel` argument is a cgroup path relative to the hierarchy root, e.g.
 * "kubepods/burstable/pod1234" ("" or "/" is the root cgroup; one leading '/' is tolerated so
 * /proc/<pid>/cgroup paths can be passed as they are). On v1 the layer picks the controller's
 * own mount directory (cpu, cpuacct, cpuset, memory, or a combined one like "cpu,cpuacct").
 * Unsafe paths (see cgpath_is_safe) -> -EINVAL.
 *
 * Errors: -errno of the failing call; parse errors -> -EINVAL; a v1 controller that is not
 * mounted -> -EOPNOTSUPP. After a failure cgroupfs__last_path() names the file involved so the
 * caller can log it. Not thread-safe: one handle per thread.
 *
 * Writes return 1 when the file was written, 0 when it already held the value (nothing
 * written), or -errno; callers test `< 0` for failure.
 */

enum cgfs_mode {
	CGFS_MODE_AUTO = 0, /* only as an argument to cgroupfs__open() */
	CGFS_MODE_V1,
	CGFS_MODE_V2,
	CGFS_MODE_HYBRID, /* v1 controllers plus a controller-less cgroup2 at <root>/unified */
};

enum cg_ctrl {
	CG_CTRL_CPU = 0,
	CG_CTRL_CPUACCT,
	CG_CTRL_CPUSET,
	CG_CTRL_MEMORY,
	CG_CTRL_NR,
};

/* Logical knobs; cgroupfs.c maps each to its v1 controller/file and its v2 file. */
enum cg_knob {
	CG_KNOB_CPU_QUOTA = 0, /* v1 cpu.cfs_quota_us | v2 cpu.max (first field) */
	CG_KNOB_CPU_PERIOD, /* v1 cpu.cfs_period_us | v2 cpu.max (second field) */
	CG_KNOB_CPU_SHARES, /* v1 cpu.shares | v2 cpu.weight */
	CG_KNOB_CPU_IDLE, /* cpu.idle */
	CG_KNOB_CPU_BURST, /* v1 cpu.cfs_burst_us | v2 cpu.max.burst (us, since 5.14) */
	CG_KNOB_CPUSET_CPUS, /* cpuset.cpus */
	CG_KNOB_CPUSET_EFFECTIVE, /* v1 cpuset.effective_cpus | v2 cpuset.cpus.effective */
	CG_KNOB_MEMORY_MAX, /* v1 memory.limit_in_bytes | v2 memory.max */
	CG_KNOB_CPU_USAGE, /* v1 cpuacct.usage (ns) | v2 cpu.stat usage_usec */
	CG_KNOB_CPU_STAT, /* cpu.stat (throttling; units differ) */
	CG_KNOB_PROCS, /* cgroup.procs */
	CG_KNOB_THREADS, /* v1 tasks | v2 cgroup.threads */
	CG_KNOB_NR,
};

#define CG_QUOTA_UNLIMITED  (-1LL)
#define CG_MEMORY_UNLIMITED UINT64_MAX
/* v1 memory.limit_in_bytes at or above this reads as unlimited (PAGE_COUNTER_MAX, 4 KiB pages) */
#define CG_V1_MEMORY_UNLIMITED_MIN 0x7FFFFFFFFFFFF000ULL

struct cg_cpu_max {
	int64_t quota_us; /* CG_QUOTA_UNLIMITED or > 0 */
	uint64_t period_us;
};

/* The value actually stored: shares on v1, weight on v2 (never converted back). */
struct cg_cpu_weight {
	uint64_t value;
	bool is_weight;
};

/* All normalised to ns. Throttling fields are 0 on v2 when the cpu controller is off. */
struct cg_cpu_stat {
	uint64_t usage_ns;
	uint64_t nr_periods;
	uint64_t nr_throttled;
	uint64_t throttled_ns;
};

struct cgroupfs;

/*
 * Open the cgroup mount at root (NULL -> /sys/fs/cgroup). CGFS_MODE_AUTO detects: statfs magic
 * CGROUP2_SUPER_MAGIC -> v2; <root>/unified being cgroup2 -> hybrid; otherwise a plain
 * directory (fake tree): cgroup.controllers at the root -> v2, <root>/unified/cgroup.controllers
 * plus controller dirs -> hybrid, controller dirs (cpu/, cpu,cpuacct/, ...) -> v1. -ENOENT when
 * root is missing, -EOPNOTSUPP when nothing matches. An explicit mode skips detection.
 */
int cgroupfs__open(const char *root, enum cgfs_mode mode, struct cgroupfs **ret);
void cgroupfs__free(struct cgroupfs *cg);

/* The trees whose kernfs ids name cgroups to the BPF collector. */
enum cg_ids {
	CG_IDS_AUTO = 0, /* v2 on a unified host, the v1 cpu hierarchy on v1 and hybrid hosts */
	CG_IDS_V1_CPU, /* the v1 cpu controller's mount (cpu or cpu,cpuacct) */
	CG_IDS_V2, /* the cgroup2 mount: the root, or <root>/unified on a hybrid host */
};

/*
 * The one hierarchy detector's answer for ids: resolve @want to a kind and its mount point
 * (borrowed from the handle). -ENOENT when that tree is not a mounted cgroup filesystem.
 */
int cgroupfs__ids_tree(const struct cgroupfs *cg, enum cg_ids want, enum cg_ids *ret_kind,
		       const char **ret_mount);
const char *cg_ids_name(enum cg_ids kind); /* "v2" | "v1-cpu" */
/*
 * The hierarchy id of v1 controller @ctrl from <proc_root>/cgroups (NULL: /proc): what the
 * kernel's cgroup_root::hierarchy_id holds for its tree (0 is the v2 tree). -ENOENT if absent.
 */
int cg_v1_hierarchy_id(const char *proc_root, const char *ctrl, int *ret);

/* Resolved mode: never CGFS_MODE_AUTO. */
enum cgfs_mode cgroupfs__mode(const struct cgroupfs *cg);
const char *cgfs_mode_name(enum cgfs_mode mode);
/* V2 only in CGFS_MODE_V2: hybrid hosts keep every controller on v1. */
bool cgroupfs__is_v2(const struct cgroupfs *cg);
/* Borrowed, valid for the handle's lifetime. */
const char *cgroupfs__root(const struct cgroupfs *cg);
/*
 * Directory under which pod cgroups are found: the root on v2, the cpu controller's directory
 * on v1/hybrid (the hierarchy whose ids the BPF collector uses). NULL if cpu is not mounted.
 */
const char *cgroupfs__walk_root(const struct cgroupfs *cg);
/* The cgroup2 mount: root on v2, <root>/unified on hybrid, NULL on v1. */
const char *cgroupfs__unified_root(const struct cgroupfs *cg);
/* The v1 mount directory of a controller, or NULL (v2: the root for every controller). */
const char *cgroupfs__ctrl_root(const struct cgroupfs *cg, enum cg_ctrl ctrl);
/* File named in the last failed call, "" if none. Borrowed until the next call. */
const char *cgroupfs__last_path(const struct cgroupfs *cg);
/* Number of files actually written through this handle (skipped writes are not counted). */
uint64_t cgroupfs__nr_writes(const struct cgroupfs *cg);

/* File name of a knob in this mode ("cpu.max", "cpu.cfs_quota_us"...). */
const char *cgroupfs__knob_file(const struct cgroupfs *cg, enum cg_knob knob);
/* Absolute path of a knob's file for cgroup rel into buf; -ENAMETOOLONG, -EINVAL, -EOPNOTSUPP. */
int cgroupfs__knob_path(struct cgroupfs *cg, enum cg_knob knob, const char *rel, char *buf,
			size_t size);
/* Absolute directory of cgroup rel in the hierarchy holding ctrl. */
int cgroupfs__dir(struct cgroupfs *cg, enum cg_ctrl ctrl, const char *rel, char *buf, size_t size);

int cgroupfs__read_cpu_max(struct cgroupfs *cg, const char *rel, struct cg_cpu_max *ret);
/* v1 writes period then quota (each skipped if equal); v2 writes "quota period" or "max period". */
int cgroupfs__write_cpu_max(struct cgroupfs *cg, const char *rel, const struct cg_cpu_max *v);
int cgroupfs__read_cpu_weight(struct cgroupfs *cg, const char *rel, struct cg_cpu_weight *ret);
/* shares in 2..262144 (clamped); on v2 converted with formula and written to cpu.weight. */
int cgroupfs__write_cpu_shares(struct cgroupfs *cg, const char *rel, uint64_t shares,
			       enum cg_weight_formula formula);
/* The value as stored (shares on v1, weight on v2), unconverted: restores are byte-identical. */
int cgroupfs__write_cpu_weight_raw(struct cgroupfs *cg, const char *rel,
				   const struct cg_cpu_weight *w);
int cgroupfs__read_cpu_idle(struct cgroupfs *cg, const char *rel, bool *ret);
int cgroupfs__write_cpu_idle(struct cgroupfs *cg, const char *rel, bool idle);
/* CFS burst in us; the kernel refuses (-EINVAL) a burst above the cgroup's quota. */
int cgroupfs__read_cpu_burst(struct cgroupfs *cg, const char *rel, uint64_t *ret_us);
int cgroupfs__write_cpu_burst(struct cgroupfs *cg, const char *rel, uint64_t burst_us);
/* knob is CG_KNOB_CPUSET_CPUS or CG_KNOB_CPUSET_EFFECTIVE. */
int cgroupfs__read_cpuset(struct cgroupfs *cg, enum cg_knob knob, const char *rel,
			  struct cpumask *ret);
int cgroupfs__write_cpuset(struct cgroupfs *cg, const char *rel, const struct cpumask *cpus);
/* Bytes, CG_MEMORY_UNLIMITED for "max" (v2) or >= CG_V1_MEMORY_UNLIMITED_MIN (v1). */
int cgroupfs__read_memory_max(struct cgroupfs *cg, const char *rel, uint64_t *ret);
int cgroupfs__write_memory_max(struct cgroupfs *cg, const char *rel, uint64_t bytes);
int cgroupfs__read_cpu_stat(struct cgroupfs *cg, const char *rel, struct cg_cpu_stat *ret);
/* Only the throttling counters (usage_ns 0 on v1): v1 needs no cpuacct.usage read for them. */
int cgroupfs__read_throttle(struct cgroupfs *cg, const char *rel, struct cg_cpu_stat *ret);
/*
 * Pids of knob CG_KNOB_PROCS or CG_KNOB_THREADS into pids[0..cap). Returns how many the file
 * lists (may exceed cap; only cap are stored) or -errno.
 */
int cgroupfs__read_pids(struct cgroupfs *cg, enum cg_knob knob, const char *rel, pid_t *pids,
			size_t cap);
/*
 * Move a process into the cgroup: cgroup.procs of the v2 cgroup, or of every mounted v1
 * controller hierarchy (cpu, cpuacct, cpuset, memory). 1 on success (never skipped).
 */
int cgroupfs__attach_pid(struct cgroupfs *cg, const char *rel, pid_t pid);

/*
 * Hot-path reader of one cgroup's CPU statistics: keeps the fds of cpuacct.usage / cpu.stat
 * open and re-reads them with pread. Opened against a handle; must not outlive it. The fds go
 * stale (-ENODEV from the kernel) when the cgroup is removed: free and re-open then.
 */
struct cg_stat_reader;
int cg_stat_reader__open(struct cgroupfs *cg, const char *rel, struct cg_stat_reader **ret);
int cg_stat_reader__read(struct cg_stat_reader *r, struct cg_cpu_stat *ret);
void cg_stat_reader__free(struct cg_stat_reader *r);

/*
 * Parse one /proc/<pid>/cgroup line "id:controllers:path" (trailing newline tolerated) into
 * *ret_id and the two buffers. v2 lines have id 0 and empty controllers. -EINVAL on a malformed
 * line or a path that is not absolute, -ENAMETOOLONG when a buffer is too small.
 */
int cg_proc_line_parse(const char *line, unsigned int *ret_id, char *ctrls, size_t ctrls_size,
		       char *path, size_t path_size);

#endif
