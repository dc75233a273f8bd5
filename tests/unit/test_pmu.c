// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <linux/perf_event.h>

#include <criterion/criterion.h>

#include "config.h"
#include "pmu.h"
#include "rates.h"

static void expect_encoding(const char *name, __u32 type, __u64 config)
{
	struct perf_event_attr attr;
	char err[1400] = "";

	cr_assert_eq(pmu_encode(name, &attr, err, sizeof(err)), 0, "%s: %s", name, err);
	cr_expect_eq(attr.type, type, "%s type", name);
	cr_expect_eq(attr.config, config, "%s config", name);
	cr_expect_eq(attr.read_format,
		     PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING);
}

Test(pmu, libpfm4_encodes_generic_names)
{
	expect_encoding("cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES);
	expect_encoding("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	expect_encoding("cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES);
	expect_encoding("context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES);
	expect_encoding("task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);
	expect_encoding("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
	/* LLC read misses as a generic cache event: LL | (READ << 8) | (MISS << 16) */
	expect_encoding("LLC-LOAD-MISSES", PERF_TYPE_HW_CACHE,
			PERF_COUNT_HW_CACHE_LL | (PERF_COUNT_HW_CACHE_OP_READ << 8) |
				(PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
}

Test(pmu, unknown_name_lists_the_choices)
{
	struct perf_event_attr attr;
	char err[1400] = "";

	cr_assert_eq(pmu_encode("no-such-event", &attr, err, sizeof(err)), -ENOENT);
	cr_expect_not_null(strstr(err, "unknown PMU event 'no-such-event'"), "%s", err);
	cr_expect_not_null(strstr(err, "CONTEXT-SWITCHES"), "%s", err);
	cr_expect_not_null(strstr(err, "INSTRUCTIONS"), "%s", err);
	/* Validation only, no attr. */
	cr_expect_eq(pmu_encode("cycles", NULL, err, sizeof(err)), 0);
}

/* libpfm4 is unloaded once the agent's events are open, and loaded again for a reload. */
static bool libpfm_mapped(void)
{
	char line[512];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	cr_assert_not_null(f);
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "/libpfm.so") != NULL;
	fclose(f);
	return found;
}

Test(pmu, libpfm4_unloads_and_loads_again)
{
	char err[1400] = "";

	cr_assert_eq(pmu_encode("cycles", NULL, err, sizeof(err)), 0, "%s", err);
	cr_expect(libpfm_mapped());
	pmu_unload_names();
	cr_expect_not(libpfm_mapped(), "libpfm4 still mapped after pmu_unload_names()");
	pmu_unload_names(); /* twice is harmless */
	expect_encoding("instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS);
	cr_expect(libpfm_mapped());
	pmu_unload_names();
}

Test(pmu, delta_survives_counter_wrap)
{
	cr_expect_eq(kqos_pmu_delta(UINT64_MAX - 5, 10), 16);
	cr_expect_eq(kqos_pmu_delta(100, 250), 150);
}

Test(pmu, reopened_event_only_rebaselines)
{
	struct kqos_pmu_reading prev = { 5000, 1000000, 1000000 };
	struct kqos_pmu_reading same = { 6000, 2000000, 2000000 };
	struct kqos_pmu_reading fresh = { 10, 500, 500 };

	cr_expect(kqos_pmu_continues(&prev, &same));
	cr_expect_not(kqos_pmu_continues(&prev, &fresh));
	/* without times only the count can tell a re-opened event */
	cr_expect(kqos_pmu_continues(&(struct kqos_pmu_reading){ 10, 0, 0 },
				     &(struct kqos_pmu_reading){ 12, 0, 0 }));
	cr_expect_not(kqos_pmu_continues(&(struct kqos_pmu_reading){ 10, 0, 0 },
					 &(struct kqos_pmu_reading){ 3, 0, 0 }));
}

Test(pmu, multiplexed_counts_are_scaled)
{
	cr_expect_eq(kqos_pmu_scale(1000, 200, 100), 2000);
	cr_expect_eq(kqos_pmu_scale(1000, 200, 200), 1000);
	cr_expect_eq(kqos_pmu_scale(1000, 200, 0), 0);
	/* software events are read without times: nothing to scale */
	cr_expect_eq(kqos_pmu_scale(1000, 0, 0), 1000);
}

Test(pmu, rates_scale_and_derive_cpi_and_mpki)
{
	struct pmu_event_cfg ev[3] = { { "cycles", PMU_ROLE_CYCLES },
				       { "instructions", PMU_ROLE_INSTRUCTIONS },
				       { "LLC-LOAD-MISSES", PMU_ROLE_LLC_MISSES } };
	struct cg_totals prev, cur;
	struct test_rate r;
	double x;

	memset(&prev, 0, sizeof(prev));
	memset(&cur, 0, sizeof(cur));
	cur.cgid = prev.cgid = 7;
	cur.oncpu_ns = 1000;
	/* cycles ran half the time it was enabled: 1e9 counted -> 2e9 estimated */
	cur.pmu_count[0] = 1000000000;
	cur.pmu_enabled[0] = 1000;
	cur.pmu_running[0] = 500;
	cur.pmu_count[1] = 500000000;
	cur.pmu_enabled[1] = cur.pmu_running[1] = 1000;
	cur.pmu_count[2] = 1000000;
	cur.pmu_enabled[2] = cur.pmu_running[2] = 1000;
	cr_assert_eq(test_rates(&prev, 1, &cur, 1, 1000000000ULL, ev, 3, &r, 1), 1);
	cr_expect_float_eq(r.st.pmu->per_s[0], 2e9, 1);
	cr_expect_float_eq(r.st.pmu->running_ratio[0], 0.5, 1e-9);
	cr_expect_eq(r.st.pmu->total[0], 1000000000ULL);
	cr_assert_eq(rate_cpi(r.st.pmu->per_s, ev, 3, &x), 0);
	cr_expect_float_eq(x, 4.0, 1e-9);
	cr_assert_eq(rate_mpki(r.st.pmu->per_s, ev, 3, &x), 0);
	cr_expect_float_eq(x, 2.0, 1e-9);
	/* Without an instructions event there is no CPI: absent, not zero. */
	cr_expect_eq(rate_cpi(r.st.pmu->per_s, ev, 1, &x), -ENODATA);
}

Test(pmu, config_roles_extra_and_limits)
{
	struct pmu_event_cfg ev[KQOS_PMU_MAX];
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN] = "";

	config_defaults(&cfg);
	cr_assert_eq(config_pmu_events(&cfg, ev), 3);
	cr_expect_str_eq(ev[0].name, "cycles");
	cr_expect_eq(ev[2].role, PMU_ROLE_LLC_MISSES);

	cr_assert_eq(config_parse("t.json",
				  "{\"pmu\": {\"cycles\": \"\", \"llcMisses\": \"\","
				  " \"extra\": [\"context-switches\", \"task-clock\"]}}",
				  &cfg, err, sizeof(err)),
		     0, "%s", err);
	cr_assert_eq(config_pmu_events(&cfg, ev), 3);
	cr_expect_str_eq(ev[0].name, "instructions");
	cr_expect_str_eq(ev[1].name, "context-switches");
	cr_expect_eq(ev[1].role, PMU_ROLE_OTHER);

	config_defaults(&cfg);
	cr_expect_eq(config_parse("t.json",
				  "{\"pmu\": {\"extra\": [\"cpu-clock\", \"task-clock\"]}}", &cfg,
				  err, sizeof(err)),
		     -EINVAL);
	cr_expect_not_null(strstr(err, "key 'pmu': at most 4 events"), "%s", err);
	cr_expect_eq(config_parse("t.json", "{\"pmu\": {\"cycles\": \"cycels\"}}", &cfg, err,
				  sizeof(err)),
		     -EINVAL);
	cr_expect_not_null(strstr(err, "unknown PMU event 'cycels'"), "%s", err);
}
