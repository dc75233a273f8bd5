/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_SLO_H
#define KQOS_MODEL_SLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgvalue.h"
#include "cpulist.h"

/*
 * The enforcement configuration: the koordinator NodeSLO `spec` fields these strategies use
 * (koordinator.md §5.2) plus kqos's own keys (docs/strategies.md). Defaults are koordinator's:
 * everything disabled. A plain value: copy with `=`.
 */

enum suppress_policy {
	SUPPRESS_CPUSET = 0, /* koordinator default */
	SUPPRESS_CFS_QUOTA,
	SUPPRESS_WEIGHT, /* kqos: besteffort cpu.shares (v2 cpu.weight) lowered */
	SUPPRESS_IDLE, /* kqos: cpu.idle=1 on besteffort */
};

enum kubelet_cpu_policy {
	KUBELET_CPU_NONE = 0,
	KUBELET_CPU_STATIC,
};

enum slo_recovery {
	SLO_RECOVERY_RESTORE = 0, /* after a crash, write the journaled originals back */
	SLO_RECOVERY_ADOPT, /* keep them as originals and carry on enforcing */
};

#define SLO_PATH_MAX 256

/* The latency guard's ladder (docs/strategies.md): what it does to BE, step by step. */
enum guard_step {
	GUARD_STEP_IDLE = 0, /* cpu.idle=1 on the BE dirs */
	GUARD_STEP_WEIGHT, /* BE shares down to beShares */
	GUARD_STEP_CPUSET, /* BE off the CPUs where LS waited, one CPU kept where possible */
	GUARD_STEP_QUOTA, /* BE quota cut to quotaPercent of one CPU: the last resort */
	GUARD_STEP_NR,
};

#define GUARD_LADDER_MAX GUARD_STEP_NR

struct guard_config {
	bool enable;
	uint64_t target_lse_ns, target_lsr_ns, target_ls_ns; /* run-queue wait targets */
	uint64_t quiet_ns; /* no breach this long: one step back */
	uint64_t settle_ns; /* a step stays at least this long before the next or a back-out */
	enum guard_step ladder[GUARD_LADDER_MAX];
	unsigned int nr_ladder;
	unsigned int quota_pct; /* quota step: % of one CPU for each BE dir */
	unsigned int cpi_rise_pct, mpki_rise_pct; /* LS CPI/MPKI over its quiet baseline; 0 off */
};

enum cpu_evict_policy {
	CPU_EVICT_BY_REAL_LIMIT = 0, /* koordinator default */
	CPU_EVICT_BY_ALLOCATABLE,
};

/*
 * Eviction (koordinator.md §4.2, §4.3): nodeSLO.resourceUsedThresholdWithBE fields, -1 when
 * unset, and the koordlet feature gates as strategies.eviction.features (bit per enum
 * pod_evictor in pod.h). Validity is the strategies' to check, as in koordlet.
 */
struct evict_config {
	unsigned int features;
	int memory_threshold_pct; /* memoryEvictThresholdPercent, 70 */
	int memory_lower_pct; /* memoryEvictLowerPercent; -1: threshold - 2 */
	int be_sat_upper_pct, be_sat_lower_pct; /* cpuEvictBESatisfaction{Upper,Lower}Percent */
	int be_usage_threshold_pct; /* cpuEvictBEUsageThresholdPercent; -1: 90 */
	int window_s; /* cpuEvictTimeWindowSeconds */
	int cpu_threshold_pct, cpu_lower_pct; /* cpuEvict{Threshold,Lower}Percent */
	enum cpu_evict_policy cpu_policy; /* cpuEvictPolicy */
	bool has_priority_threshold;
	int32_t priority_threshold; /* evictEnabledPriorityThreshold */
	uint64_t cpu_cool_ns, memory_cool_ns; /* koordlet's cool-downs: 20 s, 4 s */
};

/* nodeSLO.cpuBurstStrategy (koordinator.md §4.4, §5.4); policy is an enum pod_burst_policy. */
struct burst_config {
	bool configured; /* the spec has a cpuBurstStrategy: koordlet runs the plugin only then */
	int policy; /* none (default), cpuBurstOnly, cfsQuotaBurstOnly, auto */
	int64_t cpu_burst_pct; /* 1000: cfs burst = limit x this / 100 */
	int64_t cfs_quota_burst_pct; /* 300: quota ceiling = base x this / 100 */
	int64_t cfs_quota_burst_period_s; /* -1: no token bucket */
	int64_t share_pool_threshold_pct; /* 50: share pool overloaded at this usage */
};

/* The resctrl classes: kqos-LSR (LSE and LSR pods), kqos-LS, kqos-BE. */
enum rdt_class { RDT_CLASS_LSR = 0, RDT_CLASS_LS, RDT_CLASS_BE, RDT_CLASS_NR };

/* nodeSLO.resourceQOSStrategy.<class>.resctrlQOS (koordinator.md §4.5) */
struct rdt_class_config {
	bool enable; /* default false for every class */
	unsigned int cat_start_pct, cat_end_pct; /* 0..100, start < end; BE 0-30, others 0-100 */
	unsigned int mba_pct; /* 1..100, default 100 */
};

/* strategies.resctrlAdapt: BE's L3 ways and MB between a floor and beClass's values. */
struct rdt_adapt_config {
	bool enable; /* default false */
	unsigned int l3_floor_pct; /* BE catRangeEndPercent never below this; default 10 */
	unsigned int mb_floor_pct; /* BE mbaPercent never below this; default 10 */
	unsigned int step_pct; /* per shrink or grow; default 10 */
	uint64_t quiet_ns; /* no interference this long: grow back one step; default 10 s */
	unsigned int llc_drop_pct; /* LS occupancy falling this much while BE's grows; 10 */
	uint64_t mbm_peak_bps; /* node MBM total at >= 90 % of this is interference; 0 = off */
	/* LS CPI / LLC MPKI over their baseline learned while BE is quiet (PMU); 0 = off */
	unsigned int cpi_rise_pct, mpki_rise_pct; /* defaults 20, 30 */
	/* an LS wait the latency guard blames on BE shrinks one step between ticks, at most
	 * once per this since the last shrink; 0 = ticks only; default 2 s */
	uint64_t event_hold_ns;
};

struct slo_config {
	/* nodeSLO.resourceQOSStrategy.{lsrClass,lsClass,beClass}.resctrlQOS */
	struct rdt_class_config rdt[RDT_CLASS_NR];
	/* strategies.resctrlPodLevel: kqos-pod-<uid> groups from node.koordinator.sh/resctrl
	 * (koordinator's feature gate Resctrl, off by default) */
	bool rdt_pod_level;
	struct rdt_adapt_config rdt_adapt;
	/* strategies.resctrlPodMonitor: mon_groups/kqos-pod-<uid> for LS pods in a class
	 * group, while RMIDs last; default true */
	bool rdt_pod_monitor;
	/* nodeSLO.resourceUsedThresholdWithBE */
	bool suppress_enable;
	int suppress_threshold_pct; /* 0..100, default 65 */
	int suppress_min_pct; /* 0..100, -1 when unset */
	enum suppress_policy suppress_policy;
	struct burst_config burst; /* nodeSLO.cpuBurstStrategy */

	/* strategies.* (kqos) */
	uint64_t be_shares; /* weight policy: besteffort shares, default 2 */
	bool mid_ls_protected; /* Mid+LS pods are not BE for suppress; default true */
	enum cg_weight_formula weight_formula;
	enum kubelet_cpu_policy kubelet_policy;
	/* alias of the config's pods.kubeletRoot checkpoint; "" = not given */
	char cpu_manager_state[SLO_PATH_MAX];
	struct cpumask reserved_cpus; /* node reservation reservedCPUs */
	uint64_t node_reserved_milli; /* kubelet reserved (capacity - allocatable) */
	bool has_system_cpus;
	struct cpumask system_cpus; /* system-qos-resource cpuset */
	bool system_exclusive;
	bool cpuset_rules_enable;
	bool be_cpu_manager; /* koordinator feature gate BECPUManager */
	bool unset_cpu_quota; /* quota -1 on bound pods (not --disable-unset-cpu-quota) */
	bool batch_resource_enable; /* extended_resource's batch tier */
	bool mid_resource_enable; /* extended_resource's mid tier */
	double cpu_normalization_ratio; /* > 1 divides batch and mid quota; 1 = off */
	enum slo_recovery recovery;
	struct guard_config guard; /* strategies.latencyGuard */
	struct evict_config evict;
};

void slo_config_init(struct slo_config *cfg);

/*
 * Parse the two JSON texts (either may be NULL or "" = defaults) over the defaults. 0, or
 * -EINVAL with the offending field named in @err ("nodeSLO.resourceUsedThresholdWithBE.
 * cpuSuppressThresholdPercent: 140 out of range [0, 100]"); *ret is written only on success.
 * Unknown nodeSLO fields are ignored (a full koordinator NodeSLO is accepted); unknown kqos
 * keys are rejected, since they are typos.
 */
int slo_config_parse(const char *policy_json, const char *kqos_json, struct slo_config *ret,
		     char *err, size_t err_len);

const char *suppress_policy_name(enum suppress_policy p);
const char *rdt_class_name(enum rdt_class c); /* "LSR", "LS", "BE" */
/* True when some class has resctrlQOS.enable. */
bool slo_rdt_enabled(const struct slo_config *cfg);
const char *guard_step_name(enum guard_step s); /* "idle", "weight", "cpuset", "quota" */

#endif
