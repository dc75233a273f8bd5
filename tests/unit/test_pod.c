// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <criterion/criterion.h>
#include <criterion/parameterized.h>

#include "log.h"
#include "pod.h"
#include "podsrc.h"

/* Fixtures are found relative to the repository root, where make runs the tests. */
#define FIXTURES "tests/fixtures/pods/"

static struct pod_list *list;
static FILE *log_file;

static char *slurp(const char *path, size_t *ret_len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	cr_assert_not_null(f, "cannot open %s (run from the repository root)", path);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = malloc((size_t)n + 1);
	cr_assert_not_null(buf);
	cr_assert_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	buf[n] = '\0';
	fclose(f);
	*ret_len = (size_t)n;
	return buf;
}

static void setup(void)
{
	log_file = tmpfile();
	cr_assert_not_null(log_file);
	log_set_stream(log_file);
	log_set_level(LOG_DEBUG);
}

static void teardown(void)
{
	pod_list__put(list);
	list = NULL;
	log_set_stream(NULL);
	if (log_file)
		fclose(log_file);
	log_file = NULL;
}

static void load(const char *name)
{
	struct pod_parse_error perr;
	size_t len;
	char *buf = slurp(name, &len);
	int err = pod_list__parse(buf, len, name, NULL, &list, &perr);

	free(buf);
	if (!err)
		podsrc_log_issues(list); /* the parse records, the pod source reports */
	cr_assert_eq(err, 0, "parse %s: %d line %d: %s", name, err, perr.line, perr.text);
}

static const struct pod *by_name(const char *name)
{
	for (size_t i = 0; i < list->nr_pods; i++)
		if (!strcmp(list->pods[i].name, name))
			return &list->pods[i];
	cr_assert_fail("pod %s not in list", name);
	return NULL;
}

/* Log lines that contain every given needle. */
static int log_count(const char *a, const char *b)
{
	char line[2048];
	int n = 0;

	fflush(log_file);
	rewind(log_file);
	while (fgets(line, sizeof(line), log_file))
		if (strstr(line, a) && (!b || strstr(line, b)))
			n++;
	return n;
}

/* ---- quantities ----------------------------------------------------------------------------- */

/* Inline strings: Criterion may re-exec the binary, so pointers into it would not survive. */
struct qcase {
	char s[24];
	unsigned int scale;
	int err;
	int64_t want;
};

ParameterizedTestParameters(pod_quantity, table)
{
	static struct qcase cases[] = {
		{ "100m", 3, 0, 100 },
		{ "2", 3, 0, 2000 },
		{ "1.5", 3, 0, 1500 },
		{ "0.5", 3, 0, 500 },
		{ ".5", 3, 0, 500 },
		{ "1m", 0, 0, 1 }, /* Value() rounds up */
		{ "1500m", 0, 0, 2 },
		{ "128Mi", 0, 0, 134217728 },
		{ "1Gi", 0, 0, 1073741824 },
		{ "1G", 0, 0, 1000000000 },
		{ "1e3", 0, 0, 1000 },
		{ "1E3", 0, 0, 1000 },
		{ "5e-1", 3, 0, 500 },
		{ "500k", 0, 0, 500000 },
		{ "4000", 0, 0, 4000 },
		{ "1Ei", 0, 0, 1152921504606846976LL },
		{ "1E", 0, 0, 1000000000000000000LL },
		{ "+3", 0, 0, 3 },
		{ "-0", 0, 0, 0 },
		{ "0", 3, 0, 0 },
		{ "100n", 3, 0, 1 },
		{ "1u", 0, 0, 1 },
		{ "", 0, -EINVAL, 0 },
		{ "m", 3, -EINVAL, 0 },
		{ "1.5.0", 3, -EINVAL, 0 },
		{ "12 ", 0, -EINVAL, 0 },
		{ " 12", 0, -EINVAL, 0 },
		{ "1K", 0, -EINVAL, 0 },
		{ "1KiB", 0, -EINVAL, 0 },
		{ "1mi", 0, -EINVAL, 0 },
		{ "1e", 0, -EINVAL, 0 }, /* "e" alone is not a suffix */
		{ "1e+", 0, -EINVAL, 0 },
		{ "0x10", 0, -EINVAL, 0 },
		{ "lots", 0, -EINVAL, 0 },
		{ "1.5.", 0, -EINVAL, 0 },
		{ "-1", 0, -ERANGE, 0 },
		{ "10Ei", 0, -ERANGE, 0 },
		{ "9223372036854775807", 3, -ERANGE, 0 },
		{ "99999999999999999999", 0, -ERANGE, 0 },
		{ "1e99", 0, -ERANGE, 0 },
	};

	return cr_make_param_array(struct qcase, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct qcase *c, pod_quantity, table)
{
	int64_t v = -42;
	int err = pod_quantity_parse(c->s, c->scale, &v);

	cr_assert_eq(err, c->err, "\"%s\": err %d, want %d", c->s, err, c->err);
	if (!c->err)
		cr_assert_eq(v, c->want, "\"%s\" scale %u: %lld, want %lld", c->s, c->scale,
			     (long long)v, (long long)c->want);
	else
		cr_assert_eq(v, -42, "\"%s\": output written on error", c->s);
}

/* ---- validators and names ------------------------------------------------------------------- */

Test(pod_validate, uid_and_container_id)
{
	cr_assert(pod_uid_is_valid("0f6c6bd8-2d4e-4b0f-9a8e-3c1f2b6e7d90"));
	cr_assert(pod_uid_is_valid("ABCDEF0123"));
	cr_assert_not(pod_uid_is_valid("../../etc"));
	cr_assert_not(pod_uid_is_valid(".."));
	cr_assert_not(pod_uid_is_valid("abc/def"));
	cr_assert_not(pod_uid_is_valid("abc_def"));
	cr_assert_not(pod_uid_is_valid(""));
	cr_assert_not(pod_uid_is_valid(NULL));
	cr_assert_not(pod_uid_is_valid(
		"0123456789012345678901234567890123456789012345678901234567890123a"));
	cr_assert(pod_ctr_id_is_valid("a1b2C3"));
	cr_assert_not(pod_ctr_id_is_valid("a1/b2"));
	cr_assert_not(pod_ctr_id_is_valid("a.b"));
	cr_assert_not(pod_ctr_id_is_valid(""));
}

Test(pod_names, round_trip)
{
	for (int q = POD_QOS_LSE; q <= POD_QOS_SYSTEM; q++)
		cr_assert_eq(pod_qos_from_name(pod_qos_name(q)), q);
	for (int p = POD_PRIO_PROD; p <= POD_PRIO_FREE; p++)
		cr_assert_eq(pod_prio_from_name(pod_prio_name(p)), p);
	cr_assert_eq(pod_qos_from_name("ls"), POD_QOS_NONE);
	cr_assert_eq(pod_qos_from_name(""), POD_QOS_NONE);
	cr_assert_eq(pod_qos_from_name(NULL), POD_QOS_NONE);
	cr_assert_str_eq(pod_qos_name(POD_QOS_NONE), "");
	cr_assert_str_eq(pod_k8s_qos_name(POD_K8S_QOS_GUARANTEED), "Guaranteed");
	cr_assert_str_eq(pod_phase_name(POD_PHASE_FAILED), "Failed");
	cr_assert_str_eq(pod_runtime_name(POD_RUNTIME_CRIO), "cri-o");
}

Test(pod_names, priority_ranges)
{
	static const struct {
		int64_t v;
		enum pod_prio want;
	} t[] = {
		{ 9000, POD_PRIO_PROD },  { 9999, POD_PRIO_PROD },	 { 10000, POD_PRIO_NONE },
		{ 8999, POD_PRIO_NONE },  { 7000, POD_PRIO_MID },	 { 7999, POD_PRIO_MID },
		{ 5000, POD_PRIO_BATCH }, { 5999, POD_PRIO_BATCH },	 { 3000, POD_PRIO_FREE },
		{ 3999, POD_PRIO_FREE },  { 2999, POD_PRIO_NONE },	 { 0, POD_PRIO_NONE },
		{ -1, POD_PRIO_NONE },	  { 2000000000, POD_PRIO_NONE },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		cr_assert_eq(pod_prio_from_value(t[i].v), t[i].want, "priority %lld",
			     (long long)t[i].v);
}

/* ---- classes -------------------------------------------------------------------------------- */

TestSuite(pod_classes, .init = setup, .fini = teardown);

struct ccase {
	const char *name;
	enum pod_k8s_qos k8s;
	enum pod_qos raw;
	enum pod_qos qos;
	enum pod_prio prio_raw;
	enum pod_prio prio;
};

Test(pod_classes, every_combination)
{
	static const struct ccase t[] = {
		{ "guaranteed-nolabel", POD_K8S_QOS_GUARANTEED, POD_QOS_NONE, POD_QOS_LSR,
		  POD_PRIO_NONE, POD_PRIO_PROD },
		{ "burstable-nolabel", POD_K8S_QOS_BURSTABLE, POD_QOS_NONE, POD_QOS_LS,
		  POD_PRIO_NONE, POD_PRIO_PROD },
		{ "besteffort-nolabel", POD_K8S_QOS_BESTEFFORT, POD_QOS_NONE, POD_QOS_BE,
		  POD_PRIO_NONE, POD_PRIO_BATCH },
		{ "lse", POD_K8S_QOS_GUARANTEED, POD_QOS_LSE, POD_QOS_LSE, POD_PRIO_PROD,
		  POD_PRIO_PROD },
		{ "lsr", POD_K8S_QOS_GUARANTEED, POD_QOS_LSR, POD_QOS_LSR, POD_PRIO_PROD,
		  POD_PRIO_PROD },
		{ "ls", POD_K8S_QOS_BURSTABLE, POD_QOS_LS, POD_QOS_LS, POD_PRIO_PROD,
		  POD_PRIO_PROD },
		{ "be-batch", POD_K8S_QOS_BESTEFFORT, POD_QOS_BE, POD_QOS_BE, POD_PRIO_BATCH,
		  POD_PRIO_BATCH },
		{ "system", POD_K8S_QOS_BURSTABLE, POD_QOS_SYSTEM, POD_QOS_SYSTEM, POD_PRIO_NONE,
		  POD_PRIO_PROD },
		/* label values are case-sensitive: "be" is no class, the default applies */
		{ "lowercase-label", POD_K8S_QOS_GUARANTEED, POD_QOS_NONE, POD_QOS_LSR,
		  POD_PRIO_NONE, POD_PRIO_PROD },
		{ "prio-label-wins", POD_K8S_QOS_BURSTABLE, POD_QOS_NONE, POD_QOS_LS, POD_PRIO_MID,
		  POD_PRIO_MID },
		/* a present label decides alone: spec.priority 9500 is not consulted */
		{ "prio-label-unknown", POD_K8S_QOS_BURSTABLE, POD_QOS_NONE, POD_QOS_LS,
		  POD_PRIO_NONE, POD_PRIO_PROD },
		{ "prio-mid-7000", POD_K8S_QOS_BURSTABLE, POD_QOS_NONE, POD_QOS_LS, POD_PRIO_MID,
		  POD_PRIO_MID },
		{ "prio-batch-5999", POD_K8S_QOS_BESTEFFORT, POD_QOS_NONE, POD_QOS_BE,
		  POD_PRIO_BATCH, POD_PRIO_BATCH },
		{ "prio-free-3000", POD_K8S_QOS_BESTEFFORT, POD_QOS_BE, POD_QOS_BE, POD_PRIO_FREE,
		  POD_PRIO_FREE },
		{ "prio-none-2999", POD_K8S_QOS_BURSTABLE, POD_QOS_LS, POD_QOS_LS, POD_PRIO_NONE,
		  POD_PRIO_PROD },
		{ "prio-none-10000", POD_K8S_QOS_BURSTABLE, POD_QOS_NONE, POD_QOS_LS, POD_PRIO_NONE,
		  POD_PRIO_PROD },
		{ "computed-guaranteed", POD_K8S_QOS_GUARANTEED, POD_QOS_NONE, POD_QOS_LSR,
		  POD_PRIO_NONE, POD_PRIO_PROD },
		{ "computed-burstable", POD_K8S_QOS_BURSTABLE, POD_QOS_NONE, POD_QOS_LS,
		  POD_PRIO_NONE, POD_PRIO_PROD },
		{ "computed-besteffort", POD_K8S_QOS_BESTEFFORT, POD_QOS_NONE, POD_QOS_BE,
		  POD_PRIO_NONE, POD_PRIO_BATCH },
		/* extended resources do not count for the Kubernetes class */
		{ "computed-batch-only", POD_K8S_QOS_BESTEFFORT, POD_QOS_NONE, POD_QOS_BE,
		  POD_PRIO_NONE, POD_PRIO_BATCH },
	};

	load(FIXTURES "classes.json");
	cr_assert_eq(list->nr_pods, 26);
	cr_assert_eq(list->nr_skipped, 0);
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct pod *p = by_name(t[i].name);

		cr_expect_eq(p->k8s_qos, t[i].k8s, "%s: k8s qos %d", t[i].name, p->k8s_qos);
		cr_expect_eq(p->qos_raw, t[i].raw, "%s: raw qos %d", t[i].name, p->qos_raw);
		cr_expect_eq(p->qos, t[i].qos, "%s: qos %d", t[i].name, p->qos);
		cr_expect_eq(p->prio_raw, t[i].prio_raw, "%s: raw prio %d", t[i].name, p->prio_raw);
		cr_expect_eq(p->prio, t[i].prio, "%s: prio %d", t[i].name, p->prio);
	}
	/*
	 * the only warnings: the two bad container ids of "runtimes", and the pair of
	 * "deprecated-batch" (BE without a priority counts as koord-prod/BE, which is invalid)
	 */
	cr_assert_eq(log_count("level=warn", NULL), 3);
	cr_assert_eq(log_count("level=warn", "pod=default/runtimes "), 2);
	cr_assert_eq(log_count("invalid priority+QoS class", "pod=default/deprecated-batch "), 1);
	cr_assert_eq(log_count("invalid priority+QoS class", "err=\"koord-prod/BE\""), 1);
}

/* The fixture pods' priority+QoS class: label before spec.priority, no QoS = LS, none = prod. */
Test(pod_classes, priority_qos_of_fixture_pods)
{
	static const struct {
		const char *pod, *pq;
	} t[] = {
		{ "guaranteed-nolabel", "koord-prod/LS" }, /* raw classes: no label, no priority */
		{ "besteffort-nolabel", "koord-prod/LS" },
		{ "lse", "koord-prod/LSE" },
		{ "lsr", "koord-prod/LSR" },
		{ "ls", "koord-prod/LS" },
		{ "be-batch", "koord-batch/BE" },
		{ "system", "SYSTEM" },
		{ "prio-label-wins",
		  "koord-mid/LS" }, /* label koord-mid beats spec.priority 9500 */
		{ "prio-label-unknown", "koord-prod/LS" }, /* unknown label: none, no fallback */
		{ "prio-mid-7000", "koord-mid/LS" },
		{ "prio-batch-5999", "koord-batch/LS" },
		{ "prio-free-3000", "koord-free/BE" },
		{ "prio-none-2999", "koord-prod/LS" },
		{ "deprecated-batch", "" },
	};

	load(FIXTURES "classes.json");
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		const struct pod *p = by_name(t[i].pod);

		cr_expect_str_eq(pod_pq_name(pod__pq(p)), t[i].pq, "%s", t[i].pod);
	}
	cr_assert(pod__is_mid_ls(by_name("prio-mid-7000")));
	cr_assert_not(pod__is_mid_ls(by_name("be-batch")));
	cr_assert_not(pod__is_mid_ls(NULL));
}

/* Every (priority, QoS) pair, raw NONE included: koordinator PR #2280's final table. */
Test(pod_classes, priority_qos_every_pair)
{
	/* rows: NONE prod mid batch free; columns: NONE LSE LSR LS BE SYSTEM */
	static const char *const want[5][6] = {
		{ "koord-prod/LS", "koord-prod/LSE", "koord-prod/LSR", "koord-prod/LS", "",
		  "SYSTEM" },
		{ "koord-prod/LS", "koord-prod/LSE", "koord-prod/LSR", "koord-prod/LS", "",
		  "SYSTEM" },
		{ "koord-mid/LS", "", "", "koord-mid/LS", "koord-mid/BE", "SYSTEM" },
		{ "koord-batch/LS", "", "", "koord-batch/LS", "koord-batch/BE", "SYSTEM" },
		{ "koord-free/LS", "", "", "koord-free/LS", "koord-free/BE", "SYSTEM" },
	};

	for (int p = POD_PRIO_NONE; p <= POD_PRIO_FREE; p++)
		for (int q = POD_QOS_NONE; q <= POD_QOS_SYSTEM; q++) {
			struct pod_pq pq = pod_pq_of(p, q);

			cr_expect_str_eq(pod_pq_name(pq), want[p][q], "prio %d qos %d", p, q);
			cr_expect_eq(pq.is_valid, want[p][q][0] != '\0', "prio %d qos %d", p, q);
			cr_expect_neq(pq.qos, POD_QOS_NONE);
		}
}

/* A bare-metal group has no priority: its defaulted class stands in (BE group = batch/BE). */
Test(pod_classes, priority_qos_of_bare_metal_group)
{
	struct pod g = {
		.is_static = true, .qos_raw = POD_QOS_BE, .qos = POD_QOS_BE, .prio = POD_PRIO_BATCH
	};

	cr_assert_str_eq(pod_pq_name(pod__pq(&g)), "koord-batch/BE");
	g.is_static = false;
	cr_assert_str_eq(pod_pq_name(pod__pq(&g)), "");
}

/* An invalid pair is logged once while it persists: the next parse of the same list is quiet. */
Test(pod_classes, invalid_pair_logged_once)
{
	struct pod_list *next = NULL;
	size_t len;
	char *buf = slurp(FIXTURES "classes.json", &len);

	load(FIXTURES "classes.json");
	cr_assert_eq(pod_list__parse(buf, len, "again", list, &next, NULL), 0);
	podsrc_log_issues(next);
	free(buf);
	cr_assert_eq(log_count("level=warn", "invalid priority+QoS class"), 1);
	pod_list__put(next);
}

Test(pod_classes, identity_and_priority_value)
{
	const struct pod *p;

	load(FIXTURES "classes.json");
	p = by_name("lse");
	cr_assert_str_eq(p->uid, "00000004-1111-4222-8333-000000000004");
	cr_assert_str_eq(p->namespace, "default");
	cr_assert(p->has_priority);
	cr_assert_eq(p->priority, 9500);
	cr_assert_eq(p->phase, POD_PHASE_RUNNING);
	cr_assert(p->is_active);
	cr_assert_not(p->is_static);
	cr_assert_str_eq(by_name("system")->namespace, "kube-system");
	cr_assert_not(by_name("guaranteed-nolabel")->has_priority);
	cr_assert_eq(pod_list__find(list, "00000004-1111-4222-8333-000000000004"), p);
	cr_assert_null(pod_list__find(list, "ffff"));
}

Test(pod_classes, resources_and_defaulted_requests)
{
	const struct pod *p = NULL;
	const struct pod_container *a, *b;

	load(FIXTURES "classes.json");
	p = by_name("computed-guaranteed");
	a = pod__container(p, "a");
	b = pod__container(p, "b");
	cr_assert_not_null(a);
	cr_assert_not_null(b);
	/* limits only: the request defaults to the limit, as the API server does */
	cr_assert_eq(a->requests.cpu_milli, 1000);
	cr_assert_eq(a->requests.memory_bytes, 1LL << 30);
	cr_assert_eq(b->limits.cpu_milli, 500);
	cr_assert_eq(b->requests.memory_bytes, 512LL << 20);
	cr_assert_eq(b->requests.batch_cpu_milli, POD_RES_UNSET);
	cr_assert_null(pod__container(p, "c"));

	a = pod__container(by_name("be-batch"), "main");
	cr_assert_eq(a->requests.batch_cpu_milli, 1000);
	cr_assert_eq(a->requests.batch_memory_bytes, 2LL << 30);
	cr_assert_eq(a->limits.batch_cpu_milli, 2000);
	cr_assert_eq(a->limits.batch_memory_bytes, 4LL << 30);
	cr_assert_eq(a->requests.cpu_milli, POD_RES_UNSET);
	cr_assert_eq(a->requests.memory_bytes, POD_RES_UNSET);
}

Test(pod_classes, deprecated_batch_names)
{
	const struct pod_container *c;

	load(FIXTURES "classes.json");
	c = pod__container(by_name("deprecated-batch"), "main");
	cr_assert_eq(c->requests.batch_cpu_milli, 500);
	cr_assert_eq(c->requests.batch_memory_bytes, 1000000000);
	cr_assert_eq(c->requests.mid_cpu_milli, 1500);
	cr_assert_eq(c->requests.mid_memory_bytes, 1000);
	/* the current name wins over the deprecated alias */
	cr_assert_eq(c->limits.batch_cpu_milli, 4000);
}

Test(pod_classes, inactive_and_empty_pods)
{
	const struct pod *p;

	load(FIXTURES "classes.json");
	p = by_name("succeeded");
	cr_assert_eq(p->phase, POD_PHASE_SUCCEEDED);
	cr_assert_not(p->is_active);
	p = by_name("failed");
	cr_assert_eq(p->phase, POD_PHASE_FAILED);
	cr_assert_not(p->is_active);
	p = by_name("pending");
	cr_assert(p->is_active);
	cr_assert_eq(p->nr_containers, 1);
	cr_assert_null(p->containers[0].id);
	cr_assert_eq(p->containers[0].runtime, POD_RUNTIME_NONE);
	p = by_name("no-containers");
	cr_assert_eq(p->nr_containers, 0);
	cr_assert_eq(p->k8s_qos, POD_K8S_QOS_BESTEFFORT);
}

Test(pod_classes, container_ids)
{
	const struct pod *p;
	const struct pod_container *c;

	load(FIXTURES "classes.json");
	p = by_name("runtimes");
	c = pod__container(p, "ctrd");
	cr_assert_eq(c->runtime, POD_RUNTIME_CONTAINERD);
	cr_assert_eq(strlen(c->id), 64);
	cr_assert_eq(strncmp(c->id, "a1a1", 4), 0);
	c = pod__container(p, "crio");
	cr_assert_eq(c->runtime, POD_RUNTIME_CRIO);
	cr_assert_eq(strncmp(c->id, "b2b2", 4), 0);
	cr_assert_eq(pod__container(p, "dock")->runtime, POD_RUNTIME_DOCKER);
	cr_assert_null(pod__container(p, "empty")->id);
	/* path escapes and unknown runtimes never get an id, the container stays */
	cr_assert_null(pod__container(p, "escape")->id);
	cr_assert_null(pod__container(p, "rkt")->id);
	cr_assert_eq(p->nr_containers, 6);
	cr_assert_eq(log_count("malformed container id", "pod=default/runtimes"), 2);
	cr_assert_eq(log_count("containerStatuses[escape].containerID", NULL), 1);
}

/* ---- annotations ---------------------------------------------------------------------------- */

TestSuite(pod_annotations, .init = setup, .fini = teardown);

Test(pod_annotations, resource_status)
{
	const struct pod *p;

	load(FIXTURES "annotations.json");
	cr_assert_eq(list->nr_pods, 19, "a bad annotation never costs the pod");
	p = by_name("rs-valid");
	cr_assert_eq(p->res_status.state, POD_ANN_OK);
	cr_assert_str_eq(p->res_status.cpuset, "4-7,52-55");
	cr_assert_eq(p->res_status.nr_numa, 2);
	cr_assert_eq(p->res_status.numa[0].node, 0);
	cr_assert_eq(p->res_status.numa[0].resources.cpu_milli, 8000);
	cr_assert_eq(p->res_status.numa[0].resources.memory_bytes, 16LL << 30);
	cr_assert_eq(p->res_status.numa[1].node, 1);
	cr_assert_eq(p->res_status.numa[1].resources.batch_cpu_milli, 2000);
	cr_assert_eq(p->res_status.numa[1].resources.batch_memory_bytes, 4LL << 30);
	cr_assert_eq(by_name("rs-empty-cpuset-nolabel")->res_status.state, POD_ANN_OK);
	cr_assert_eq(by_name("es-valid")->res_status.state, POD_ANN_ABSENT);

	static const char *const bad[] = { "rs-bad-cpuset", "rs-bad-json", "rs-bad-quantity",
					   "rs-bad-node", "rs-reversed-range" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char needle[96];

		p = by_name(bad[i]);
		cr_expect_eq(p->res_status.state, POD_ANN_INVALID, "%s", bad[i]);
		cr_expect_null(p->res_status.cpuset, "%s: invalid keeps nothing", bad[i]);
		snprintf(needle, sizeof(needle), "pod=default/%s ", bad[i]);
		cr_expect_eq(log_count(needle, "scheduling.koordinator.sh/resource-status"), 1,
			     "%s: one log line", bad[i]);
	}
}

Test(pod_annotations, reconciler_treats_cpuset_as_lsr)
{
	load(FIXTURES "annotations.json");
	cr_assert_eq(by_name("rs-cpuset-only-nolabel")->qos_raw, POD_QOS_NONE);
	cr_assert_eq(pod__reconciler_qos(by_name("rs-cpuset-only-nolabel")), POD_QOS_LSR);
	cr_assert_eq(pod__reconciler_qos(by_name("rs-empty-cpuset-nolabel")), POD_QOS_NONE);
	cr_assert_eq(pod__reconciler_qos(by_name("rs-bad-cpuset")), POD_QOS_NONE);
	cr_assert_eq(pod__reconciler_qos(by_name("es-valid")), POD_QOS_BE);
	cr_assert_eq(pod__reconciler_qos(by_name("rs-valid")), POD_QOS_LSR);
}

Test(pod_annotations, extended_resource_spec)
{
	const struct pod_ext_spec_ctr *e;
	const struct pod *p;

	load(FIXTURES "annotations.json");
	p = by_name("es-valid");
	cr_assert_eq(p->ext_spec.state, POD_ANN_OK);
	e = pod__ext_spec(p, "main");
	cr_assert_not_null(e);
	cr_assert_eq(e->requests.batch_cpu_milli, 1000);
	cr_assert_eq(e->requests.batch_memory_bytes, 2LL << 30);
	cr_assert_eq(e->limits.batch_cpu_milli, 2000);
	cr_assert_eq(e->limits.batch_memory_bytes, 4LL << 30);
	cr_assert_null(pod__ext_spec(p, "sidecar"));
	for (const char *const *n = (const char *const[]){ "es-bad-quantity", "es-not-object",
							   "es-bad-container-name", NULL };
	     *n; n++) {
		p = by_name(*n);
		cr_expect_eq(p->ext_spec.state, POD_ANN_INVALID, "%s", *n);
		cr_expect_null(pod__ext_spec(p, "main"), "%s", *n);
		cr_expect_eq(log_count(*n, "node.koordinator.sh/extended-resource-spec"), 1, "%s",
			     *n);
	}
}

Test(pod_annotations, resctrl)
{
	const struct pod_resctrl *r;

	load(FIXTURES "annotations.json");
	r = &by_name("rc-valid")->resctrl;
	cr_assert_eq(r->state, POD_ANN_OK);
	cr_assert(r->has_llc);
	cr_assert_eq(r->llc.start_pct, 20);
	cr_assert_eq(r->llc.end_pct, 80);
	cr_assert_eq(r->nr_llc_per_cache, 2);
	cr_assert_eq(r->llc_per_cache[1].cache_id, 1);
	cr_assert_eq(r->llc_per_cache[1].end_pct, 60);
	cr_assert(r->has_mb);
	cr_assert_eq(r->mb.pct, 20);
	cr_assert_eq(r->nr_mb_per_cache, 2);
	cr_assert_eq(r->mb_per_cache[1].pct, 40);

	/* Go decodes case-insensitively: the proposal's LLC/MB/cacheid spellings parse */
	r = &by_name("rc-proposal-case")->resctrl;
	cr_assert_eq(r->state, POD_ANN_OK);
	cr_assert(r->has_llc);
	cr_assert_eq(r->llc.end_pct, 30);
	cr_assert_eq(r->nr_llc_per_cache, 1);
	cr_assert_eq(r->llc_per_cache[0].cache_id, 3);
	cr_assert_not(r->has_mb);
	cr_assert_eq(r->nr_mb_per_cache, 1);
	cr_assert_eq(r->mb_per_cache[0].pct, 100);

	for (const char *const *n =
		     (const char *const[]){ "rc-bad-range", "rc-bad-percent", "rc-float-range",
					    "rc-bad-cacheid", NULL };
	     *n; n++) {
		r = &by_name(*n)->resctrl;
		cr_expect_eq(r->state, POD_ANN_INVALID, "%s", *n);
		cr_expect_not(r->has_llc || r->has_mb || r->nr_mb_per_cache, "%s", *n);
		cr_expect_eq(log_count(*n, "node.koordinator.sh/resctrl"), 1, "%s", *n);
	}
}

Test(pod_annotations, one_bad_of_three)
{
	const struct pod *p;

	load(FIXTURES "annotations.json");
	p = by_name("all-three-one-bad");
	cr_assert_eq(p->res_status.state, POD_ANN_OK);
	cr_assert_str_eq(p->res_status.cpuset, "0-3");
	cr_assert_eq(p->ext_spec.state, POD_ANN_OK);
	cr_assert_eq(p->ext_spec.nr_containers, 0);
	cr_assert_eq(p->resctrl.state, POD_ANN_INVALID);
	cr_assert_eq(log_count("pod=default/all-three-one-bad", NULL), 1);
}

/* ---- malformed input ------------------------------------------------------------------------ */

TestSuite(pod_bad, .init = setup, .fini = teardown);

Test(pod_bad, skips_malformed_pods_and_keeps_the_rest)
{
	const struct pod *p;

	load(FIXTURES "bad.json");
	cr_assert_eq(list->nr_pods, 3, "got %zu pods", list->nr_pods);
	cr_assert_eq(list->nr_skipped, 15);
	cr_assert_not_null(by_name("good-first"));
	cr_assert_not_null(by_name("good-last"));
	/* a bad quantity loses that value, not the pod */
	p = by_name("bad-quantity-kept");
	cr_assert_eq(p->containers[0].requests.cpu_milli, POD_RES_UNSET);
	cr_assert_eq(p->containers[0].requests.memory_bytes, 128LL << 20);
	cr_assert_eq(p->containers[0].limits.cpu_milli, 2000);
	cr_assert_eq(p->containers[0].limits.memory_bytes, POD_RES_UNSET);
	cr_assert_eq(log_count("pod=default/bad-quantity-kept", "requests.cpu"), 1);
	cr_assert_eq(log_count("pod=default/bad-quantity-kept", "limits.memory"), 1);
	cr_assert_eq(log_count("skipping malformed pod", NULL), 15);
}

Test(pod_bad, persisting_problems_are_reported_once)
{
	struct pod_list *next = NULL;
	size_t len;
	char *buf;

	load(FIXTURES "bad.json");
	cr_assert_eq(log_count("level=warn", NULL), 17);
	buf = slurp(FIXTURES "bad.json", &len);
	cr_assert_eq(pod_list__parse(buf, len, "again", list, &next, NULL), 0);
	free(buf);
	podsrc_log_issues(next);
	cr_assert_eq(next->nr_pods, 3);
	cr_assert_eq(next->nr_skipped, 15);
	cr_assert_eq(log_count("level=warn", NULL), 17, "nothing new to report");
	cr_assert_eq(log_count("level=debug", "origin=\"again\""), 17);
	pod_list__put(next);
}

Test(pod_bad, one_line_names_pod_and_field)
{
	load(FIXTURES "bad.json");
	cr_assert_eq(log_count("pod=default/uid-escape ", "field=\"metadata.uid\""), 1);
	cr_assert_eq(log_count("pod=default/uid-slash ", "field=\"metadata.uid\""), 1);
	cr_assert_eq(log_count("pod=default/uid-too-long ", "field=\"metadata.uid\""), 1);
	cr_assert_eq(log_count("pod=default/dup-uid ", "duplicate"), 1);
	cr_assert_eq(log_count("pod=default/labels-bad ", "metadata.labels"), 1);
	cr_assert_eq(log_count("pod=default/priority-string ", "spec.priority"), 1);
	cr_assert_eq(log_count("pod=default/containers-object ", "spec.containers"), 1);
	cr_assert_eq(log_count("pod=?/? ", "field=\"metadata.name\""), 1);
	cr_assert_eq(log_count("pod=?/? ", "field=\"metadata\""), 1);
	cr_assert_eq(log_count("pod=?/? ", "field=\"items[]\""), 1);
	cr_assert_eq(log_count("../../etc", NULL), 0, "raw bad input is never echoed");
}

Test(pod_bad, documents_that_are_not_pod_lists)
{
	static const char *const docs[] = {
		"",
		"{",
		"[]",
		"{\"kind\":\"Pod\",\"items\":[]}",
		"{\"kind\":\"PodList\",\"items\":{}}",
		"<html>502 Bad Gateway</html>",
	};
	struct pod_parse_error perr;

	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		struct pod_list *l = NULL;

		memset(&perr, 0, sizeof(perr));
		cr_expect_eq(pod_list__parse(docs[i], strlen(docs[i]), "t", NULL, &l, &perr),
			     -EINVAL, "doc %zu", i);
		cr_expect_null(l);
		cr_expect_neq(perr.text[0], '\0', "doc %zu has a reason", i);
		cr_expect_null(strchr(perr.text, '"'), "doc %zu: reason safe in logfmt", i);
	}
	cr_assert_eq(pod_list__parse("{\n \"items\": [1,\n ]}", 18, "t", NULL, &list, &perr),
		     -EINVAL);
	cr_assert_eq(perr.line, 3, "line %d", perr.line);
	cr_assert_gt(perr.column, 0);
}

Test(pod_bad, empty_and_null_items)
{
	static const char doc[] = "{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":null}";

	cr_assert_eq(pod_list__parse(doc, sizeof(doc) - 1, "t", NULL, &list, NULL), 0);
	cr_assert_eq(list->nr_pods, 0);
	pod_list__put(list);
	list = NULL;
	cr_assert_eq(pod_list__parse("{\"items\":[]}", 12, "t", NULL, &list, NULL), 0);
	cr_assert_eq(list->nr_pods, 0);
}

Test(pod_bad, deep_garbage_does_not_crash)
{
	/* wrong types in every position that is read; written with ' for ", swapped below */
	char doc[] = "{'items':[{'metadata':{'name':'x','uid':'1','labels':{"
		     "'koordinator.sh/qosClass':7}}},"
		     "{'metadata':{'name':'y','uid':'2'},'spec':[],'status':7},"
		     "{'metadata':{'name':'z','uid':'3','annotations':{"
		     "'node.koordinator.sh/resctrl':'{\\'llc\\':[],\\'mb\\':7}'}},"
		     "'spec':{'containers':[{'name':'c','resources':{'requests':[]}}],"
		     "'initContainers':[7,{'resources':3}]},"
		     "'status':{'qosClass':'Gold','phase':'Dancing',"
		     "'containerStatuses':[{'name':'c','containerID':'containerd://'}]}}]}";
	const struct pod *p;

	for (char *c = doc; *c; c++)
		if (*c == '\'')
			*c = '"';
	cr_assert_eq(pod_list__parse(doc, sizeof(doc) - 1, "t", NULL, &list, NULL), 0);
	cr_assert_eq(list->nr_pods, 1);
	p = &list->pods[0];
	cr_assert_str_eq(p->name, "z");
	cr_assert_eq(p->phase, POD_PHASE_UNKNOWN);
	cr_assert(p->is_active);
	cr_assert_eq(p->resctrl.state, POD_ANN_INVALID);
	cr_assert_eq(p->k8s_qos, POD_K8S_QOS_BESTEFFORT);
	cr_assert_null(p->containers[0].id);
}

/* found by fuzz_annotation: one "\u0000" used to reject the whole list */
Test(pod_bad, nul_in_a_string_costs_that_field_only)
{
	static const char doc[] =
		"{\"items\":[{\"metadata\":{\"name\":\"a\",\"uid\":\"1\",\"labels\":{"
		"\"koordinator.sh/qosClass\":\"LSR\\u0000x\"},\"annotations\":{"
		"\"node.koordinator.sh/resctrl\":\"{}\\u0000\",\"other.io/x\":\"\\u0000\"}}},"
		"{\"metadata\":{\"name\":\"b\",\"uid\":\"2\\u00003\"}}]}";
	const struct pod *p;

	cr_assert_eq(pod_list__parse(doc, sizeof(doc) - 1, "t", NULL, &list, NULL), 0);
	cr_assert_eq(list->nr_pods, 1);
	cr_assert_eq(list->nr_skipped, 1);
	p = &list->pods[0];
	cr_assert_str_eq(p->name, "a");
	cr_assert_eq(p->qos_raw, POD_QOS_NONE);
	cr_assert_eq(p->resctrl.state, POD_ANN_INVALID);
}

Test(pod_bad, huge_quantities_do_not_overflow)
{
	/* two containers of 7Ei each: the sums would overflow int64 */
	char doc[] = "{'items':[{'metadata':{'name':'h','uid':'1'},'spec':{'containers':["
		     "{'name':'a','resources':{'limits':{'cpu':'1','memory':'7Ei'}}},"
		     "{'name':'b','resources':{'limits':{'cpu':'1','memory':'7Ei'}}}]}}]}";

	for (char *c = doc; *c; c++)
		if (*c == '\'')
			*c = '"';
	cr_assert_eq(pod_list__parse(doc, sizeof(doc) - 1, "t", NULL, &list, NULL), 0);
	cr_assert_eq(list->nr_pods, 1);
	cr_assert_eq(list->pods[0].containers[1].limits.memory_bytes, 7LL << 60);
	cr_assert_eq(list->pods[0].k8s_qos, POD_K8S_QOS_GUARANTEED);
}

/* ---- list lifetime -------------------------------------------------------------------------- */

Test(pod_list, refcount_and_null_safety)
{
	struct pod_list *l = pod_list__new();

	cr_assert_not_null(l);
	cr_assert_eq(pod_list__ref(l), l);
	pod_list__put(l);
	cr_assert_eq(l->refs, 1, "one reference left");
	pod_list__put(l);
	pod_list__put(NULL);
	cr_assert_null(pod_list__ref(NULL));
	pod_fini(NULL);
	cr_assert_null(pod_list__find(NULL, "x"));
	cr_assert_null(pod__container(NULL, "x"));
	cr_assert_null(pod__ext_spec(NULL, "x"));
}

Test(pod_annotations, wait_target)
{
	static const char doc[] =
		"{\"kind\":\"PodList\",\"items\":["
		"{\"metadata\":{\"name\":\"ok\",\"namespace\":\"d\",\"uid\":\"1\","
		"\"annotations\":{\"kqos.sh/wait-target\":\"2ms\"}}},"
		"{\"metadata\":{\"name\":\"bad\",\"namespace\":\"d\",\"uid\":\"2\","
		"\"annotations\":{\"kqos.sh/wait-target\":\"soon\"}}},"
		"{\"metadata\":{\"name\":\"long\",\"namespace\":\"d\",\"uid\":\"3\","
		"\"annotations\":{\"kqos.sh/wait-target\":\"1m\"}}}]}";

	cr_assert_eq(pod_list__parse(doc, sizeof(doc) - 1, "t", NULL, &list, NULL), 0);
	podsrc_log_issues(list);
	cr_assert_eq(list->nr_pods, 3, "a bad target never costs the pod");
	cr_assert_eq(by_name("ok")->wait_target_ns, 2000000);
	cr_assert_eq(by_name("bad")->wait_target_ns, 0);
	cr_assert_eq(by_name("long")->wait_target_ns, 0, "over 10 s is no target");
	cr_assert_eq(log_count("kqos.sh/wait-target", "pod=d/bad"), 1);
	cr_assert_eq(log_count("kqos.sh/wait-target", "pod=d/long"), 1);
}
