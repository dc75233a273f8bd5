// SPDX-License-Identifier: GPL-2.0
/*
 * The node model end to end: a kubepods-like tree of real v1 cgroups (nested under a test
 * directory, as a kind node nests kubelet's root) with a pod and a container running a busy
 * process; kqosd's snapshot must show that pod with the right class and its CPU use.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "live.h"

#define CID "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static char kqosd[512], uid[64], pods_file[64], out[64], base[256];
static pid_t load_pid = -1;

static void mk(const char *rel)
{
	char p[600];

	snprintf(p, sizeof(p), "%s%s", base, rel);
	cr_assert(!mkdir(p, 0755) || errno == EEXIST, "mkdir %s: %s", p, strerror(errno));
}

static void setup(void)
{
	const char *o = getenv("OUTPUT");
	char rel[256];

	if (!live_require_root())
		return;
	live_sweep_stale();
	snprintf(kqosd, sizeof(kqosd), "%s/kqosd", o ? o : ".output");
	snprintf(uid, sizeof(uid), "5f3c0000-0000-4000-8000-%012d", (int)getpid());
	live_cg_path(base, sizeof(base), "cpu", "kp");
	cr_assert_eq(live_cg_create("cpu", "kp"), 0);
	mk("/kubepods");
	mk("/kubepods/burstable");
	snprintf(rel, sizeof(rel), "/kubepods/burstable/pod%s", uid);
	mk(rel);
	snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel), "/%s", CID);
	mk(rel);
	load_pid = live_spawn(100);
	{
		char procs[700], v[32];
		FILE *f;

		snprintf(procs, sizeof(procs), "%s%s/cgroup.procs", base, rel);
		f = fopen(procs, "w");
		cr_assert_not_null(f);
		snprintf(v, sizeof(v), "%d\n", (int)load_pid);
		fputs(v, f);
		cr_assert_eq(fclose(f), 0, "attach: %s", strerror(errno));
	}
	live_go(load_pid);
	snprintf(pods_file, sizeof(pods_file), "/tmp/kqos-pods-XXXXXX");
	snprintf(out, sizeof(out), "/tmp/kqos-out-XXXXXX");
	close(mkstemp(pods_file));
	close(mkstemp(out));
}

/* Remove the tree bottom-up; the load dies first so the leaf is empty. */
static void teardown(void)
{
	char rel[256], p[600];

	live_kill(load_pid);
	snprintf(rel, sizeof(rel), "/kubepods/burstable/pod%s", uid);
	snprintf(p, sizeof(p), "%s%s/%s", base, rel, CID);
	rmdir(p);
	snprintf(p, sizeof(p), "%s%s", base, rel);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/kubepods/burstable", base);
	rmdir(p);
	snprintf(p, sizeof(p), "%s/kubepods", base);
	rmdir(p);
	live_cg_destroy("cpu", "kp");
	unlink(pods_file);
	unlink(out);
}

static void write_pods(void)
{
	FILE *f = fopen(pods_file, "w");

	cr_assert_not_null(f);
	fprintf(f,
		"{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[{"
		"\"metadata\":{\"name\":\"web-0\",\"namespace\":\"shop\",\"uid\":\"%s\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"LS\"}},"
		"\"spec\":{\"priority\":9500,\"containers\":[{\"name\":\"web\",\"resources\":"
		"{\"requests\":{\"cpu\":\"500m\"}}}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\","
		"\"containerStatuses\":[{\"name\":\"web\",\"containerID\":\"containerd://%s\"}]}"
		"}]}",
		uid, CID);
	fclose(f);
}

static json_t *run_once(const char *pods)
{
	json_error_t jerr;
	pid_t pid = fork();
	json_t *root;
	int st;

	if (pid == 0) {
		int o = open(out, O_WRONLY | O_TRUNC);

		dup2(o, 1);
		if (pods)
			execl(kqosd, kqosd, "--once", "--format", "json", "--interval", "1s",
			      "--socket", "", "--pods-file", pods, (char *)NULL);
		else
			execl(kqosd, kqosd, "--once", "--format", "json", "--interval", "1s",
			      "--socket", "", (char *)NULL);
		_exit(127);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && !WEXITSTATUS(st), "kqosd failed: %d", st);
	root = json_load_file(out, 0, &jerr);
	cr_assert_not_null(root, "not JSON: %s", jerr.text);
	return root;
}

static json_t *find_pod(json_t *root)
{
	json_t *p;
	size_t i;

	json_array_foreach(json_object_get(root, "pods"), i, p)
		if (!strcmp(json_string_value(json_object_get(p, "uid")), uid))
			return p;
	return NULL;
}

static double cores(json_t *o)
{
	return json_real_value(json_object_get(json_object_get(o, "stats"), "cpu_cores"));
}

Test(snapshot_live, pod_from_a_podlist_file_has_class_cgroup_and_cpu, .init = setup,
     .fini = teardown, .timeout = 30)
{
	json_t *root, *pod, *ctr, *counters;
	const char *cg;

	write_pods();
	root = run_once(pods_file);
	cr_expect_str_eq(
		json_string_value(json_object_get(json_object_get(root, "pod_source"), "kind")),
		"file");
	pod = find_pod(root);
	cr_assert_not_null(pod, "pod %s missing", uid);
	cr_expect_str_eq(json_string_value(json_object_get(pod, "name")), "web-0");
	cr_expect_str_eq(json_string_value(json_object_get(pod, "qos_class")), "LS");
	cr_expect_str_eq(json_string_value(json_object_get(pod, "qos_class_raw")), "LS");
	cr_expect_str_eq(json_string_value(json_object_get(pod, "k8s_qos")), "Burstable");
	cr_expect_str_eq(json_string_value(json_object_get(pod, "priority_class")), "koord-prod");
	cg = json_string_value(json_object_get(pod, "cgroup"));
	cr_assert_not_null(cg);
	cr_expect_not_null(strstr(cg, "/kubepods/burstable/pod"), "%s", cg);
	/* One spinning process: most of a core, however busy the machine is otherwise. */
	cr_expect_gt(cores(pod), 0.2, "pod cpu %f", cores(pod));
	ctr = json_array_get(json_object_get(pod, "containers"), 0);
	cr_assert_not_null(ctr);
	cr_expect_str_eq(json_string_value(json_object_get(ctr, "name")), "web");
	cr_expect_not_null(json_object_get(ctr, "cgroup"));
	cr_expect_float_eq(cores(ctr), cores(pod), 0.02, "all pod CPU is the container's");
	/* the default counter slots hold this host's few running cgroups: none in the hash */
	counters = json_object_get(root, "counters");
	cr_expect_gt(json_integer_value(json_object_get(counters, "slots")), 0);
	cr_expect_gt(json_integer_value(json_object_get(counters, "slotted")), 1);
	cr_expect_eq(json_integer_value(json_object_get(counters, "hashed")), 0);
	cr_expect_not_null(json_object_get(counters, "slot_push_failures"));
	cr_expect_eq(json_integer_value(json_object_get(counters, "slots_pending")), 0);
	json_decref(root);
}

Test(snapshot_live, cgroup_walk_finds_the_pod_without_a_pod_list, .init = setup, .fini = teardown,
     .timeout = 30)
{
	json_t *root = run_once(NULL), *pod;

	cr_expect_str_eq(
		json_string_value(json_object_get(json_object_get(root, "pod_source"), "kind")),
		"cgroup");
	pod = find_pod(root);
	cr_assert_not_null(pod, "pod %s missing", uid);
	/* No label from a walk: the class defaults from the Kubernetes QoS in the path. */
	cr_expect_str_eq(json_string_value(json_object_get(pod, "k8s_qos")), "Burstable");
	cr_expect_str_eq(json_string_value(json_object_get(pod, "qos_class")), "LS");
	cr_expect_str_eq(json_string_value(json_object_get(pod, "qos_class_raw")), "");
	cr_expect_gt(cores(pod), 0.2);
	json_decref(root);
}
