/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_CONFIG_H
#define KQOS_USER_CONFIG_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "log.h"
#include "pmu.h"

/*
 * kqosd configuration: compiled defaults, then the JSON file (--config), then command-line
 * flags. The JSON keys are documented in docs/config.md; every key is in the table in config.c.
 */
enum cg_mode_cfg {
	CG_MODE_AUTO = 0, /* v2 on a unified host, v1 cpu hierarchy on v1/hybrid hosts */
	CG_MODE_V1,
	CG_MODE_V2,
};

struct kqos_config {
	__u64 interval_ns; /* "interval": sampling period */
	char cgroup_root[PATH_MAX]; /* "cgroupRoot": where the cgroup mounts live */
	__u32 cgroup_mode; /* "cgroupMode": enum cg_mode_cfg */
	__u32 log_level; /* "logLevel": enum log_level */
	bool dry_run; /* "dryRun": decide and log, never write */
	/* "pmu": event names per role ("" = off) and extra events; at most KQOS_PMU_MAX in all */
	struct {
		char cycles[PMU_NAME_LEN];
		char instructions[PMU_NAME_LEN];
		char llc_misses[PMU_NAME_LEN];
		char extra[KQOS_PMU_MAX][PMU_NAME_LEN];
		__u32 n_extra;
	} pmu;
	struct {
		__u32 max_cgroups; /* "collector.maxCgroups": BPF map capacity */
		__u64 reap_interval_ns; /* "collector.reapInterval": how often vanished cgroups go */
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

/* "1s", "250ms", "100us", "500ns", "2m", "1h", or a plain number of seconds ("0.5"). */
int parse_duration(const char *s, __u64 *ret_ns);

#endif
