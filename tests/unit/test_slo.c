// SPDX-License-Identifier: GPL-2.0
/* NodeSLO spec + kqos keys: defaults, koordinator's example, range errors naming the field. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "enforce.h"
#include "slo.h"

static struct slo_config cfg;
static char err[256];

static int parse(const char *policy, const char *kqos)
{
	return slo_config_parse(policy, kqos, &cfg, err, sizeof(err));
}

Test(slo, defaults_are_koordinator_disabled)
{
	cr_assert_eq(parse(NULL, NULL), 0);
	cr_assert_not(cfg.suppress_enable);
	cr_assert_eq(cfg.suppress_threshold_pct, 65);
	cr_assert_eq(cfg.suppress_min_pct, -1);
	cr_assert_eq(cfg.suppress_policy, SUPPRESS_CPUSET);
	cr_assert_not(cfg.cpuset_rules_enable);
	cr_assert_not(cfg.batch_resource_enable);
	cr_assert_not(cfg.mid_resource_enable);
	cr_assert(cfg.mid_ls_protected, "Mid+LS is protected unless asked otherwise");
	cr_assert_eq(cfg.be_shares, 2);
	cr_assert_eq(parse("{}", "{}"), 0);
}

/* koordinator.md §5.5, the whole spec: unused sections are accepted and ignored */
Test(slo, koordinator_example_spec)
{
	static const char spec[] =
		"{\"resourceUsedThresholdWithBE\":{\"enable\":true,\"cpuSuppressThresholdPercent\":65,"
		"\"cpuSuppressMinPercent\":5,\"cpuSuppressPolicy\":\"cfsQuota\","
		"\"memoryEvictThresholdPercent\":70,\"cpuEvictPolicy\":\"evictByRealLimit\"},"
		"\"resourceQOSStrategy\":{\"policies\":{\"cpuPolicy\":\"groupIdentity\"},"
		"\"beClass\":{\"cpuQOS\":{\"enable\":true,\"groupIdentity\":-1}}},"
		"\"cpuBurstStrategy\":{\"policy\":\"auto\"},"
		"\"systemStrategy\":{\"minFreeKbytesFactor\":100}}";

	cr_assert_eq(parse(spec, NULL), 0, "%s", err);
	cr_assert(cfg.suppress_enable);
	cr_assert_eq(cfg.suppress_min_pct, 5);
	cr_assert_eq(cfg.suppress_policy, SUPPRESS_CFS_QUOTA);
}

Test(slo, kqos_keys)
{
	cr_assert_eq(parse("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressPolicy\":\"cpuset\"}}",
			   "{\"cpuSuppress\":{\"policy\":\"idle\",\"beShares\":16},"
			   "\"weightFormula\":\"log\",\"kubeletCpuManagerPolicy\":\"static\","
			   "\"cpuManagerStatePath\":\"/tmp/cms\",\"reservedCpus\":\"0-1\","
			   "\"nodeReservedMilliCpu\":500,\"systemQos\":{\"cpuset\":\"2\","
			   "\"cpusetExclusive\":false},\"cpusetRules\":{\"enable\":true,"
			   "\"beCpuManager\":true,\"unsetCpuQuota\":false},"
			   "\"batchResource\":{\"enable\":true},\"recovery\":\"adopt\","
			   "\"cpuNormalizationRatio\":1.5}"),
		     0, "%s", err);
	cr_assert_eq(cfg.suppress_policy, SUPPRESS_IDLE, "kqos policy overrides koordinator's");
	cr_assert_eq(cfg.be_shares, 16);
	cr_assert_eq(cfg.weight_formula, CG_WEIGHT_LOG);
	cr_assert_eq(cfg.kubelet_policy, KUBELET_CPU_STATIC);
	cr_assert_str_eq(cfg.cpu_manager_state, "/tmp/cms");
	cr_assert_eq(cpumask_count(&cfg.reserved_cpus), 2);
	cr_assert_eq(cfg.node_reserved_milli, 500);
	cr_assert(cfg.has_system_cpus && !cfg.system_exclusive);
	cr_assert(cfg.cpuset_rules_enable && cfg.be_cpu_manager && !cfg.unset_cpu_quota);
	cr_assert(cfg.batch_resource_enable);
	cr_assert_eq(cfg.recovery, SLO_RECOVERY_ADOPT);
	cr_assert_float_eq(cfg.cpu_normalization_ratio, 1.5, 1e-9);
}

/* The tiers have their own switches; the batch key keeps its meaning. */
Test(slo, tier_switches_and_mid_ls_protection)
{
	cr_assert_eq(parse(NULL, "{\"midResource\":{\"enable\":true}}"), 0, "%s", err);
	cr_assert(cfg.mid_resource_enable && !cfg.batch_resource_enable);
	cr_assert_eq(parse(NULL, "{\"batchResource\":{\"enable\":true}}"), 0, "%s", err);
	cr_assert(cfg.batch_resource_enable && !cfg.mid_resource_enable);
	cr_assert_eq(parse(NULL, "{\"cpuSuppress\":{\"midLsProtected\":false}}"), 0, "%s", err);
	cr_assert_not(cfg.mid_ls_protected, "false is koordinator's behaviour");
}

static void rejects(const char *policy, const char *kqos, const char *want)
{
	struct slo_config before;

	slo_config_init(&cfg);
	cfg.suppress_threshold_pct = 42; /* untouched on failure */
	before = cfg;
	cr_assert_eq(parse(policy, kqos), -EINVAL, "accepted %s %s", policy, kqos);
	cr_assert_str_eq(err, want);
	cr_assert_eq(cfg.suppress_threshold_pct, before.suppress_threshold_pct);
}

Test(slo, out_of_range_names_the_field)
{
	rejects("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressThresholdPercent\":140}}", NULL,
		"nodeSLO.resourceUsedThresholdWithBE.cpuSuppressThresholdPercent: 140 out of range "
		"[0, 100]");
	rejects("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressMinPercent\":-1}}", NULL,
		"nodeSLO.resourceUsedThresholdWithBE.cpuSuppressMinPercent: -1 out of range [0, 100]");
	rejects("{\"resourceUsedThresholdWithBE\":{\"cpuSuppressPolicy\":\"weight\"}}", NULL,
		"nodeSLO.resourceUsedThresholdWithBE.cpuSuppressPolicy: \"weight\" is not one of "
		"cpuset cfsQuota");
	rejects("{\"resourceUsedThresholdWithBE\":{\"enable\":1}}", NULL,
		"nodeSLO.resourceUsedThresholdWithBE.enable: not a boolean");
	rejects("{\"resourceUsedThresholdWithBE\":[]}", NULL,
		"nodeSLO.resourceUsedThresholdWithBE: not an object");
	rejects(NULL, "{\"cpuSuppress\":{\"beShares\":1}}",
		"strategies.cpuSuppress.beShares: 1 out of range [2, 262144]");
	rejects(NULL, "{\"cpuSupress\":{}}", "strategies.cpuSupress: unknown key");
	rejects(NULL, "{\"reservedCpus\":\"3-1\"}",
		"strategies.reservedCpus: \"3-1\" is not a cpu list");
	rejects(NULL, "{\"weightFormula\":\"cubic\"}",
		"strategies.weightFormula: \"cubic\" is not one of linear log");
	rejects(NULL, "{\"batchResource\":{\"enabled\":true}}",
		"strategies.batchResource.enabled: unknown key");
	rejects(NULL, "{\"midResource\":{\"enable\":\"yes\"}}",
		"strategies.midResource.enable: not a boolean");
	rejects(NULL, "{\"midResource\":{\"policy\":1}}",
		"strategies.midResource.policy: unknown key");
	rejects(NULL, "{\"cpuSuppress\":{\"midLsProtected\":0}}",
		"strategies.cpuSuppress.midLsProtected: not a boolean");
	rejects(NULL, "{\"cpuNormalizationRatio\":0.5}",
		"strategies.cpuNormalizationRatio: not a number in [1, 100]");
	rejects(NULL, "{\"latencyGuard\":{\"quietWindow\":\"soon\"}}",
		"strategies.latencyGuard.quietWindow: not a duration such as \"500us\" or \"2s\"");
	rejects(NULL, "{\"latencyGuard\":{\"targets\":{\"BE\":\"1ms\"}}}",
		"strategies.latencyGuard.targets.BE: unknown key");
	rejects(NULL, "{\"latencyGuard\":{\"ladder\":[\"idle\",\"idle\"]}}",
		"strategies.latencyGuard.ladder: each of idle, weight, cpuset, quota once");
	rejects(NULL, "{\"latencyGuard\":{\"quotaPercent\":0}}",
		"strategies.latencyGuard.quotaPercent: 0 out of range [1, 100]");
	rejects(NULL, "{\"latencyGuard\":{\"targets\":{\"LS\":\"20s\"}}}",
		"strategies.latencyGuard.targets.LS: duration out of range");
}

Test(slo, latency_guard_keys)
{
	cr_assert_eq(
		slo_config_parse(NULL,
				 "{\"latencyGuard\":{\"enable\":true,\"targets\":{\"LS\":\"2ms\"},"
				 "\"quietWindow\":\"5s\",\"ladder\":[\"weight\",\"cpuset\"],"
				 "\"cpiRisePercent\":0}}",
				 &cfg, err, sizeof(err)),
		0, "%s", err);
	cr_assert(cfg.guard.enable);
	cr_assert_eq(cfg.guard.target_ls_ns, 2000000);
	cr_assert_eq(cfg.guard.target_lse_ns, 200000, "defaults stay for the others");
	cr_assert_eq(cfg.guard.quiet_ns, 5000000000ULL);
	cr_assert_eq(cfg.guard.nr_ladder, 2);
	cr_assert_eq(cfg.guard.ladder[0], GUARD_STEP_WEIGHT);
	cr_assert_eq(cfg.guard.cpi_rise_pct, 0);
}

Test(slo, syntax_error_and_validate_api)
{
	cr_assert_eq(parse("{", NULL), -EINVAL);
	cr_assert(strstr(err, "nodeSLO: not a JSON object"), "%s", err);
	cr_assert_eq(enforce_validate(NULL, "[1]", err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "strategies:"), "%s", err);
	cr_assert_eq(enforce_validate("{}", NULL, err, sizeof(err)), 0);
}

Test(slo, resctrl_qos_defaults_and_fields)
{
	cr_assert_eq(parse(NULL, NULL), 0);
	cr_assert_not(slo_rdt_enabled(&cfg));
	cr_assert_eq(cfg.rdt[RDT_CLASS_BE].cat_start_pct, 0);
	cr_assert_eq(cfg.rdt[RDT_CLASS_BE].cat_end_pct, 30);
	cr_assert_eq(cfg.rdt[RDT_CLASS_LS].cat_end_pct, 100);
	cr_assert_eq(cfg.rdt[RDT_CLASS_LSR].mba_pct, 100);
	cr_assert_eq(parse("{\"resourceQOSStrategy\": {\"beClass\": {\"resctrlQOS\": {\"enable\": "
			   "true, \"catRangeEndPercent\": 50, \"mbaPercent\": 25}},"
			   "\"lsClass\": {\"memoryQOS\": {\"enable\": true}}}}",
			   NULL),
		     0, "%s", err);
	cr_assert(slo_rdt_enabled(&cfg));
	cr_assert(cfg.rdt[RDT_CLASS_BE].enable);
	cr_assert_not(cfg.rdt[RDT_CLASS_LS].enable);
	cr_assert_eq(cfg.rdt[RDT_CLASS_BE].cat_end_pct, 50);
	cr_assert_eq(cfg.rdt[RDT_CLASS_BE].mba_pct, 25);
}

Test(slo, resctrl_qos_errors_name_the_field)
{
	cr_assert_eq(parse("{\"resourceQOSStrategy\": {\"lsClass\": {\"resctrlQOS\": "
			   "{\"mbaPercent\": 0}}}}",
			   NULL),
		     -EINVAL);
	cr_assert_str_eq(err, "nodeSLO.resourceQOSStrategy.lsClass.resctrlQOS.mbaPercent: 0 out of "
			      "range [1, 100]");
	cr_assert_eq(parse("{\"resourceQOSStrategy\": {\"beClass\": {\"resctrlQOS\": "
			   "{\"catRangeStartPercent\": 40}}}}",
			   NULL),
		     -EINVAL);
	cr_assert_str_eq(err,
			 "nodeSLO.resourceQOSStrategy.beClass.resctrlQOS.catRangeStartPercent: "
			 "40 is not below catRangeEndPercent 30");
	cr_assert_eq(parse("{\"resourceQOSStrategy\": {\"lsrClass\": {\"resctrlQOS\": "
			   "{\"enable\": 1}}}}",
			   NULL),
		     -EINVAL);
	cr_assert_str_eq(err,
			 "nodeSLO.resourceQOSStrategy.lsrClass.resctrlQOS.enable: not a boolean");
	cr_assert_eq(parse("{\"resourceQOSStrategy\": {\"lsrClass\": []}}", NULL), -EINVAL);
	cr_assert_str_eq(err, "nodeSLO.resourceQOSStrategy.lsrClass: not an object");
}

Test(slo, resctrl_adapt_keys)
{
	cr_assert_eq(parse(NULL, NULL), 0);
	cr_assert_not(cfg.rdt_adapt.enable);
	cr_assert_eq(cfg.rdt_adapt.step_pct, 10);
	cr_assert_eq(parse(NULL,
			   "{\"resctrlAdapt\": {\"enable\": true, \"l3FloorPercent\": 15, "
			   "\"quietPeriod\": \"5s\", \"mbmPeakBytesPerSecond\": 20000000000}}"),
		     0, "%s", err);
	cr_assert(cfg.rdt_adapt.enable);
	cr_assert_eq(cfg.rdt_adapt.l3_floor_pct, 15);
	cr_assert_eq(cfg.rdt_adapt.quiet_ns, 5000000000ULL);
	cr_assert_eq(cfg.rdt_adapt.mbm_peak_bps, 20000000000ULL);
	/* documented keys, once refused as unknown */
	cr_assert_eq(parse(NULL, "{\"resctrlAdapt\": {\"cpiRisePercent\": 0, "
				 "\"mpkiRisePercent\": 50}}"),
		     0, "%s", err);
	cr_assert_eq(cfg.rdt_adapt.cpi_rise_pct, 0);
	cr_assert_eq(cfg.rdt_adapt.mpki_rise_pct, 50);
	cr_assert_eq(cfg.rdt_adapt.event_hold_ns, 2000000000ULL, "default eventHold");
	cr_assert_eq(parse(NULL, "{\"resctrlAdapt\": {\"eventHold\": \"0s\"}}"), 0, "%s", err);
	cr_assert_eq(cfg.rdt_adapt.event_hold_ns, 0);
	cr_assert_eq(parse(NULL, "{\"resctrlAdapt\": {\"eventHold\": \"2h\"}}"), -EINVAL);
	cr_assert_str_eq(err, "strategies.resctrlAdapt.eventHold: duration out of range");
	cr_assert_eq(parse(NULL, "{\"resctrlAdapt\": {\"stepPercent\": 0}}"), -EINVAL);
	cr_assert_str_eq(err, "strategies.resctrlAdapt.stepPercent: 0 out of range [1, 50]");
	cr_assert_eq(parse(NULL, "{\"resctrlAdapt\": {\"floor\": 1}}"), -EINVAL);
	cr_assert(strstr(err, "strategies.resctrlAdapt"), "%s", err);
}
