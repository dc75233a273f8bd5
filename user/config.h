/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_CONFIG_H
#define KQOS_USER_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "log.h"
#include "pmu.h"
#include "units.h" /* parse_duration */

/*
 * kqosd configuration: compiled defaults, then the JSON file (--config), then command-line
 * flags. The JSON keys are documented in docs/config.md; every key is in the table in config.c.
 */
enum cg_mode_cfg {
	CG_MODE_AUTO = 0, /* v2 on a unified host, v1 cpu hierarchy on v1/hybrid hosts */
	CG_MODE_V1,
	CG_MODE_V2,
};

enum pod_source_cfg {
	POD_SOURCE_AUTO = 0, /* kubelet in a pod (service account present), else cgroup walk */
	POD_SOURCE_KUBELET,
	POD_SOURCE_FILE,
	POD_SOURCE_CGROUP,
	POD_SOURCE_STATIC, /* only the bare-metal groups of "pods.groups" */
	POD_SOURCE_NONE,
};

#define CONFIG_MAX_GROUPS 64
#define CONFIG_JSON_MAX	  16384

struct kqos_config {
	__u64 interval_ns; /* "interval": sampling period */
	char cgroup_root[PATH_MAX]; /* "cgroupRoot": where the cgroup mounts live */
	__u32 cgroup_mode; /* "cgroupMode": enum cg_mode_cfg */
	__u32 log_level; /* "logLevel": enum log_level */
	bool dry_run; /* "dryRun": decide and log, never write */
	int nice; /* "nice": the agent's own; it must get the CPU BE is pushed off (-10) */
	/* "pmu": event names per role ("" = off) and extra events; at most KQOS_PMU_MAX in all */
	struct {
		char cycles[PMU_NAME_LEN];
		char instructions[PMU_NAME_LEN];
		char llc_misses[PMU_NAME_LEN];
		char extra[KQOS_PMU_MAX][PMU_NAME_LEN];
		__u32 n_extra;
	} pmu;
	char state_dir[PATH_MAX]; /* "stateDir": journal of original cgroup values */
	char sys_root[PATH_MAX]; /* "sysRoot": sysfs, for topology (tests point it elsewhere) */
	char proc_root[PATH_MAX]; /* "procRoot": procfs, for node CPU and memory use */
	/*
	 * kubelet's CPU manager checkpoint, derived: <pods.kubeletRoot>/cpu_manager_state, or the
	 * documented alias strategies.cpuManagerStatePath when given
	 */
	char cpu_manager_state[PATH_MAX + 32];
	struct {
		char root[PATH_MAX]; /* "resctrl.root" */
		__u64 interval_ns; /* "resctrl.interval": mon_data cadence */
		/* "resctrl.reconcile": place tasks by rescanning on the tick too, not only on
		 * attach events (false only to test the event path) */
		bool reconcile;
	} resctrl;
	struct {
		char textfile_dir[PATH_MAX]; /* "" = off */
		__u64 textfile_interval_ns;
		char socket[PATH_MAX]; /* "" = off */
		char socket_group[64];
	} export;
	struct {
		__u32 source; /* enum pod_source_cfg */
		char kubelet_root[PATH_MAX]; /* "pods.kubeletRoot": for cpu_manager_state */
		struct {
			char url[512];
			char token_file[PATH_MAX];
			char ca_file[PATH_MAX];
			bool insecure_skip_verify;
			__u64 timeout_ns;
			__u64 interval_ns;
		} kubelet;
		struct {
			char path[PATH_MAX];
			__u64 interval_ns;
		} file;
		__u32 max_bytes; /* one list's text; past it the list is rejected */
		__u32 max_pods; /* one list's items */
		__u32 nr_groups;
		struct config_group {
			char name[64];
			char cgroup[256];
			char qos_class[16];
			__u64 wait_target_ns; /* "waitTarget": the latency guard's; 0 = class */
			__u32 evict_action; /* "evictAction": none|kill|freeze (enum evict_action) */
		} groups[CONFIG_MAX_GROUPS];
	} pods;
	/* koordinator NodeSLO spec and kqos strategy keys, kept as JSON text for the enforcer */
	char node_slo_json[CONFIG_JSON_MAX];
	char strategies_json[CONFIG_JSON_MAX];
	/* "eviction": the evictor (docs/strategies.md); the strategies are in "strategies" */
	struct {
		bool dry_run; /* "dryRun": log the victims, touch nothing (also with dryRun) */
		char api_server[512]; /* "apiServer": "" = in-cluster (KUBERNETES_SERVICE_*) */
		char token_file[PATH_MAX]; /* "" = the service account's */
		char ca_file[PATH_MAX];
		bool insecure_skip_verify;
		__u64 timeout_ns; /* "timeout": API time per tick, all calls together */
		__u64 retry_ns; /* "retry": after 5xx, garbage or a timeout */
		__u64 kill_grace_ns; /* "killGrace": SIGTERM -> SIGKILL of a bare-metal group */
	} eviction;
	struct {
		__u32 max_cgroups; /* "collector.maxCgroups": BPF map capacity */
		/* "collector.counterSlots": cgroups read from mapped memory; 0 auto, -1 none */
		int counter_slots;
		__u64 reap_interval_ns; /* "collector.reapInterval": how often vanished cgroups go */
		/* "collector.walkInterval": full rescan of the tree; mkdir/rmdir events rescan at once */
		__u64 walk_interval_ns;
		/* "collector.statInterval": cpu.stat, cpuset and memory.stat of pods' cgroups */
		__u64 stat_interval_ns;
		/* "collector.histInterval": every wait histogram (watched LS cgroups: every tick) */
		__u64 hist_interval_ns;
	} collector;
};

#define CONFIG_ERR_LEN 2048

void config_defaults(struct kqos_config *cfg);

/*
 * Parse JSON @text (named @file in messages) over @cfg. Keys absent from the text keep their
 * current value. On error returns -EINVAL, leaves @cfg untouched and writes a message naming the
 * file, the line:column and the key into @err.
 */
int config_parse(const char *file, const char *text, struct kqos_config *cfg, char *err,
		 size_t err_len);

/* Read @path and config_parse() it. -errno with @err filled when the file cannot be read. */
int config_load_file(const char *path, struct kqos_config *cfg, char *err, size_t err_len);

/* The configured PMU events with their roles, into @out[KQOS_PMU_MAX]; count or -E2BIG. */
int config_pmu_events(const struct kqos_config *cfg, struct pmu_event_cfg *out);

#endif
