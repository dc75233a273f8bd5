// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>

#include "https_server.h"
#include "log.h"
#include "pod.h"
#include "podsrc.h"

#define FIXTURES "tests/fixtures/pods/"
#define MS	 1000000ULL

static struct https_server *srv;
static struct podsrc *src;
static FILE *log_file;
static char tmpdir[64];

static void capture_log(void)
{
	log_file = tmpfile();
	cr_assert_not_null(log_file);
	log_set_stream(log_file);
	log_set_level(LOG_INFO);
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	remove(path);
	return 0;
}

static void teardown(void)
{
	podsrc__free(src);
	src = NULL;
	https_server__free(srv);
	srv = NULL;
	if (tmpdir[0])
		nftw(tmpdir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	tmpdir[0] = '\0';
	log_set_stream(NULL);
	if (log_file)
		fclose(log_file);
	log_file = NULL;
}

static int log_count(const char *a, const char *b)
{
	char line[4096];
	int n = 0;

	fflush(log_file);
	rewind(log_file);
	while (fgets(line, sizeof(line), log_file))
		if (strstr(line, a) && (!b || strstr(line, b)))
			n++;
	return n;
}

static void make_tmpdir(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/kqos-podsrc-XXXXXX");
	cr_assert_not_null(mkdtemp(tmpdir));
}

static char *tmp_path(const char *name)
{
	static char buf[4][160];
	static int i;
	char *p = buf[i++ % 4];

	snprintf(p, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return p;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* ---- kubelet -------------------------------------------------------------------------------- */

static void start_kubelet(bool tls)
{
	capture_log();
	make_tmpdir();
	cr_assert_eq(https_server__start(tls, &srv), 0, "cannot start the fake kubelet");
	cr_assert_eq(https_server__copy(srv, "body", FIXTURES "kubelet.json"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-A\n"), 0);
	cr_assert_eq(https_server__write(srv, tmp_path("token"), "tok-A\n"), 0);
}

static void kubelet_tls(void)
{
	start_kubelet(true);
}

static void kubelet_plain(void)
{
	start_kubelet(false);
}

static void new_kubelet_src(uint32_t timeout_ms)
{
	struct podsrc_kubelet_opts o = {
		.url = https_server__url(srv),
		.token_path = tmp_path("token"),
		.ca_path = https_server__ca(srv),
		.timeout_ms = timeout_ms,
		.interval_ms = 10000,
		.max_backoff_ms = 8000,
	};

	cr_assert_eq(podsrc_kubelet__new(&o, &src), 0);
}

static void assert_last_auth(const char *want)
{
	char *auth = https_server__read(srv, "last_auth");

	cr_assert_not_null(auth);
	cr_assert_str_eq(auth, want);
	free(auth);
}

TestSuite(podsrc_kubelet, .init = kubelet_tls, .fini = teardown, .timeout = 30);

Test(podsrc_kubelet, fetches_over_tls_with_bearer_token)
{
	struct pod_list *l;

	new_kubelet_src(3000);
	cr_assert(podsrc__is_stale(src), "no list yet");
	cr_assert_null(podsrc__list(src));
	cr_assert_eq(podsrc__poll(src, 0), 1);
	cr_assert_not(podsrc__is_stale(src));
	l = podsrc__list(src);
	cr_assert_not_null(l);
	cr_assert_eq(l->nr_pods, 2);
	cr_assert_str_eq(l->pods[1].name, "spark-exec-1");
	cr_assert_eq(l->pods[1].qos, POD_QOS_BE);
	assert_last_auth("Bearer tok-A");
	cr_assert_eq(log_count("pod source ready", "pods=2"), 1);

	/* not due yet: no request */
	cr_assert_eq(podsrc__poll(src, 9999 * MS), 0);
	cr_assert_eq(https_server__requests(srv), 1);
	cr_assert_eq(podsrc__next_poll_ns(src), 10000 * MS);
	/* due, same body: no new list */
	cr_assert_eq(podsrc__poll(src, 10000 * MS), 0);
	cr_assert_eq(https_server__requests(srv), 2);
	cr_assert_eq(podsrc__list(src), l);
	/* changed body: a new list */
	cr_assert_eq(https_server__copy(srv, "body", FIXTURES "kubelet-one.json"), 0);
	cr_assert_eq(podsrc__poll(src, 20000 * MS), 1);
	cr_assert_eq(podsrc__list(src)->nr_pods, 1);
	cr_assert_eq(log_count("level=warn", NULL), 0);
}

Test(podsrc_kubelet, rereads_the_token_on_every_poll)
{
	cr_assert_eq(https_server__write(srv, tmp_path("token"), "tok-A"), 0);
	new_kubelet_src(3000);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	assert_last_auth("Bearer tok-A");

	/* the kubelet now wants the rotated token; the client still holds the old one: 401 */
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-B"), 0);
	cr_assert_eq(podsrc__poll(src, 10000 * MS), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(podsrc__list(src)->nr_pods, 2, "last good list kept");

	/* the projected token file rotates: the next poll carries the new content */
	cr_assert_eq(https_server__write(srv, tmp_path("token"), "tok-B\n"), 0);
	cr_assert_eq(podsrc__poll(src, podsrc__next_poll_ns(src)), 0, "same body");
	cr_assert_not(podsrc__is_stale(src));
	assert_last_auth("Bearer tok-B");
	cr_assert_eq(log_count("pod source stale", "http status 401"), 1);
	cr_assert_eq(log_count("pod source recovered", NULL), 1);
}

Test(podsrc_kubelet, unauthorized_logs_once)
{
	cr_assert_eq(https_server__write(srv, tmp_path("token"), "wrong"), 0);
	new_kubelet_src(3000);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(podsrc__poll(src, podsrc__next_poll_ns(src)), 0);
		cr_assert(podsrc__is_stale(src));
		cr_assert_null(podsrc__list(src));
	}
	cr_assert_eq(https_server__requests(srv), 3);
	cr_assert_eq(log_count("pod source unavailable", "http status 401"), 1);
	cr_assert_eq(log_count("level=", NULL), 1, "one line for three failures");
	cr_assert_eq(log_count("wrong", NULL), 0, "the token is never logged");
}

Test(podsrc_kubelet, garbage_body)
{
	cr_assert_eq(https_server__write(srv, "mode", "garbage"), 0);
	new_kubelet_src(3000);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_null(podsrc__list(src));
	cr_assert_eq(log_count("pod source unavailable", "line 1 column"), 1);
	/* a good body after the garbage */
	cr_assert_eq(https_server__write(srv, "mode", "ok"), 0);
	cr_assert_eq(podsrc__poll(src, podsrc__next_poll_ns(src)), 1);
	cr_assert_not(podsrc__is_stale(src));
}

Test(podsrc_kubelet, server_error_status)
{
	cr_assert_eq(https_server__write(srv, "mode", "500"), 0);
	new_kubelet_src(3000);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(log_count("pod source unavailable", "http status 500"), 1);
}

Test(podsrc_kubelet, slow_server_times_out)
{
	uint64_t t0;

	new_kubelet_src(3000);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	podsrc__free(src);
	src = NULL;
	new_kubelet_src(400);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	cr_assert_eq(https_server__write(srv, "mode", "slow"), 0);
	t0 = mono_ns();
	cr_assert_eq(podsrc__poll(src, 10000 * MS), 0);
	cr_assert_lt(mono_ns() - t0, 2000 * MS, "the timeout bounds the poll");
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(podsrc__list(src)->nr_pods, 2, "last good list kept");
	cr_assert_eq(log_count("pod source stale", "err=-110"), 1);
}

Test(podsrc_kubelet, server_goes_away)
{
	struct pod_list *l;
	uint64_t now;

	new_kubelet_src(1000);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	l = podsrc__list(src);
	https_server__stop(srv);

	/* back-off doubles from 1 s and stops at the cap (8 s here) */
	now = 10000 * MS;
	for (uint64_t want = 1000; want <= 8000; want *= 2) {
		cr_assert_eq(podsrc__poll(src, now), 0);
		cr_assert(podsrc__is_stale(src));
		cr_assert_eq(podsrc__list(src), l, "last good list kept");
		cr_assert_eq(podsrc__next_poll_ns(src) - now, want * MS, "retry after %llu ms",
			     (unsigned long long)want);
		now = podsrc__next_poll_ns(src);
	}
	cr_assert_eq(podsrc__poll(src, now), 0);
	cr_assert_eq(podsrc__next_poll_ns(src) - now, 8000 * MS);
	cr_assert_eq(log_count("pod source stale, keeping the last pod list", "pods=2"), 1);
	cr_assert_eq(log_count("level=warn", NULL), 1, "once per state change");
}

Test(podsrc_kubelet, verifies_the_certificate)
{
	struct podsrc_kubelet_opts o = {
		.url = https_server__url(srv),
		.token_path = tmp_path("token"),
	};

	/* self-signed and no CA given: refused */
	cr_assert_eq(podsrc_kubelet__new(&o, &src), 0);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(https_server__requests(srv), 0);
	podsrc__free(src);
	src = NULL;

	/* the explicit opt-out */
	o.insecure_skip_verify = true;
	cr_assert_eq(podsrc_kubelet__new(&o, &src), 0);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	cr_assert_not(podsrc__is_stale(src));
}

Test(podsrc_kubelet, missing_token_file)
{
	cr_assert_eq(unlink(tmp_path("token")), 0);
	new_kubelet_src(3000);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(https_server__requests(srv), 0, "no request without a token");
	cr_assert_eq(log_count("pod source unavailable", "No such file"), 1);
}

Test(podsrc_kubelet, rejects_token_with_newline_inside)
{
	cr_assert_eq(https_server__write(srv, tmp_path("token"), "tok-A\r\nX-Evil: 1"), 0);
	new_kubelet_src(3000);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(https_server__requests(srv), 0);
}

TestSuite(podsrc_kubelet_http, .init = kubelet_plain, .fini = teardown, .timeout = 30);

/* The read-only port: plain HTTP, no token, so no Authorization header at all. */
Test(podsrc_kubelet_http, plain_http_success)
{
	struct podsrc_kubelet_opts o = { .url = https_server__url(srv), .token_path = NULL };
	char path[160];

	snprintf(path, sizeof(path), "%s/expect_token", https_server__dir(srv));
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(podsrc_kubelet__new(&o, &src), 0);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	cr_assert_eq(podsrc__list(src)->nr_pods, 2);
	assert_last_auth("");
}

Test(podsrc_kubelet_http, a_body_past_max_bytes_is_rejected)
{
	struct podsrc_kubelet_opts o = {
		.url = https_server__url(srv),
		.token_path = tmp_path("token"),
		.max_bytes = 1000,
	};

	cr_assert_eq(podsrc_kubelet__new(&o, &src), 0);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(log_count("pod source unavailable",
			       "pod list larger than 1000 bytes (pods.maxBytes)"),
		     1);
}

Test(podsrc_kubelet_http, bad_url_is_rejected)
{
	struct podsrc_kubelet_opts o = { .url = "file:///etc/passwd" };

	cr_assert_eq(podsrc_kubelet__new(&o, &src), -EINVAL);
	cr_assert_null(src);
}

/* ---- file ----------------------------------------------------------------------------------- */

static void file_setup(void)
{
	struct podsrc_file_opts o = { 0 };

	capture_log();
	make_tmpdir();
	o.path = tmp_path("pods.json");
	cr_assert_eq(podsrc_file__new(&o, &src), 0);
}

TestSuite(podsrc_file, .init = file_setup, .fini = teardown);

static void put(const char *content)
{
	static int64_t stamp = 1000000;
	struct timespec ts[2];
	char *path = tmp_path("pods.json"), *tmp = tmp_path("pods.json.tmp");
	FILE *f = fopen(tmp, "w");

	cr_assert_not_null(f);
	fputs(content, f);
	fclose(f);
	/* distinct mtimes even within one clock tick */
	ts[0].tv_sec = ts[1].tv_sec = stamp++;
	ts[0].tv_nsec = ts[1].tv_nsec = 0;
	cr_assert_eq(utimensat(AT_FDCWD, tmp, ts, 0), 0);
	cr_assert_eq(rename(tmp, path), 0);
}

static void put_fixture(const char *name)
{
	FILE *f = fopen(name, "r");
	char buf[65536];
	size_t n;

	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	put(buf);
}

Test(podsrc_file, rereads_when_changed)
{
	struct pod_list *l;

	put_fixture(FIXTURES "kubelet.json");
	cr_assert_eq(podsrc__poll(src, 0), 1);
	l = podsrc__list(src);
	cr_assert_eq(l->nr_pods, 2);
	cr_assert_eq(podsrc__next_poll_ns(src), 1000 * MS);
	cr_assert_eq(podsrc__poll(src, 500 * MS), 0, "not due");
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 0, "unchanged");
	cr_assert_eq(podsrc__list(src), l);
	put_fixture(FIXTURES "kubelet-one.json");
	cr_assert_eq(podsrc__poll(src, 2000 * MS), 1);
	cr_assert_eq(podsrc__list(src)->nr_pods, 1);
	cr_assert_eq(log_count("level=warn", NULL), 0);
}

Test(podsrc_file, keeps_a_list_across_replacement_with_a_reference)
{
	struct pod_list *l;

	put_fixture(FIXTURES "kubelet.json");
	cr_assert_eq(podsrc__poll(src, 0), 1);
	l = pod_list__ref(podsrc__list(src));
	put_fixture(FIXTURES "kubelet-one.json");
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 1);
	cr_assert_eq(l->nr_pods, 2, "the old list lives while referenced");
	cr_assert_str_eq(l->pods[1].name, "spark-exec-1");
	pod_list__put(l);
}

Test(podsrc_file, bad_file_keeps_last_list)
{
	struct pod_list *l;

	put_fixture(FIXTURES "kubelet.json");
	cr_assert_eq(podsrc__poll(src, 0), 1);
	l = podsrc__list(src);
	put("{\"kind\":\"PodList\",\n\"items\":[\n{]}");
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(podsrc__list(src), l);
	cr_assert_eq(log_count("pod source stale", "line 3 column 2"), 1);
	cr_assert_eq(log_count("pods.json", "level=warn"), 1, "the line names the file");
	/* the same bad version again: silent */
	cr_assert_eq(podsrc__poll(src, 2000 * MS), 0);
	cr_assert_eq(log_count("level=warn", NULL), 1);
	/* a different bad version: one more line */
	put("[]");
	cr_assert_eq(podsrc__poll(src, 3000 * MS), 0);
	cr_assert_eq(log_count("level=warn", "not a PodList"), 1);
	/* fixed */
	put_fixture(FIXTURES "kubelet-one.json");
	cr_assert_eq(podsrc__poll(src, 4000 * MS), 1);
	cr_assert_not(podsrc__is_stale(src));
	cr_assert_eq(log_count("pod source recovered", "pods=1"), 1);
}

Test(podsrc_file, missing_then_created)
{
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(log_count("pod source unavailable", "No such file"), 1);
	put_fixture(FIXTURES "kubelet.json");
	cr_assert_eq(podsrc__poll(src, 2000 * MS), 1);
	cr_assert_not(podsrc__is_stale(src));
}

Test(podsrc_file, same_size_rewrite_is_seen)
{
	put("{\"items\":[{\"metadata\":{\"name\":\"aa\",\"uid\":\"01\"}}]}");
	cr_assert_eq(podsrc__poll(src, 0), 1);
	put("{\"items\":[{\"metadata\":{\"name\":\"bb\",\"uid\":\"02\"}}]}");
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 1);
	cr_assert_str_eq(podsrc__list(src)->pods[0].name, "bb");
}

Test(podsrc_file, a_persisting_bad_annotation_warns_once)
{
	put("{\"items\":[{\"metadata\":{\"name\":\"a\",\"uid\":\"01\",\"annotations\":{"
	    "\"node.koordinator.sh/resctrl\":\"x\"}}}]}");
	cr_assert_eq(podsrc__poll(src, 0), 1);
	put("{\"items\":[{\"metadata\":{\"name\":\"a\",\"uid\":\"01\",\"annotations\":{"
	    "\"node.koordinator.sh/resctrl\":\"x\"}}},{\"metadata\":{\"name\":\"b\",\"uid\":"
	    "\"02\",\"annotations\":{\"node.koordinator.sh/resctrl\":\"y\"}}}]}");
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 1);
	cr_assert_eq(podsrc__list(src)->nr_pods, 2);
	cr_assert_eq(log_count("malformed pod annotation", "pod=default/a "), 1);
	cr_assert_eq(log_count("malformed pod annotation", "pod=default/b "), 1);
}

Test(podsrc_file, needs_a_path)
{
	struct podsrc_file_opts o = { 0 };
	struct podsrc *s = NULL;

	cr_assert_eq(podsrc_file__new(&o, &s), -EINVAL);
	cr_assert_null(s);
	podsrc__free(NULL);
	cr_assert_str_eq(podsrc_kind_name(podsrc__kind(src)), "file");
}

/* ---- huge lists (issue 15 §3) ----------------------------------------------------------------- */

/*
 * @n pods in kubelet's shape, each about 2 KB like a real one (labels, annotations, two
 * containers with resources and statuses): 5000 of them are the 10 MB of the issue.
 */
static void write_huge(const char *path, int n)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f);
	fputs("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[", f);
	for (int i = 0; i < n; i++) {
		fprintf(f,
			"%s{\"metadata\":{\"name\":\"job-%d\",\"namespace\":\"batch\","
			"\"uid\":\"%08x-1111-4222-8333-%012x\",\"labels\":{"
			"\"koordinator.sh/qosClass\":\"%s\",\"app\":\"job-%d\"},"
			"\"annotations\":{\"scheduling.koordinator.sh/resource-status\":"
			"\"{\\\"cpuset\\\":\\\"%d-%d\\\"}\",\"note\":\"%01300d\"}},"
			"\"spec\":{\"priority\":%d,\"containers\":["
			"{\"name\":\"main\",\"resources\":{\"requests\":{\"cpu\":\"500m\","
			"\"memory\":\"1Gi\"},\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"}}},"
			"{\"name\":\"side\",\"resources\":{\"requests\":{\"cpu\":\"100m\"}}}]},"
			"\"status\":{\"phase\":\"Running\",\"qosClass\":\"Burstable\","
			"\"containerStatuses\":[{\"name\":\"main\",\"containerID\":"
			"\"containerd://%064x\"},{\"name\":\"side\",\"containerID\":"
			"\"containerd://%064x\"}]}}",
			i ? "," : "", i, i, i, i % 2 ? "BE" : "LS", i, i % 64, i % 64,
			5000 + i % 1000, i, i + 1, 2 * i + 1);
	}
	fputs("]}", f);
	cr_assert_eq(fclose(f), 0);
}

static long max_rss_kb(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss;
}

static void new_file_src(uint64_t max_bytes, uint32_t max_pods)
{
	struct podsrc_file_opts o = { .max_bytes = max_bytes, .max_pods = max_pods };

	podsrc__free(src);
	o.path = tmp_path("huge.json");
	cr_assert_eq(podsrc_file__new(&o, &src), 0);
}

Test(podsrc_file, five_thousand_pods_within_the_default_bounds)
{
	struct stat st;
	long rss0;
	uint64_t t0;

	write_huge(tmp_path("huge.json"), 5000);
	cr_assert_eq(stat(tmp_path("huge.json"), &st), 0);
	cr_assert_geq(st.st_size, 10000000, "the issue's 10 MB");
	new_file_src(0, 0);
	rss0 = max_rss_kb();
	t0 = mono_ns();
	cr_assert_eq(podsrc__poll(src, 0), 1);
	cr_assert_eq(podsrc__list(src)->nr_pods, 5000);
	/* figures, not assertions on time: the bound is the byte limit */
	cr_log_info("5000 pods, %lld bytes: parsed in %llu ms, peak RSS +%ld MB",
		    (long long)st.st_size, (unsigned long long)((mono_ns() - t0) / MS),
		    (max_rss_kb() - rss0) / 1024);
	/* unchanged file: no second parse, no second copy */
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 0);
}

Test(podsrc_file, more_pods_than_max_pods_is_rejected_and_the_last_list_kept)
{
	struct pod_list *l;

	write_huge(tmp_path("huge.json"), 100);
	new_file_src(0, 1000);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	l = podsrc__list(src);
	write_huge(tmp_path("huge.json"), 5000);
	cr_assert_eq(podsrc__poll(src, 1000 * MS), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(podsrc__list(src), l);
	cr_assert_eq(log_count("pod source stale",
			       "5000 items, more than the limit of 1000 (pods.maxPods)"),
		     1);
}

Test(podsrc_file, a_file_past_max_bytes_is_rejected_unread)
{
	write_huge(tmp_path("huge.json"), 100);
	new_file_src(65536, 0);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_null(podsrc__list(src));
	cr_assert_eq(log_count("pod source unavailable",
			       "pod list larger than 65536 bytes (pods.maxBytes)"),
		     1);
}

/* ---- static groups -------------------------------------------------------------------------- */

static void static_setup(void)
{
	capture_log();
	make_tmpdir();
	cr_assert_eq(mkdir(tmp_path("batch"), 0755), 0);
	cr_assert_eq(mkdir(tmp_path("batch/job-2"), 0755), 0);
	cr_assert_eq(mkdir(tmp_path("batch/job-1"), 0755), 0);
	cr_assert_eq(mkdir(tmp_path("web"), 0755), 0);
	cr_assert_eq(https_server__write(NULL, tmp_path("batch/file-x"), "not a dir"), 0);
}

TestSuite(podsrc_static, .init = static_setup, .fini = teardown);

static const struct podsrc_static_group groups[] = {
	{ .name = "batch", .cgroup = "/batch/*", .qos_class = "BE" },
	{ .name = "web", .cgroup = "web", .qos_class = "LS" },
	{ .name = "db", .cgroup = "/db", .qos_class = "LSR" },
	{ .name = "root", .cgroup = "/", .qos_class = "SYSTEM" },
};

Test(podsrc_static, groups_become_pods)
{
	struct pod_list *l = NULL;
	const struct pod *p;

	cr_assert_eq(pod_static_expand(groups, 4, tmpdir, &l), 0);
	cr_assert_eq(l->nr_pods, 4);
	p = &l->pods[0];
	cr_assert_str_eq(p->name, "batch");
	cr_assert_str_eq(p->namespace, "bare-metal");
	cr_assert(p->is_static);
	cr_assert(p->is_active);
	cr_assert(pod_uid_is_valid(p->uid));
	cr_assert_eq(p->qos_raw, POD_QOS_BE);
	cr_assert_eq(p->qos, POD_QOS_BE);
	cr_assert_eq(p->k8s_qos, POD_K8S_QOS_BESTEFFORT);
	cr_assert_eq(p->prio, POD_PRIO_BATCH);
	cr_assert_eq(p->nr_cgroups, 2, "directories only");
	cr_assert_str_eq(p->cgroups[0], "/batch/job-1");
	cr_assert_str_eq(p->cgroups[1], "/batch/job-2");
	p = &l->pods[1];
	cr_assert_eq(p->nr_cgroups, 1);
	cr_assert_str_eq(p->cgroups[0], "/web");
	cr_assert_eq(p->prio, POD_PRIO_PROD);
	cr_assert_eq(l->pods[2].nr_cgroups, 0, "no match: a pod without cgroups");
	cr_assert_eq(l->pods[2].k8s_qos, POD_K8S_QOS_GUARANTEED);
	cr_assert_str_eq(l->pods[3].cgroups[0], "/");
	cr_assert_eq(pod_list__find(l, l->pods[1].uid), &l->pods[1]);
	pod_list__put(l);
}

Test(podsrc_static, uid_is_stable_and_distinct)
{
	char a[37], b[37], c[37];

	pod_static_uid("batch", a);
	pod_static_uid("batch", b);
	pod_static_uid("batch2", c);
	cr_assert_str_eq(a, b);
	cr_assert_str_neq(a, c);
	cr_assert_eq(strlen(a), 36);
	cr_assert_eq(a[14], '8', "UUID version 8: %s", a);
	cr_assert(strchr("89ab", a[19]), "RFC 9562 variant: %s", a);
	cr_assert(pod_uid_is_valid(a));
}

Test(podsrc_static, symlinks_out_of_the_root_are_dropped)
{
	static const struct podsrc_static_group g[] = {
		{ .name = "evil", .cgroup = "/*", .qos_class = "BE" },
	};
	struct pod_list *l = NULL;

	cr_assert_eq(symlink("/tmp", tmp_path("escape")), 0);
	cr_assert_eq(pod_static_expand(g, 1, tmpdir, &l), 0);
	cr_assert_eq(l->pods[0].nr_cgroups, 2, "batch and web, not escape");
	for (size_t i = 0; i < l->pods[0].nr_cgroups; i++)
		cr_assert_null(strstr(l->pods[0].cgroups[i], "escape"));
	pod_list__put(l);
}

Test(podsrc_static, validates_config)
{
	struct podsrc_static_group bad[][1] = {
		{ { .name = "x", .cgroup = "/web", .qos_class = "Gold" } },
		{ { .name = "x", .cgroup = "/web", .qos_class = NULL } },
		{ { .name = "x y", .cgroup = "/web", .qos_class = "LS" } },
		{ { .name = NULL, .cgroup = "/web", .qos_class = "LS" } },
		{ { .name = "x", .cgroup = "/../etc", .qos_class = "LS" } },
		{ { .name = "x", .cgroup = "..", .qos_class = "LS" } },
		{ { .name = "x", .cgroup = "web/../..", .qos_class = "LS" } },
		{ { .name = "x", .cgroup = "", .qos_class = "LS" } },
		{ { .name = "x", .cgroup = NULL, .qos_class = "LS" } },
	};
	static const struct podsrc_static_group dup[] = {
		{ .name = "a", .cgroup = "/web", .qos_class = "LS" },
		{ .name = "a", .cgroup = "/batch", .qos_class = "BE" },
	};
	struct podsrc_static_opts o = { .cgroup_root = tmpdir };
	struct pod_list *l = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_expect_eq(pod_static_expand(bad[i], 1, tmpdir, &l), -EINVAL, "case %zu", i);
		o.groups = bad[i];
		o.nr_groups = 1;
		cr_expect_eq(podsrc_static__new(&o, &src), -EINVAL, "case %zu", i);
	}
	cr_assert_eq(pod_static_expand(dup, 2, tmpdir, &l), -EINVAL);
	cr_assert_null(l);
	cr_assert_null(src);
	/* "..." and "a..b" are names, not parent references */
	bad[0][0] =
		(struct podsrc_static_group){ .name = "x", .cgroup = "/a..b", .qos_class = "LS" };
	cr_assert_eq(pod_static_expand(bad[0], 1, tmpdir, &l), 0);
	pod_list__put(l);
}

Test(podsrc_static, source_reexpands)
{
	struct podsrc_static_opts o = {
		.groups = groups, .nr_groups = 2, .cgroup_root = tmpdir, .interval_ms = 5000
	};

	cr_assert_eq(podsrc_static__new(&o, &src), 0);
	cr_assert_eq(podsrc__poll(src, 0), 1);
	cr_assert_eq(podsrc__list(src)->nr_pods, 2);
	cr_assert_eq(podsrc__list(src)->pods[0].nr_cgroups, 2);
	cr_assert_eq(podsrc__poll(src, 5000 * MS), 0, "nothing changed");
	cr_assert_eq(mkdir(tmp_path("batch/job-3"), 0755), 0);
	cr_assert_eq(podsrc__poll(src, 9000 * MS), 0, "not due");
	cr_assert_eq(podsrc__poll(src, 10000 * MS), 1);
	cr_assert_eq(podsrc__list(src)->pods[0].nr_cgroups, 3);
	cr_assert_str_eq(podsrc_kind_name(podsrc__kind(src)), "static");
}

Test(podsrc_static, missing_root_is_stale)
{
	struct podsrc_static_opts o = { .groups = groups,
					.nr_groups = 1,
					.cgroup_root = "/nonexistent/kqos-root" };

	cr_assert_eq(podsrc_static__new(&o, &src), 0);
	cr_assert_eq(podsrc__poll(src, 0), 0);
	cr_assert(podsrc__is_stale(src));
	cr_assert_eq(podsrc__poll(src, podsrc__next_poll_ns(src)), 0);
	cr_assert_eq(log_count("pod source unavailable", "/nonexistent/kqos-root"), 1);
}
