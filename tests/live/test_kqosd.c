// SPDX-License-Identifier: GPL-2.0
/* kqosd as a process: --once output, signals, reload, bad calls. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "live.h"
#include "resctrl_fake.h"

static char kqosd[512], cfg[64], errlog[64], outlog[64];
static pid_t daemon_pid = -1, load_pid = -1;

static void setup(void)
{
	const char *out = getenv("OUTPUT");
	int fd;

	if (!live_require_root())
		return;
	live_sweep_stale();
	snprintf(kqosd, sizeof(kqosd), "%s/kqosd", out ? out : ".output");
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	snprintf(cfg, sizeof(cfg), "/tmp/kqosd-cfg-XXXXXX");
	snprintf(errlog, sizeof(errlog), "/tmp/kqosd-err-XXXXXX");
	snprintf(outlog, sizeof(outlog), "/tmp/kqosd-out-XXXXXX");
	fd = mkstemp(cfg);
	close(fd);
	fd = mkstemp(errlog);
	close(fd);
	fd = mkstemp(outlog);
	close(fd);
}

static void teardown(void)
{
	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
	}
	live_kill(load_pid);
	live_cg_destroy("cpu", "daemon");
	unlink(cfg);
	unlink(errlog);
	unlink(outlog);
}

static pid_t start(char *const argv[])
{
	pid_t pid = fork();

	if (pid == 0) {
		int e = open(errlog, O_WRONLY | O_TRUNC);
		int o = open(outlog, O_WRONLY | O_TRUNC);

		dup2(e, 2);
		dup2(o, 1);
		execv(kqosd, argv);
		_exit(127);
	}
	return pid;
}

static int wait_exit(pid_t pid)
{
	int st;

	cr_assert_eq(waitpid(pid, &st, 0), pid);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static bool log_has(const char *path, const char *needle)
{
	char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

/* Poll @path for @needle for up to @ms. */
static bool wait_log(const char *path, const char *needle, int ms)
{
	for (int t = 0; t < ms; t += 50) {
		if (log_has(path, needle))
			return true;
		live_sleep_ms(50);
	}
	return false;
}

static void write_cfg(const char *text)
{
	FILE *f = fopen(cfg, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

Test(kqosd, once_json_lists_a_busy_cgroup, .init = setup, .fini = teardown, .timeout = 30)
{
	char *argv[] = { kqosd, "--once", "--format", "json", "--interval", "1s", NULL };
	char want[128];
	json_error_t jerr;
	json_t *root, *cg;
	size_t i;
	bool found = false;

	cr_assert_eq(live_cg_create("cpu", "daemon"), 0);
	load_pid = live_spawn(100);
	cr_assert_eq(live_cg_attach("cpu", "daemon", load_pid), 0);
	live_go(load_pid);
	cr_assert_eq(wait_exit(start(argv)), 0);
	root = json_load_file(outlog, 0, &jerr);
	cr_assert_not_null(root, "not JSON: %s", jerr.text);
	cr_expect_str_eq(json_string_value(json_object_get(root, "hierarchy")), "v1-cpu");
	snprintf(want, sizeof(want), "/kqos-test-%d-daemon", (int)getpid());
	json_array_foreach(json_object_get(root, "cgroups"), i, cg) {
		json_t *st = json_object_get(cg, "stats");

		if (strcmp(json_string_value(json_object_get(cg, "cgroup")), want))
			continue;
		found = true;
		cr_expect_gt(json_real_value(json_object_get(st, "cpu_cores")), 0.05);
		/* Without PMU events (no hardware PMU here) the metrics are absent, not zero. */
		if (!json_array_size(json_object_get(root, "pmu_events")))
			cr_expect_null(json_object_get(st, "pmu"));
		cr_expect(json_is_object(json_object_get(st, "rq_wait")));
	}
	cr_expect(found, "%s missing from --once output", want);
	json_decref(root);
}

Test(kqosd, reload_keeps_last_good_config_and_sigterm_stops, .init = setup, .fini = teardown,
     .timeout = 30)
{
	char *argv[] = { kqosd, "--config", cfg, NULL };

	write_cfg("{\"interval\": \"200ms\"}");
	daemon_pid = start(argv);
	cr_assert(wait_log(errlog, "kqosd started", 10000), "did not start");

	write_cfg("{\"interval\": \"200ms\", \"bogus\": 1}");
	kill(daemon_pid, SIGHUP);
	cr_expect(wait_log(errlog, "config reload failed, keeping the running config", 5000));
	cr_expect(log_has(errlog, "key 'bogus': unknown key"));
	cr_expect_eq(kill(daemon_pid, 0), 0, "kqosd died on a bad reload");

	write_cfg("{\"interval\": \"300ms\", \"logLevel\": \"debug\", \"procRoot\": \"/tmp\"}");
	kill(daemon_pid, SIGHUP);
	cr_expect(wait_log(errlog, "config reloaded", 5000));
	cr_expect(log_has(errlog, "keys=procRoot"), "a start-only key is named, not applied");
	cr_expect(wait_log(errlog, "msg=\"tick\"", 5000), "debug level not applied");

	kill(daemon_pid, SIGTERM);
	cr_expect_eq(wait_exit(daemon_pid), 0);
	daemon_pid = -1;
	cr_expect(log_has(errlog, "msg=\"stopping\""));
}

Test(kqosd, bad_calls_exit_nonzero_with_a_message, .init = setup, .fini = teardown)
{
	char *bad_flag[] = { kqosd, "--interval", "never", NULL };
	char *bad_file[] = { kqosd, "--config", cfg, "--once", NULL };

	cr_expect_eq(wait_exit(start(bad_flag)), 1);
	cr_expect(log_has(errlog, "--interval: 'never'"));
	write_cfg("{\"interval\": 3,}");
	cr_expect_eq(wait_exit(start(bad_file)), 1);
	cr_expect(log_has(errlog, cfg), "the message names the file");
}

/* resctrl on its own cadence, from a fake tree (this host has no RDT): groups in the snapshot. */
Test(kqosd, resctrl_groups_reach_the_snapshot, .init = setup, .fini = teardown, .timeout = 30)
{
	struct resctrl_fake *fake;
	struct resctrl *r;
	json_error_t jerr;
	json_t *root, *rdt, *g;
	char rootarg[512];
	char *argv[] = { kqosd, "--once",	  "--format", "json", "--socket",
			 "",	"--resctrl-root", rootarg,    NULL };

	cr_assert_eq(resctrl_fake__new("skx2s", &fake), 0);
	cr_assert_eq(resctrl_fake__open(fake, &r), 0);
	cr_assert_eq(resctrl_group_create(r, "BE"), 0);
	cr_assert_eq(resctrl_fake__set_occupancy(fake, "kqos-BE", 1, 3 << 20), 0);
	snprintf(rootarg, sizeof(rootarg), "%s", resctrl_fake__root(fake));
	cr_expect_eq(wait_exit(start(argv)), 0);
	root = json_load_file(outlog, 0, &jerr);
	resctrl_close(r);
	resctrl_fake__free(fake);
	cr_assert_not_null(root, "not JSON: %s", jerr.text);
	rdt = json_object_get(root, "resctrl");
	cr_expect(json_is_true(json_object_get(rdt, "enabled")));
	g = json_array_get(json_object_get(rdt, "groups"), 0);
	cr_assert_not_null(g);
	cr_expect_str_eq(json_string_value(json_object_get(g, "group")), "kqos-BE");
	cr_expect_str_eq(json_string_value(json_object_get(g, "class")), "BE");
	cr_expect_eq(
		json_integer_value(json_object_get(json_array_get(json_object_get(g, "domains"), 1),
						   "llc_occupancy_bytes")),
		3 << 20);
	json_decref(root);
}

Test(kqosd, no_resctrl_is_one_log_line_and_off, .init = setup, .fini = teardown, .timeout = 30)
{
	char *argv[] = { kqosd,	     "--once", "--format",	 "json",
			 "--socket", "",       "--resctrl-root", "/nonexistent/resctrl",
			 NULL };
	json_error_t jerr;
	json_t *root;

	cr_expect_eq(wait_exit(start(argv)), 0);
	cr_expect(log_has(errlog, "resctrl is not mounted"));
	root = json_load_file(outlog, 0, &jerr);
	cr_assert_not_null(root);
	cr_expect(json_is_false(json_object_get(json_object_get(root, "resctrl"), "enabled")));
	json_decref(root);
}
