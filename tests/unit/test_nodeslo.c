// SPDX-License-Identifier: GPL-2.0
/*
 * nodeSLO.source "apiserver" against the local HTTPS server playing the API server: the exact
 * paths, a spec change seen within one poll, 404 and garbage keeping the last good spec (and
 * the source stale), a rotated token followed, the Node's annotations; and the pure parsers.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "https_server.h"
#include "log.h"
#include "nodeslo.h"

#define NODE	"node-1"
#define R_SLO	"get_apis_slo.koordinator.sh_v1alpha1_nodeslos_" NODE
#define R_NODE	"get_api_v1_nodes_" NODE
#define IVAL_NS (10000ULL * 1000000ULL)

static struct https_server *srv;
static struct nodeslo *ns;
static char token[128];
static FILE *log_file;

static const char *nodeslo_doc(int threshold, const char *policy)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "{\"apiVersion\":\"slo.koordinator.sh/v1alpha1\",\"kind\":\"NodeSLO\","
		 "\"metadata\":{\"name\":\"" NODE "\",\"resourceVersion\":\"7\"},"
		 "\"spec\":{\"resourceUsedThresholdWithBE\":{\"enable\":true,"
		 "\"cpuSuppressThresholdPercent\":%d},\"cpuBurstStrategy\":{\"policy\":\"%s\"}}}",
		 threshold, policy);
	return buf;
}

static void setup(void)
{
	struct nodeslo_opts o;

	log_file = tmpfile();
	log_set_stream(log_file);
	log_set_level(LOG_INFO);
	cr_assert_eq(https_server__start(true, &srv), 0, "cannot start the fake API server");
	snprintf(token, sizeof(token), "%s/sa-token", https_server__dir(srv));
	cr_assert_eq(https_server__write(srv, token, "tok-A\n"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-A"), 0);
	cr_assert_eq(https_server__write(srv, R_SLO, nodeslo_doc(65, "auto")), 0);
	cr_assert_eq(nodeslo_opts_parse(NULL, &o, NULL, 0), 0);
	o.apiserver = true;
	snprintf(o.url, sizeof(o.url), "%s", https_server__base(srv));
	snprintf(o.node_name, sizeof(o.node_name), NODE);
	snprintf(o.token_path, sizeof(o.token_path), "%s", token);
	snprintf(o.ca_path, sizeof(o.ca_path), "%s", https_server__ca(srv));
	cr_assert_eq(nodeslo__new(&o, &ns), 0);
}

static void teardown(void)
{
	nodeslo__free(ns);
	ns = NULL;
	https_server__free(srv);
	srv = NULL;
	log_set_stream(NULL);
	if (log_file)
		fclose(log_file);
}

static int log_count(const char *needle)
{
	char line[2048];
	int n = 0;

	fflush(log_file);
	rewind(log_file);
	while (fgets(line, sizeof(line), log_file))
		n += strstr(line, needle) != NULL;
	return n;
}

static void unroute(const char *name)
{
	char p[512];

	snprintf(p, sizeof(p), "%s/%s", https_server__dir(srv), name);
	cr_assert_eq(unlink(p), 0);
}

TestSuite(nodeslo_api, .init = setup, .fini = teardown, .timeout = 30);

Test(nodeslo_api, spec_read_and_a_change_seen_within_one_poll)
{
	char *last;

	cr_assert_eq(nodeslo__poll(ns, 0), 1);
	cr_assert_not_null(strstr(nodeslo__spec(ns), "\"cpuSuppressThresholdPercent\":65"));
	cr_assert_not(nodeslo__stale(ns));
	/* the Node is read after the NodeSLO, each by its exact path */
	last = https_server__read(srv, "last_get");
	cr_assert_str_eq(last, "/api/v1/nodes/" NODE);
	free(last);
	/* not due: no request */
	cr_assert_eq(nodeslo__poll(ns, IVAL_NS - 1), 0);
	cr_assert_eq(https_server__requests(srv), 2);
	/* the same object again: nothing new */
	cr_assert_eq(nodeslo__poll(ns, IVAL_NS), 0);
	cr_assert_eq(https_server__write(srv, R_SLO, nodeslo_doc(40, "cpuBurstOnly")), 0);
	cr_assert_eq(nodeslo__poll(ns, 2 * IVAL_NS), 1);
	cr_assert_not_null(strstr(nodeslo__spec(ns), "\"cpuSuppressThresholdPercent\":40"));
	cr_assert_not_null(strstr(nodeslo__spec(ns), "cpuBurstOnly"));
	cr_assert_eq(nodeslo__updates(ns), 2);
}

Test(nodeslo_api, not_found_keeps_the_last_spec_and_logs_once)
{
	cr_assert_eq(nodeslo__poll(ns, 0), 1);
	unroute(R_SLO);
	for (int i = 1; i <= 3; i++)
		cr_assert_eq(nodeslo__poll(ns, i * IVAL_NS), 0);
	cr_assert(nodeslo__stale(ns));
	cr_assert_not_null(strstr(nodeslo__spec(ns), "\"cpuSuppressThresholdPercent\":65"));
	cr_assert_eq(nodeslo__failures(ns), 3);
	cr_assert_eq(log_count("NodeSLO source stale, keeping the last good spec"), 1);
	cr_assert_eq(log_count("http status 404"), 1);
	/* back: not stale, and the same spec is no change */
	cr_assert_eq(https_server__write(srv, R_SLO, nodeslo_doc(65, "auto")), 0);
	cr_assert_eq(nodeslo__poll(ns, 4 * IVAL_NS), 0);
	cr_assert_not(nodeslo__stale(ns));
	cr_assert_eq(log_count("NodeSLO source recovered"), 1);
}

Test(nodeslo_api, garbage_and_bad_specs_keep_the_last_spec)
{
	static const char *const bad[] = {
		"<html>",
		"{\"kind\":\"NodeSLO\",\"metadata\":{\"name\":\"other-node\"},\"spec\":{}}",
		"{\"kind\":\"ConfigMap\",\"metadata\":{\"name\":\"" NODE "\"},\"spec\":{}}",
		"{\"kind\":\"NodeSLO\",\"metadata\":{\"name\":\"" NODE "\"},\"spec\":[]}",
	};

	cr_assert_eq(nodeslo__poll(ns, 0), 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_eq(https_server__write(srv, R_SLO, bad[i]), 0);
		cr_assert_eq(nodeslo__poll(ns, (i + 1) * IVAL_NS), 0, "%s", bad[i]);
		cr_assert(nodeslo__stale(ns), "%s", bad[i]);
	}
	/* a value the file's nodeSLO would refuse is refused here too */
	cr_assert_eq(https_server__write(srv, R_SLO, nodeslo_doc(140, "auto")), 0);
	cr_assert_eq(nodeslo__poll(ns, 10 * IVAL_NS), 0);
	cr_assert_eq(log_count("out of range [0, 100]"), 1);
	cr_assert_not_null(strstr(nodeslo__spec(ns), "\"cpuSuppressThresholdPercent\":65"));
}

Test(nodeslo_api, rotated_token_is_followed)
{
	char *auth;

	cr_assert_eq(nodeslo__poll(ns, 0), 1);
	/* the server rotates first: the old token is refused, the source goes stale */
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-B"), 0);
	cr_assert_eq(nodeslo__poll(ns, IVAL_NS), 0);
	cr_assert(nodeslo__stale(ns));
	cr_assert_eq(log_count("http status 401"), 1);
	/* kubelet writes the new projected token: read on the next request */
	cr_assert_eq(https_server__write(srv, token, "tok-B\n"), 0);
	cr_assert_eq(https_server__write(srv, R_SLO, nodeslo_doc(50, "auto")), 0);
	cr_assert_eq(nodeslo__poll(ns, 2 * IVAL_NS), 1);
	cr_assert_not(nodeslo__stale(ns));
	auth = https_server__read(srv, "last_auth");
	cr_assert_str_eq(auth, "Bearer tok-B");
	free(auth);
}

Test(nodeslo_api, node_annotations_and_kubelet_reserved)
{
	const struct nodeslo_node *n;

	cr_assert_eq(
		https_server__write(
			srv, R_NODE,
			"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\",\"annotations\":{"
			"\"node.koordinator.sh/cpu-normalization-ratio\":\"1.25\","
			"\"node.koordinator.sh/reservation\":\"{\\\"resources\\\":{\\\"cpu\\\":"
			"\\\"500m\\\"},\\\"reservedCPUs\\\":\\\"0-1\\\"}\"}},"
			"\"status\":{\"capacity\":{\"cpu\":\"8\"},\"allocatable\":{\"cpu\":"
			"\"7800m\"}}}"),
		0);
	cr_assert_eq(nodeslo__poll(ns, 0), 1);
	n = nodeslo__node(ns);
	cr_assert_not_null(n);
	cr_assert(n->has_ratio);
	cr_assert_float_eq(n->cpu_normalization_ratio, 1.25, 1e-9);
	cr_assert(n->has_reserved_cpus);
	cr_assert_str_eq(n->reserved_cpus, "0-1");
	/* the larger of kubelet's (200m) and the annotation's (500m) */
	cr_assert_eq(n->reserved_milli, 500);
	/* only the node changes: still news */
	cr_assert_eq(
		https_server__write(
			srv, R_NODE,
			"{\"kind\":\"Node\",\"metadata\":{\"name\":\"" NODE "\"},"
			"\"status\":{\"capacity\":{\"cpu\":\"8\"},\"allocatable\":{\"cpu\":\"6\"}}}"),
		0);
	cr_assert_eq(nodeslo__poll(ns, IVAL_NS), 1);
	cr_assert_not(nodeslo__node(ns)->has_ratio);
	cr_assert_eq(nodeslo__node(ns)->reserved_milli, 2000);
}

Test(nodeslo_api, slow_server_is_bounded_by_the_timeout)
{
	struct nodeslo_opts o;
	struct nodeslo *s = NULL;
	struct timespec t0, t1;
	double secs;

	cr_assert_eq(nodeslo__poll(ns, 0), 1);
	cr_assert_eq(nodeslo_opts_parse(NULL, &o, NULL, 0), 0);
	o = (struct nodeslo_opts){ .apiserver = true, .interval_ms = 10000, .timeout_ms = 300 };
	snprintf(o.url, sizeof(o.url), "%s", https_server__base(srv));
	snprintf(o.node_name, sizeof(o.node_name), NODE);
	snprintf(o.token_path, sizeof(o.token_path), "%s", token);
	snprintf(o.ca_path, sizeof(o.ca_path), "%s", https_server__ca(srv));
	cr_assert_eq(nodeslo__new(&o, &s), 0);
	cr_assert_eq(https_server__write(srv, "mode", "slow"), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(nodeslo__poll(s, 0), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_assert_lt(secs, 1.5, "a 5 s server held the poll %.2f s", secs);
	cr_assert(nodeslo__stale(s));
	cr_assert_null(nodeslo__spec(s));
	nodeslo__free(s);
}

Test(nodeslo, overlay_puts_the_node_over_the_file)
{
	struct nodeslo_node n = { .has_ratio = true,
				  .cpu_normalization_ratio = 1.5,
				  .has_reserved_cpus = true,
				  .reserved_cpus = "0-1",
				  .reserved_milli = 1500 };
	char *out = NULL;

	cr_assert_eq(nodeslo_overlay("{\"nodeReservedMilliCpu\":1000,\"weightFormula\":\"log\"}",
				     &n, &out),
		     0);
	cr_assert_str_eq(out, "{\"cpuNormalizationRatio\":1.5,\"nodeReservedMilliCpu\":1500,"
			      "\"reservedCpus\":\"0-1\",\"weightFormula\":\"log\"}");
	free(out);
	/* the file's larger reservation stays */
	n.reserved_milli = 200;
	n.has_ratio = n.has_reserved_cpus = false;
	cr_assert_eq(nodeslo_overlay("{\"nodeReservedMilliCpu\":1000}", &n, &out), 0);
	cr_assert_str_eq(out, "{\"nodeReservedMilliCpu\":1000}");
	free(out);
	cr_assert_eq(nodeslo_overlay(NULL, &n, &out), 0);
	cr_assert_str_eq(out, "{\"nodeReservedMilliCpu\":200}");
	free(out);
}

Test(nodeslo, source_keys)
{
	struct nodeslo_opts o;
	char err[256];

	cr_assert_eq(nodeslo_opts_parse("{\"resourceUsedThresholdWithBE\":{}}", &o, err,
					sizeof(err)),
		     0);
	cr_assert_not(o.apiserver);
	cr_assert_eq(o.interval_ms, 10000);
	cr_assert_str_eq(o.token_path, "/var/run/secrets/kubernetes.io/serviceaccount/token");
	cr_assert_eq(nodeslo_opts_parse("{\"source\":\"apiserver\",\"apiserver\":{\"interval\":"
					"\"2s\",\"nodeName\":\"n9\"}}",
					&o, err, sizeof(err)),
		     0, "%s", err);
	cr_assert(o.apiserver);
	cr_assert_eq(o.interval_ms, 2000);
	cr_assert_str_eq(o.node_name, "n9");
	cr_assert_eq(nodeslo_opts_parse("{\"source\":\"configmap\"}", &o, err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "nodeSLO.source: not one of file, apiserver");
	cr_assert_eq(
		nodeslo_opts_parse("{\"source\":\"apiserver\",\"apiserver\":{\"intervall\":1}}", &o,
				   err, sizeof(err)),
		-EINVAL);
}

Test(nodeslo, node_name_from_the_environment)
{
	struct nodeslo_opts o;
	struct nodeslo *s = NULL;

	cr_assert_eq(nodeslo_opts_parse("{\"source\":\"apiserver\",\"apiserver\":{\"url\":"
					"\"https://127.0.0.1:1\"}}",
					&o, NULL, 0),
		     0);
	setenv("NODE_NAME", "from-downward-api", 1);
	cr_assert_eq(nodeslo__new(&o, &s), 0);
	cr_assert_str_eq(nodeslo__node_name(s), "from-downward-api");
	nodeslo__free(s);
	unsetenv("NODE_NAME");
	cr_assert_eq(nodeslo__new(&o, &s), 0);
	cr_assert_gt(strlen(nodeslo__node_name(s)), 0, "the hostname");
	nodeslo__free(s);
	/* no URL and no in-cluster environment: refused */
	o.url[0] = '\0';
	unsetenv("KUBERNETES_SERVICE_HOST");
	cr_assert_eq(nodeslo__new(&o, &s), -EINVAL);
}
