// SPDX-License-Identifier: GPL-2.0
/* The Prometheus textfile: format rules, promtool, node_exporter, atomic replace. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "export.h"
#include "export_prom.h"
#include "snapjson.h"
#include "test_export_snap.h"

static char dir[64];
static pid_t ne_pid = -1;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/kqos-export-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	if (ne_pid > 0) {
		kill(ne_pid, SIGKILL);
		waitpid(ne_pid, NULL, 0);
		ne_pid = -1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(export_prom, .init = setup, .fini = teardown);

/* Temp files of the writer in this test's own directory (tests run in parallel). */
static int count_temp(void)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "kqos.prom.tmp.", 14);
	closedir(d);
	return n;
}

static struct agent_stages stages;

static char *render(struct snapshot *s)
{
	struct prom_health h = { .textfile_write_errors = 3, .stages = &stages };
	char *text = NULL;
	size_t len = 0;

	cr_assert_eq(prom_render(s, &snap_fx_en, &h, &text, &len), 0);
	cr_assert_eq(strlen(text), len);
	return text;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t cap = 0, len;

	if (!f)
		return NULL;
	len = getdelim(&buf, &cap, '\0', f);
	fclose(f);
	if (len == (size_t)-1) {
		free(buf);
		return strdup("");
	}
	return buf;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs(text, f);
	fclose(f);
}

/* promtool check metrics < file; returns its exit status, prints findings. */
static int promtool(const char *text)
{
	char path[128], cmd[256];
	int rc;

	snprintf(path, sizeof(path), "%s/in.txt", dir);
	write_file(path, text);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < '%s' >&2", path);
	rc = system(cmd);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

Test(export_prom, rich_node_passes_promtool)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s);

	cr_assert_eq(promtool(text), 0, "promtool findings above; file:\n%s", text);
	free(text);
	snapshot__put(s);
}

Test(export_prom, pods_without_metrics_pass_promtool)
{
	struct snapshot *s = snap_fx_bare();
	char *text = render(s);

	cr_assert_eq(promtool(text), 0, "file:\n%s", text);
	/* nothing measured: no per-pod family at all, not zeros */
	cr_assert_null(strstr(text, "kqos_pod_"), "%s", text);
	cr_assert_null(strstr(text, "kqos_resctrl_"));
	cr_assert_null(strstr(text, "pmu"));
	cr_assert_null(strstr(text, "kqos_enforce_be_cpus"));
	cr_assert_not_null(strstr(text, "kqos_build_info{"));
	free(text);
	snapshot__put(s);
}

/* End of the `name{labels}` part of a sample line, honouring escapes in label values. */
static const char *series_end(const char *line)
{
	const char *p = line + strcspn(line, "{ ");
	bool in_q = false;

	if (*p != '{')
		return p;
	for (p++; *p; p++) {
		if (in_q && *p == '\\' && p[1])
			p++;
		else if (*p == '"')
			in_q = !in_q;
		else if (!in_q && *p == '}')
			return p + 1;
	}
	return NULL;
}

static bool has_suffix(const char *s, size_t len, const char *suf)
{
	size_t n = strlen(suf);

	return len >= n && !strncmp(s + len - n, suf, n);
}

Test(export_prom, no_timestamps_unique_series_typed_families)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s), *save = NULL, *line;
	char **seen = calloc(4096, sizeof(char *)), typed[512][96] = { { 0 } }, done[512][96];
	size_t nr_seen = 0, nr_typed = 0, nr_done = 0;
	char cur[96] = "";

	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *end, *val;
		char fam[96];
		size_t nlen;

		if (!strncmp(line, "# TYPE ", 7)) {
			sscanf(line + 7, "%95s", typed[nr_typed]);
			/* a family's lines are contiguous: a name never comes back */
			for (size_t i = 0; i < nr_done; i++)
				cr_assert_str_neq(done[i], typed[nr_typed], "family %s split",
						  done[i]);
			snprintf(done[nr_done++], 96, "%s", cur);
			snprintf(cur, sizeof(cur), "%s", typed[nr_typed++]);
			continue;
		}
		if (line[0] == '#')
			continue;
		end = series_end(line);
		cr_assert_not_null(end, "unterminated labels: %s", line);
		/* exactly one value after the series: a second field would be a timestamp */
		cr_assert_eq(*end, ' ', "%s", line);
		val = end + 1;
		cr_assert_eq(strchr(val, ' '), NULL, "timestamp or junk in: %s", line);
		cr_assert_gt(strlen(val), 0);
		for (size_t i = 0; i < nr_seen; i++)
			cr_assert_neq(strncmp(seen[i], line, (size_t)(end - line)) == 0 &&
					      seen[i][end - line] == '\0',
				      1, "duplicate series: %.*s", (int)(end - line), line);
		seen[nr_seen++] = strndup(line, (size_t)(end - line));
		/* the sample belongs to the family declared last (histograms by suffix) */
		nlen = strcspn(line, "{ ");
		snprintf(fam, sizeof(fam), "%.*s", (int)nlen, line);
		if (strcmp(fam, cur)) {
			cr_assert(has_suffix(fam, nlen, "_bucket") ||
					  has_suffix(fam, nlen, "_sum") ||
					  has_suffix(fam, nlen, "_count"),
				  "sample %s outside its family %s", fam, cur);
			cr_assert_eq(strncmp(fam, cur, strlen(cur)), 0, "%s in %s", fam, cur);
		}
	}
	cr_assert_gt(nr_seen, 100);
	for (size_t i = 0; i < nr_seen; i++)
		free(seen[i]);
	free(seen);
	free(text);
	snapshot__put(s);
}

Test(export_prom, help_and_type_for_every_family_counters_by_full_name)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s);

	cr_assert_not_null(strstr(text, "# HELP kqos_pod_cpu_seconds_total "));
	cr_assert_not_null(strstr(text, "# TYPE kqos_pod_cpu_seconds_total counter\n"));
	cr_assert_not_null(strstr(text, "# TYPE kqos_pod_runqueue_latency_seconds histogram\n"));
	cr_assert_not_null(strstr(text, "# TYPE kqos_enforce_actions_total counter\n"));
	cr_assert_not_null(strstr(text, "# TYPE kqos_resctrl_llc_occupancy_bytes gauge\n"));
	cr_assert_not_null(strstr(text, "# TYPE kqos_resctrl_mbm_total_bytes_total counter\n"));
	free(text);
	snapshot__put(s);
}

/* The snapshot JSON: each pod's priority+QoS class and its mid (and batch) pod-level sums. */
Test(snapjson, priority_qos_class_and_mid_resources)
{
	static struct pod_container c[2] = { { .name = "worker" }, { .name = "helper" } };
	struct snapshot *s;
	json_t *root, *pods, *p, *mid;
	char *text;
	size_t i;

	for (int k = 0; k < 2; k++) {
		pod_res_init(&c[k].requests);
		pod_res_init(&c[k].limits);
	}
	c[0].requests.mid_cpu_milli = 1000;
	c[0].limits.mid_cpu_milli = 1500;
	c[0].limits.mid_memory_bytes = 1 << 30;
	c[1].requests.mid_cpu_milli = 250;
	c[1].limits.mid_memory_bytes = 1 << 20; /* no cpu limit: the pod's is unlimited */
	snap_fx_pods[1].containers = c;
	snap_fx_pods[1].nr_containers = 2;
	s = snap_fx_rich(1);
	text = snapjson_format(s, NULL, false);
	cr_assert_not_null(text);
	root = json_loads(text, 0, NULL);
	cr_assert_not_null(root, "%s", text);
	pods = json_object_get(root, "pods");
	json_array_foreach(pods, i, p) {
		const char *name = json_string_value(json_object_get(p, "name"));
		const char *pq = json_string_value(json_object_get(p, "priority_qos_class"));

		cr_assert_not_null(pq, "%s", name);
		if (!strcmp(name, "web-0"))
			cr_expect_str_eq(pq, "koord-prod/LS");
		if (!strcmp(name, "db-4"))
			cr_expect_str_eq(pq, "", "koord-batch/LSR is invalid");
		if (strcmp(name, "batch-1")) {
			cr_expect_null(json_object_get(p, "mid_resources"), "%s", name);
			continue;
		}
		cr_expect_str_eq(pq, "koord-mid/BE");
		mid = json_object_get(p, "mid_resources");
		cr_assert_not_null(mid, "%s", text);
		cr_expect_eq(json_integer_value(json_object_get(json_object_get(mid, "requests"),
								"cpu_milli")),
			     1250);
		cr_expect_null(json_object_get(json_object_get(mid, "limits"), "cpu_milli"),
			       "a container without a limit: unlimited, absent");
		cr_expect_eq(json_integer_value(json_object_get(json_object_get(mid, "limits"),
								"memory_bytes")),
			     (1 << 30) + (1 << 20));
		cr_expect_null(json_object_get(p, "batch_resources"));
	}
	json_decref(root);
	free(text);
	snapshot__put(s);
}

Test(export_prom, values_units_and_labels)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s);
	const char *web = "pod=\"web-0\",namespace=\"shop\",qos_class=\"LS\","
			  "priority_qos_class=\"koord-prod/LS\"";
	char want[512];

	/* 12.5e9 * 3 ns = 37.5 s */
	snprintf(want, sizeof(want), "kqos_pod_cpu_seconds_total{%s} 37.5\n", web);
	cr_assert_not_null(strstr(text, want), "%s", text);
	snprintf(want, sizeof(want),
		 "kqos_container_cpu_seconds_total{pod=\"web-0\",namespace=\"shop\","
		 "container=\"web\",qos_class=\"LS\",priority_qos_class=\"koord-prod/LS\"} 25\n");
	cr_assert_not_null(strstr(text, want));
	/* first bucket 2^10 ns, last 2^33 ns, +Inf = count = rq_waits_total = 3024 */
	snprintf(want, sizeof(want),
		 "kqos_pod_runqueue_latency_seconds_bucket{%s,le=\"1.024e-06\"} 0\n", web);
	cr_assert_not_null(strstr(text, want), "%s", want);
	snprintf(want, sizeof(want),
		 "kqos_pod_runqueue_latency_seconds_bucket{%s,le=\"8.589934592\"} 2783\n", web);
	cr_assert_not_null(strstr(text, want), "%s", want);
	snprintf(want, sizeof(want),
		 "kqos_pod_runqueue_latency_seconds_bucket{%s,le=\"+Inf\"} 3024\n", web);
	cr_assert_not_null(strstr(text, want));
	snprintf(want, sizeof(want), "kqos_pod_runqueue_latency_seconds_count{%s} 3024\n", web);
	cr_assert_not_null(strstr(text, want));
	snprintf(want, sizeof(want), "kqos_pod_runqueue_latency_seconds_sum{%s} 0.9\n", web);
	cr_assert_not_null(strstr(text, want), "%s", want);
	snprintf(want, sizeof(want), "kqos_pod_cpu_throttled_seconds_total{%s} 7.5\n", web);
	cr_assert_not_null(strstr(text, want));
	snprintf(want, sizeof(want),
		 "kqos_pod_pmu_events_total{%s,event=\"instructions\"} 3000000000000\n", web);
	cr_assert_not_null(strstr(text, want), "%s", want);
	snprintf(want, sizeof(want), "kqos_pod_pmu_scaling_ratio{%s,event=\"cycles\"} 0.5\n", web);
	cr_assert_not_null(strstr(text, want));
	/* bare-metal group and cgroups outside pods */
	cr_assert_not_null(strstr(text, "kqos_pod_cpu_seconds_total{pod=\"batchgrp\",namespace="
					"\"bare-metal\",qos_class=\"BE\",priority_qos_class="
					"\"koord-batch/BE\",cgroup=\"/batch.slice\"} "));
	/* the priority+QoS class of each pod; "" for an invalid pair */
	cr_assert_not_null(strstr(text, "namespace=\"jobs\",qos_class=\"BE\","
					"priority_qos_class=\"koord-mid/BE\"}"));
	cr_assert_not_null(strstr(text, "qos_class=\"LSR\",priority_qos_class=\"\"}"), "%s", text);
	cr_assert_not_null(strstr(text, "kqos_cgroup_cpu_seconds_total{cgroup=\"/system.slice/"
					"sshd.service\"} "));
	/* resctrl: pod group with its pod, class group with its class, per cache id */
	cr_assert_not_null(strstr(text, "kqos_resctrl_llc_occupancy_bytes{group=\"kqos-pod-web-0\","
					"pod=\"web-0\",namespace=\"shop\",qos_class=\"LS\","
					"cache_id=\"1\"} 4194304\n"),
			   "%s", text);
	cr_assert_not_null(strstr(text, "kqos_resctrl_mbm_local_bytes_total{group=\"kqos-BE\","
					"qos_class=\"BE\",cache_id=\"0\"} 500000000\n"));
	cr_assert_not_null(strstr(text, "kqos_resctrl_l3_cbm_ways{group=\"kqos-LS\",qos_class="
					"\"LS\",cache_id=\"1\"} 8\n"));
	/* enforcement and health */
	cr_assert_not_null(strstr(text, "kqos_enforce_be_cpus 2\n"));
	cr_assert_not_null(strstr(text, "kqos_enforce_be_cpu_quota_seconds 0.2\n"));
	cr_assert_not_null(strstr(text, "kqos_enforce_actions_total{strategy=\"cpu_suppress\","
					"knob=\"cfs_quota\",result=\"error\"} 2\n"));
	cr_assert_not_null(strstr(text, "kqos_write_errors_total 2\n"));
	cr_assert_not_null(strstr(text, "kqos_collector_slots 682\n"));
	cr_assert_not_null(strstr(text, "kqos_collector_cgroups{source=\"slot\"} 682\n"));
	cr_assert_not_null(strstr(text, "kqos_collector_cgroups{source=\"hash\"} 40\n"));
	cr_assert_not_null(strstr(text, "kqos_collector_slot_push_failures_total 3\n"));
	cr_assert_not_null(strstr(text, "kqos_collector_slots_pending 1\n"));
	cr_assert_not_null(strstr(text, "kqos_textfile_write_errors_total 3\n"));
	cr_assert_not_null(strstr(text, "kqos_last_cycle_timestamp_seconds 1795900001\n"));
	/* the library may be built at another commit than this test: only the shape */
	cr_assert_not_null(strstr(text, "kqos_build_info{version=\""));
	free(text);
	snapshot__put(s);
}

Test(export_prom, the_agents_stage_timers_are_a_histogram_per_stage)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text;

	stages = (struct agent_stages){ 0 };
	stages_add(&stages, STAGE_BUILD, 3000000);
	stages_add(&stages, STAGE_BUILD, 1000);
	text = render(s);
	cr_expect(strstr(text, "# TYPE kqos_agent_stage_seconds histogram\n"));
	cr_expect(strstr(text, "kqos_agent_stage_seconds_bucket{stage=\"build\",le=\"1e-06\"} 1\n"),
		  "%s", text);
	cr_expect(strstr(text,
			 "kqos_agent_stage_seconds_bucket{stage=\"build\",le=\"0.004096\"} 2\n"));
	cr_expect(strstr(text, "kqos_agent_stage_seconds_count{stage=\"build\"} 2\n"));
	cr_expect(strstr(text, "kqos_agent_stage_seconds_sum{stage=\"build\"} 0.003001\n"));
	cr_expect(strstr(text, "kqos_agent_stage_seconds_count{stage=\"wall\"} 0\n"));
	free(text);
	snapshot__put(s);
}

Test(export_prom, absent_metrics_have_no_sample)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s);

	/* idle-2 never ran: no series at all for it */
	cr_assert_null(strstr(text, "pod=\"idle-2\""), "%s", text);
	/* db-4 ran but has no cpu.stat: cpu yes, throttling no */
	cr_assert_not_null(strstr(text, "kqos_pod_cpu_seconds_total{pod=\"db-4\""));
	cr_assert_null(strstr(text, "kqos_pod_cpu_periods_total{pod=\"db-4\""));
	/* batch-1 has no PMU samples */
	cr_assert_null(strstr(text, "kqos_pod_pmu_events_total{pod=\"batch-1\""));
	free(text);
	snapshot__put(s);
}

Test(export_prom, label_values_are_escaped)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text;

	snapshot__put(s);
	s = snap_fx_rich(1);
	/* give the escaping pod some CPU so it gets series */
	snap_fx_stats(&s->pods[2].st, 1.0, 0);
	text = render(s);
	cr_assert_not_null(strstr(text, "namespace=\"esc\\\"a\\\\b\\nc\""), "%s", text);
	cr_assert_eq(promtool(text), 0);
	free(text);
	snapshot__put(s);
}

Test(export_prom, vanished_pods_stop_appearing)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s);

	cr_assert_not_null(strstr(text, "pod=\"batch-1\""));
	free(text);
	/* batch-1 is gone in the next tick */
	free(s->pods[1].cgroup);
	free(s->pods[1].ctrs[0].cgroup);
	free(s->pods[1].ctrs);
	memmove(&s->pods[1], &s->pods[2], 3 * sizeof(*s->pods));
	s->nr_pods = 4;
	text = render(s);
	cr_assert_null(strstr(text, "pod=\"batch-1\""));
	cr_assert_not_null(strstr(text, "pod=\"web-0\""));
	free(text);
	snapshot__put(s);
}

Test(export_prom, duplicate_pod_names_keep_one_series)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text, *p;
	int n = 0;

	/* db-4 renamed to a twin of web-0 (a pod recreated under the same name) */
	s->pods[4].pod = &snap_fx_pods[0];
	text = render(s);
	for (p = text; (p = strstr(p, "kqos_pod_cpu_seconds_total{pod=\"web-0\"")); p++)
		n++;
	cr_assert_eq(n, 1, "%s", text);
	free(text);
	snapshot__put(s);
}

Test(export_prom, write_replaces_the_file_and_leaves_no_temp)
{
	char path[128], *got;

	snprintf(path, sizeof(path), "%s/kqos.prom", dir);
	cr_assert_eq(prom_write_textfile(dir, "a 1\n", 4), 0);
	cr_assert_eq(prom_write_textfile(dir, "b 2\n", 4), 0);
	got = slurp(path);
	cr_assert_str_eq(got, "b 2\n");
	free(got);
	cr_assert_eq(count_temp(), 0);
	cr_assert_eq(prom_write_textfile("/nonexistent-kqos-dir", "a 1\n", 4), -ENOENT);
}

/*
 * The writer stops dead after half of the temp file (the test hook leaves the file system as a
 * crash at that byte would, without forking a multithreaded test worker): the old kqos.prom
 * must survive intact, and the next start sweeps the half file.
 */
Test(export_prom, crash_mid_write_never_leaves_partial_file)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s), path[128], *got;
	size_t len = strlen(text);

	snprintf(path, sizeof(path), "%s/kqos.prom", dir);
	cr_assert_eq(prom_write_textfile(dir, "kqos_old 1\n", 11), 0);
	prom_test_abort_after = (long)(len / 2);
	cr_assert_eq(prom_write_textfile(dir, text, len), -ECANCELED);
	prom_test_abort_after = -1;
	got = slurp(path);
	cr_assert_str_eq(got, "kqos_old 1\n");
	free(got);
	/* the half temp file is there (the crash was real), never under a *.prom name */
	cr_assert_eq(count_temp(), 1);
	prom_sweep_temp(dir);
	cr_assert_eq(count_temp(), 0);
	/* and the next write works */
	cr_assert_eq(prom_write_textfile(dir, text, len), 0);
	got = slurp(path);
	cr_assert_str_eq(got, text);
	free(got);
	free(text);
	snapshot__put(s);
}

Test(export_prom, exporter_writes_on_its_interval)
{
	struct export_opts o = { .textfile_dir = dir, .textfile_interval_ns = 10000000000ULL };
	struct snapshot *s1 = snap_fx_rich(1), *s2 = snap_fx_rich(2), *s3 = snap_fx_rich(3);
	struct exporter *e = NULL;
	char path[128], *got;

	snprintf(path, sizeof(path), "%s/kqos.prom", dir);
	cr_assert_eq(exporter__new(&o, &e), 0);
	cr_assert_eq(exporter__epoll_fd(e), -1, "no socket configured");
	exporter__publish(e, s1, &snap_fx_en, 1000000000ULL);
	got = slurp(path);
	cr_assert_not_null(strstr(got, "kqos_last_cycle_timestamp_seconds 1795900001\n"));
	free(got);
	exporter__publish(e, s2, &snap_fx_en, 6000000000ULL); /* 5 s later: not yet */
	got = slurp(path);
	cr_assert_not_null(strstr(got, "kqos_last_cycle_timestamp_seconds 1795900001\n"));
	free(got);
	exporter__publish(e, s3, &snap_fx_en, 11000000000ULL);
	got = slurp(path);
	cr_assert_not_null(strstr(got, "kqos_last_cycle_timestamp_seconds 1795900003\n"));
	free(got);
	snapshot__put(s1);
	snapshot__put(s2);
	snapshot__put(s3);
	exporter__free(e);
	exporter__free(NULL);
}

Test(export_prom, unwritable_dir_counts_errors_and_keeps_going)
{
	char gone[128];
	struct export_opts o = { .textfile_dir = gone, .textfile_interval_ns = 1 };
	struct snapshot *s = snap_fx_rich(1);
	struct exporter *e = NULL;

	/* there at start, removed under the agent's feet: every write fails, none is fatal */
	snprintf(gone, sizeof(gone), "%s/gone", dir);
	cr_assert_eq(exporter__new(&o, &e), 0);
	cr_assert_eq(rmdir(gone), 0);
	exporter__publish(e, s, &snap_fx_en, 1);
	exporter__publish(e, s, &snap_fx_en, 10);
	cr_assert_eq(exporter__textfile_write_errors(e), 2);
	exporter__free(e);
	snapshot__put(s);
}

Test(export_prom, a_missing_dir_is_created_with_its_parents)
{
	char sub[128], path[160], *got;
	struct export_opts o = { .textfile_dir = sub };
	struct snapshot *s = snap_fx_rich(1);
	struct exporter *e = NULL;

	snprintf(sub, sizeof(sub), "%s/node-exporter/textfile", dir);
	snprintf(path, sizeof(path), "%s/kqos.prom", sub);
	cr_assert_eq(exporter__new(&o, &e), 0);
	exporter__publish(e, s, &snap_fx_en, 1);
	got = slurp(path);
	cr_assert_not_null(strstr(got, "kqos_"));
	free(got);
	exporter__free(e);
	snapshot__put(s);
}

Test(export_prom, an_uncreatable_dir_refuses_to_start)
{
	char file[128], below[160];
	struct export_opts o = { .textfile_dir = below };
	struct exporter *e = NULL;
	FILE *f;

	/* a regular file in the way: mkdir fails even for root */
	snprintf(file, sizeof(file), "%s/not-a-dir", dir);
	snprintf(below, sizeof(below), "%s/textfile", file);
	f = fopen(file, "w");
	cr_assert_not_null(f);
	fclose(f);
	cr_assert_eq(exporter__new(&o, &e), -ENOTDIR);
	cr_assert_null(e);
	o.textfile_dir = file;
	cr_assert_eq(exporter__new(&o, &e), -ENOTDIR);
}

/* --- a real node_exporter ----------------------------------------------------------------- */

static int free_port(void)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM, 0), port;

	cr_assert_geq(fd, 0);
	cr_assert_eq(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	cr_assert_eq(getsockname(fd, (struct sockaddr *)&sa, &len), 0);
	port = ntohs(sa.sin_port);
	close(fd);
	return port;
}

static char *scrape(int port)
{
	char cmd[256], *out = NULL;
	size_t cap = 0;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "curl -sf --max-time 2 http://127.0.0.1:%d/metrics", port);
	p = popen(cmd, "r");
	if (!p)
		return NULL;
	if (getdelim(&out, &cap, '\0', p) < 0) {
		free(out);
		out = NULL;
	}
	if (pclose(p)) {
		free(out);
		out = NULL;
	}
	return out;
}

Test(export_prom, node_exporter_reads_the_textfile)
{
	struct export_opts o = { .textfile_dir = dir };
	struct snapshot *s = snap_fx_rich(1);
	struct exporter *e = NULL;
	char listen[64], tfdir[160], *body = NULL;
	int port = free_port();

	cr_assert_eq(exporter__new(&o, &e), 0);
	snap_fx_stats(&s->pods[2].st, 1.0, 0); /* the escaped namespace gets series too */
	exporter__publish(e, s, &snap_fx_en, 1);
	exporter__free(e);
	snapshot__put(s);

	snprintf(listen, sizeof(listen), "--web.listen-address=127.0.0.1:%d", port);
	snprintf(tfdir, sizeof(tfdir), "--collector.textfile.directory=%s", dir);
	/* posix_spawn, not fork: the test worker is multithreaded. */
	{
		char *argv[] = { "prometheus-node-exporter",
				 "--collector.disable-defaults",
				 "--collector.textfile",
				 tfdir,
				 listen,
				 NULL };
		posix_spawn_file_actions_t fa;

		posix_spawn_file_actions_init(&fa);
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
		cr_assert_eq(posix_spawnp(&ne_pid, argv[0], &fa, NULL, argv, environ), 0);
		posix_spawn_file_actions_destroy(&fa);
	}
	for (int i = 0; i < 100 && !body; i++) {
		usleep(100000);
		body = scrape(port);
	}
	cr_assert_not_null(body, "node_exporter did not answer on port %d", port);
	cr_assert_not_null(strstr(body, "\nnode_textfile_scrape_error 0\n"), "%s", body);
	cr_assert_not_null(
		strstr(body,
		       "kqos_pod_cpu_seconds_total{cgroup=\"\",namespace=\"shop\",pod=\"web-0\","
		       "priority_qos_class=\"koord-prod/LS\",qos_class=\"LS\"} 37.5\n"),
		"%s", body);
	cr_assert_not_null(strstr(body, "kqos_pod_runqueue_latency_seconds_bucket{"));
	cr_assert_not_null(strstr(body, "kqos_resctrl_llc_occupancy_bytes{"));
	cr_assert_not_null(strstr(body, "kqos_build_info{"));
	cr_assert_not_null(strstr(body, "namespace=\"esc\\\"a\\\\b\\nc\""));
	free(body);
}

Test(export_prom, resctrl_control_families)
{
	struct snapshot *s = snap_fx_rich(1);
	char *text = render(s);

	cr_assert(strstr(text, "kqos_resctrl_groups{kind=\"pod\"} 1\n"), "%s", text);
	cr_assert(strstr(text, "kqos_resctrl_groups{kind=\"class\"} 2\n"));
	cr_assert(strstr(text, "kqos_resctrl_pods_without_group 1\n"));
	cr_assert(strstr(text, "kqos_resctrl_tasks_placed_total{path=\"event\"} 40\n"));
	cr_assert(strstr(text, "kqos_resctrl_placement_misses_total 1\n"));
	cr_assert(strstr(text, "kqos_resctrl_placement_seconds_bucket{le=\"0.0005\"} 40\n"));
	cr_assert(strstr(text, "kqos_resctrl_placement_seconds_count 40\n"));
	free(text);
	snapshot__put(s);
}
