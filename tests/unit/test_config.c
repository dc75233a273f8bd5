// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "config.h"
#include "opts.h"

static char path[64];

static void setup(void)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/kqos-cfg-XXXXXX");
	fd = mkstemp(path);
	cr_assert_geq(fd, 0);
	close(fd);
}

static void teardown(void)
{
	unlink(path);
}

static void write_cfg(const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

static int parse_args(struct kqos_opts *o, char *err, const char *a1, const char *a2,
		      const char *a3, const char *a4)
{
	char *argv[8] = { "kqosd" };
	int argc = 1;

	if (a1)
		argv[argc++] = (char *)a1;
	if (a2)
		argv[argc++] = (char *)a2;
	if (a3)
		argv[argc++] = (char *)a3;
	if (a4)
		argv[argc++] = (char *)a4;
	return opts_parse(argc, argv, o, err, CONFIG_ERR_LEN);
}

/* Parse @text and expect failure with @needle in the message. */
static void expect_error(const char *text, const char *needle)
{
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN] = "";

	config_defaults(&cfg);
	cr_assert_eq(config_parse("test.json", text, &cfg, err, sizeof(err)), -EINVAL, "%s", text);
	cr_assert_not_null(strstr(err, needle), "message '%s' lacks '%s'", err, needle);
}

Test(config, defaults)
{
	struct kqos_config cfg;

	config_defaults(&cfg);
	cr_assert_eq(cfg.interval_ns, 1000000000ULL);
	cr_assert_str_eq(cfg.cgroup_root, "/sys/fs/cgroup");
	cr_assert_eq(cfg.cgroup_mode, CG_MODE_AUTO);
	cr_assert_eq(cfg.log_level, LOG_INFO);
	cr_assert_eq(cfg.collector.max_cgroups, 16384);
	cr_assert_eq(cfg.collector.counter_slots, 0, "auto");
	cr_assert_not(cfg.dry_run);
}

Test(config, valid_file_sets_every_key, .init = setup, .fini = teardown)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	write_cfg("{\"interval\": \"250ms\", \"cgroupRoot\": \"/tmp/cg\", \"cgroupMode\": \"v2\",\n"
		  " \"logLevel\": \"debug\", \"dryRun\": true,\n"
		  " \"collector\": {\"maxCgroups\": 4096, \"reapInterval\": 30}}\n");
	cr_assert_eq(parse_args(&o, err, "--config", path, NULL, NULL), 0, "%s", err);
	cr_assert_eq(o.cfg.interval_ns, 250000000ULL);
	cr_assert_str_eq(o.cfg.cgroup_root, "/tmp/cg");
	cr_assert_eq(o.cfg.cgroup_mode, CG_MODE_V2);
	cr_assert_eq(o.cfg.log_level, LOG_DEBUG);
	cr_assert(o.cfg.dry_run);
	cr_assert_eq(o.cfg.collector.max_cgroups, 4096);
	cr_assert_eq(o.cfg.collector.reap_interval_ns, 30000000000ULL);
}

Test(config, unknown_key_names_key_and_position)
{
	expect_error("{\n  \"interval\": \"1s\",\n  \"intervall\": 2\n}",
		     "test.json:3:3: key 'intervall': unknown key");
}

Test(config, unknown_nested_key_names_its_path)
{
	expect_error("{\"collector\": {\n\t\"maxCgroups\": 100,\n    \"bogus\": 1}}",
		     "test.json:3:5: key 'collector.bogus': unknown key");
}

Test(config, wrong_types)
{
	expect_error("{\"interval\": true}", "key 'interval': expected a duration");
	expect_error("{\"dryRun\": \"yes\"}", "key 'dryRun': expected true or false");
	expect_error("{\"cgroupRoot\": 5}", "key 'cgroupRoot': expected a string");
	expect_error("{\"collector\": []}", "key 'collector': expected an object");
	expect_error("{\"collector\": {\"maxCgroups\": \"4\"}}", "expected an integer");
}

Test(config, out_of_range_and_bad_enums)
{
	expect_error("{\"collector\": {\"maxCgroups\": 0}}", "0 out of range [16, 4194304]");
	expect_error("{\"collector\": {\"counterSlots\": -2}}", "-2 out of range [-1, 4194304]");
	expect_error("{\"collector\": {\"maxCgroups\": 64, \"counterSlots\": 65}}",
		     "key 'collector.counterSlots': 65 is more than collector.maxCgroups (64)");
	expect_error("{\"interval\": \"10us\"}", "duration out of range");
	expect_error("{\"cgroupMode\": \"v3\"}", "expected one of auto|v1|v2");
	expect_error("{\"logLevel\": \"loud\"}", "expected one of error|warn|info|debug");
	expect_error("{\"interval\": \"-1s\"}", "expected a duration");
	expect_error("{\"interval\": 1e30}", "duration out of range");
}

Test(config, syntax_errors_carry_jansson_position)
{
	expect_error("{\n  \"interval\": \"1s\",,\n}", "test.json:2:");
	expect_error("[1, 2]", "the top level must be an object");
	expect_error("{\"interval\": \"1s\", \"interval\": \"2s\"}", "duplicate");
}

/* found by fuzz_config: a top-level key that looks like an array index "[i]" */
Test(config, unknown_key_shaped_like_an_index)
{
	expect_error("{\"[ods\": {\"souzce\": \"etcd\"}}", "test.json:1:1: key '[ods'");
}

Test(config, failed_parse_leaves_config_untouched)
{
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN];

	config_defaults(&cfg);
	cr_assert_neq(config_parse("t", "{\"interval\": \"5s\", \"x\": 1}", &cfg, err, sizeof(err)),
		      0);
	cr_assert_eq(cfg.interval_ns, 1000000000ULL);
}

Test(config, durations)
{
	__u64 ns;

	cr_assert_eq(parse_duration("1s", &ns), 0);
	cr_assert_eq(ns, 1000000000ULL);
	cr_assert_eq(parse_duration("250ms", &ns), 0);
	cr_assert_eq(ns, 250000000ULL);
	cr_assert_eq(parse_duration("0.5", &ns), 0);
	cr_assert_eq(ns, 500000000ULL);
	cr_assert_eq(parse_duration("2m", &ns), 0);
	cr_assert_eq(ns, 120000000000ULL);
	cr_assert_eq(parse_duration("100us", &ns), 0);
	cr_assert_eq(ns, 100000ULL);
	cr_assert_eq(parse_duration("1x", &ns), -EINVAL);
	cr_assert_eq(parse_duration("", &ns), -EINVAL);
	cr_assert_eq(parse_duration(" 1s", &ns), -EINVAL);
	cr_assert_eq(parse_duration("nan", &ns), -EINVAL);
	cr_assert_eq(parse_duration("inf", &ns), -EINVAL);
}

Test(opts, flags_override_the_file, .init = setup, .fini = teardown)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	write_cfg("{\"interval\": \"2s\", \"logLevel\": \"warn\"}");
	cr_assert_eq(parse_args(&o, err, "-c", path, "--interval=250ms", "--dry-run"), 0, "%s",
		     err);
	cr_assert_eq(o.cfg.interval_ns, 250000000ULL);
	cr_assert_eq(o.cfg.log_level, LOG_WARN, "file value kept where no flag was given");
	cr_assert(o.cfg.dry_run);
}

Test(opts, once_and_format)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	cr_assert_eq(parse_args(&o, err, "--once", "--format", "json", NULL), 0, "%s", err);
	cr_assert(o.once);
	cr_assert_eq(o.format, OUT_JSON);
	cr_assert_eq(o.cfg.interval_ns, 1000000000ULL);
}

Test(opts, bad_calls_fail_with_a_message)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	cr_assert_eq(parse_args(&o, err, "--interval", "soon", NULL, NULL), -EINVAL);
	cr_assert_not_null(strstr(err, "--interval: 'soon'"), "%s", err);
	cr_assert_eq(parse_args(&o, err, "--format", "xml", NULL, NULL), -EINVAL);
	cr_assert_not_null(strstr(err, "--format"), "%s", err);
	cr_assert_eq(parse_args(&o, err, "--bogus", NULL, NULL, NULL), -EINVAL);
	cr_assert_eq(parse_args(&o, err, "stray", NULL, NULL, NULL), -EINVAL);
	cr_assert_not_null(strstr(err, "stray"), "%s", err);
	cr_assert_eq(parse_args(&o, err, "--log-level", "chatty", NULL, NULL), -EINVAL);
	cr_assert_eq(parse_args(&o, err, "--cgroup-mode", "v9", NULL, NULL), -EINVAL);
}

Test(opts, missing_config_file_is_named)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	cr_assert_eq(parse_args(&o, err, "--config", "/nonexistent/kqos.json", NULL, NULL),
		     -ENOENT);
	cr_assert_not_null(strstr(err, "/nonexistent/kqos.json"), "%s", err);
}

Test(opts, help_and_version_skip_config)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	cr_assert_eq(parse_args(&o, err, "--help", "--config", "/nonexistent", NULL), 0);
	cr_assert(o.help);
	cr_assert_eq(parse_args(&o, err, "-V", NULL, NULL, NULL), 0);
	cr_assert(o.version);
}

Test(config, pods_exports_and_passthrough_objects)
{
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN] = "";

	config_defaults(&cfg);
	cr_assert_eq(
		config_parse(
			"t.json",
			"{\"pods\": {\"source\": \"static\", \"groups\": ["
			"{\"name\": \"db\", \"cgroup\": \"/system.slice/db.service\","
			" \"qosClass\": \"LS\"},"
			"{\"name\": \"batch\", \"cgroup\": \"/batch/*\", \"qosClass\": \"BE\"}]},"
			" \"export\": {\"textfileDir\": \"/var/lib/prometheus/node-exporter\","
			" \"socket\": \"\"},"
			" \"nodeSLO\": {\"resourceUsedThresholdWithBE\": {\"enable\": true}}}",
			&cfg, err, sizeof(err)),
		0, "%s", err);
	cr_expect_eq(cfg.pods.source, POD_SOURCE_STATIC);
	cr_assert_eq(cfg.pods.nr_groups, 2);
	cr_expect_str_eq(cfg.pods.groups[1].cgroup, "/batch/*");
	cr_expect_str_eq(cfg.pods.groups[1].qos_class, "BE");
	cr_expect_str_eq(cfg.export.socket, "");
	cr_expect_str_eq(cfg.node_slo_json, "{\"resourceUsedThresholdWithBE\":{\"enable\":true}}");
	cr_expect_str_eq(cfg.strategies_json, "", "absent object stays empty");
}

Test(config, bad_group_names_the_element_and_field)
{
	expect_error("{\"pods\": {\"groups\": [{\"name\": \"a\", \"cgroup\": \"/a\", \"qosClass\": "
		     "\"LS\"},\n {\"name\": \"b\", \"cgroups\": \"/b\"}]}}",
		     "key 'pods.groups[1].cgroups': unknown key");
	expect_error("{\"pods\": {\"groups\": [{\"name\": \"a\", \"cgroup\": \"/a\", \"qosClass\": "
		     "\"Gold\"}]}}",
		     "qosClass 'Gold' is not LSE|LSR|LS|BE|SYSTEM");
	expect_error("{\"nodeSLO\": [1]}", "key 'nodeSLO': expected an object");
	expect_error("{\"pods\": {\"source\": \"etcd\"}}",
		     "expected one of auto|kubelet|file|cgroup|static|none");
}

Test(config, check_config_loads_the_file_and_asks_for_nothing_else, .init = setup, .fini = teardown)
{
	struct kqos_opts o;
	char err[CONFIG_ERR_LEN] = "";

	write_cfg("{\"interval\": \"250ms\"}");
	cr_assert_eq(parse_args(&o, err, "--check-config", path, NULL, NULL), 0, "%s", err);
	cr_assert(o.check_config);
	cr_assert_str_eq(o.config_path, path);
	cr_assert_eq(o.cfg.interval_ns, 250000000ULL);

	/* the usual file:line:column message, as at start or on SIGHUP */
	write_cfg("{\n  \"collector\": {\"maxCgroups\": 0}}");
	cr_assert_eq(parse_args(&o, err, "--check-config", path, NULL, NULL), -EINVAL);
	cr_assert_not_null(strstr(err, path), "%s", err);
	cr_assert_not_null(strstr(err, ":2:"), "%s", err);
}

Test(config, eviction_keys_and_group_actions)
{
	struct kqos_config cfg;
	char err[CONFIG_ERR_LEN] = "";

	config_defaults(&cfg);
	cr_expect_eq(cfg.eviction.timeout_ns, 2000000000ULL);
	cr_expect_eq(cfg.eviction.kill_grace_ns, 10000000000ULL);
	cr_assert_eq(
		config_parse("t.json",
			     "{\"eviction\": {\"dryRun\": true, \"apiServer\": \"https://10.0.0.1\","
			     " \"timeout\": \"500ms\", \"killGrace\": \"0s\"},"
			     " \"pods\": {\"groups\": [{\"name\": \"b\", \"cgroup\": \"/b\","
			     " \"qosClass\": \"BE\", \"evictAction\": \"freeze\"},"
			     " {\"name\": \"l\", \"cgroup\": \"/l\", \"qosClass\": \"LS\"}]}}",
			     &cfg, err, sizeof(err)),
		0, "%s", err);
	cr_expect(cfg.eviction.dry_run);
	cr_expect_str_eq(cfg.eviction.api_server, "https://10.0.0.1");
	cr_expect_eq(cfg.eviction.timeout_ns, 500000000ULL);
	cr_expect_eq(cfg.eviction.kill_grace_ns, 0);
	cr_expect_eq(cfg.pods.groups[0].evict_action, 2, "freeze");
	cr_expect_eq(cfg.pods.groups[1].evict_action, 0, "none by default");
	cr_expect_neq(config_parse("t.json",
				   "{\"pods\": {\"groups\": [{\"name\": \"b\", \"cgroup\": \"/b\","
				   " \"evictAction\": \"stop\"}]}}",
				   &cfg, err, sizeof(err)),
		      0);
	cr_expect_not_null(strstr(err, "evictAction"), "%s", err);
}
