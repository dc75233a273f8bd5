// SPDX-License-Identifier: GPL-2.0
/*
 * The Kubernetes HTTP(S) client against the local HTTPS server: the bearer token read for
 * every request (and refused when it could break a header), the status codes and what they
 * return, the body bound, the timeout, certificate checks, POST, and the in-cluster URL.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "https_server.h"
#include "kube_client.h"

static struct https_server *srv;
static struct kube_client *kc;
static char base[128], token[160];

static void setup(void)
{
	cr_assert_eq(https_server__start(true, &srv), 0, "cannot start the fake API server");
	snprintf(base, sizeof(base), "%s", https_server__base(srv));
	snprintf(token, sizeof(token), "%s/token", https_server__dir(srv));
	cr_assert_eq(https_server__write(srv, token, "tok-A\n"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-A"), 0);
	cr_assert_eq(https_server__write(srv, "body", "{\"kind\":\"PodList\",\"items\":[]}"), 0);
}

static void teardown(void)
{
	kube_client__free(kc);
	kc = NULL;
	https_server__free(srv);
	srv = NULL;
}

static void open_client(const char *ca, bool insecure, uint64_t max_body_bytes)
{
	struct kube_client_opts o = {
		.base_url = base,
		.token_path = token,
		.ca_path = ca,
		.insecure_skip_verify = insecure,
		.max_body_bytes = max_body_bytes,
	};

	cr_assert_eq(kube_client__new(&o, &kc), 0);
}

static void assert_last_auth(const char *want)
{
	char *auth = https_server__read(srv, "last_auth");

	cr_assert_not_null(auth);
	cr_assert_str_eq(auth, want);
	free(auth);
}

TestSuite(kube_client, .init = setup, .fini = teardown, .timeout = 30);

Test(kube_client, get_returns_the_body_with_the_token_read_for_every_request)
{
	struct kube_resp r;

	open_client(https_server__ca(srv), false, 4096);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), 0, "%s", r.err);
	cr_assert_eq(r.code, 200);
	cr_assert_str_eq(r.body, "{\"kind\":\"PodList\",\"items\":[]}");
	cr_assert_eq(r.len, strlen(r.body));
	free(r.body);
	assert_last_auth("Bearer tok-A");
	/* the projected token rotates: the next request carries the new content */
	cr_assert_eq(https_server__write(srv, token, "tok-B\n"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-B"), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), 0, "%s", r.err);
	free(r.body);
	assert_last_auth("Bearer tok-B");
}

Test(kube_client, status_codes_name_the_url)
{
	char want[256];
	struct kube_resp r;

	open_client(https_server__ca(srv), false, 4096);
	cr_assert_eq(kube_client__get(kc, "/api/v1/nodes/none", 3000, &r), -ENOENT);
	cr_assert_eq(r.code, 404);
	cr_assert_null(r.body);
	snprintf(want, sizeof(want), "GET %s/api/v1/nodes/none: http status 404", base);
	cr_assert_str_eq(r.err, want);
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-other"), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EACCES);
	cr_assert_eq(r.code, 401);
	cr_assert_not(strstr(r.err, "tok-A"), "the token is never in the error");
	cr_assert_eq(https_server__write(srv, "expect_token", "tok-A"), 0);
	cr_assert_eq(https_server__write(srv, "mode", "500"), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EIO);
	cr_assert_eq(r.code, 500);
}

Test(kube_client, a_missing_or_unsafe_token_sends_nothing)
{
	static char long_token[16386];
	struct kube_resp r;

	open_client(https_server__ca(srv), false, 4096);
	cr_assert_eq(https_server__write(srv, token, "tok-A\r\nX-Evil: 1"), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EINVAL);
	cr_assert_not_null(strstr(r.err, "empty, too long or not printable"), "%s", r.err);
	/* 16 KiB is the bound: one byte more is refused, not cut */
	memset(long_token, 'a', sizeof(long_token) - 1);
	cr_assert_eq(https_server__write(srv, token, long_token), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EINVAL);
	long_token[sizeof(long_token) - 2] = '\0';
	cr_assert_eq(https_server__write(srv, token, long_token), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EACCES, "16 KiB: sent, refused");
	cr_assert_eq(unlink(token), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -ENOENT);
	cr_assert_eq(r.code, 0, "no answer: not a 404");
	cr_assert_not_null(strstr(r.err, "No such file"), "%s", r.err);
	cr_assert_eq(https_server__requests(srv), 1, "only the 16 KiB token went out");
}

Test(kube_client, without_a_token_path_no_authorization_is_sent)
{
	struct kube_client_opts o = { .base_url = base,
				      .ca_path = https_server__ca(srv),
				      .max_body_bytes = 4096 };
	char path[192];
	struct kube_resp r;

	snprintf(path, sizeof(path), "%s/expect_token", https_server__dir(srv));
	cr_assert_eq(unlink(path), 0);
	cr_assert_eq(kube_client__new(&o, &kc), 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), 0, "%s", r.err);
	free(r.body);
	assert_last_auth("");
}

Test(kube_client, a_body_past_the_bound_fails)
{
	struct kube_resp r;

	open_client(https_server__ca(srv), false, 10);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EFBIG);
	cr_assert_null(r.body);
	cr_assert_not_null(strstr(r.err, "body larger than 10 bytes"), "%s", r.err);
}

Test(kube_client, a_slow_server_is_bounded_by_the_timeout)
{
	struct timespec t0, t1;
	struct kube_resp r;
	double secs;

	open_client(https_server__ca(srv), false, 4096);
	cr_assert_eq(https_server__write(srv, "mode", "slow"), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	cr_assert_eq(kube_client__get(kc, "/pods", 300, &r), -ETIMEDOUT);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	cr_assert_lt(secs, 1.5, "a 5 s server held the request %.2f s", secs);
	cr_assert_eq(r.code, 0);
	cr_assert_eq(kube_client__get(kc, "/pods", 0, &r), -ETIMEDOUT, "0 is no time, not none");
}

Test(kube_client, the_certificate_is_checked_unless_told_not_to)
{
	struct kube_resp r;

	open_client(NULL, false, 4096);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), -EIO);
	cr_assert_eq(r.code, 0);
	cr_assert_eq(https_server__requests(srv), 0);
	kube_client__free(kc);
	open_client(NULL, true, 4096);
	cr_assert_eq(kube_client__get(kc, "/pods", 3000, &r), 0, "%s", r.err);
	free(r.body);
}

Test(kube_client, post_sends_the_json_and_returns_the_status)
{
	char *last;
	struct kube_resp r;

	open_client(https_server__ca(srv), false, 4096);
	cr_assert_eq(kube_client__post(kc, "/api/v1/namespaces/ns/events", "{\"a\":1}", 3000, &r),
		     0, "%s", r.err);
	cr_assert_eq(r.code, 201);
	cr_assert_not_null(strstr(r.body, "Success"));
	free(r.body);
	last = https_server__read(srv, "last_post");
	cr_assert_str_eq(last, "POST /api/v1/namespaces/ns/events\n{\"a\":1}");
	free(last);
	cr_assert_eq(https_server__write(srv, "post_mode", "429"), 0);
	cr_assert_eq(kube_client__post(kc, "/x", "{}", 3000, &r), -EIO);
	cr_assert_eq(r.code, 429);
	cr_assert_not_null(strstr(r.err, "POST "), "%s", r.err);
}

Test(kube_client_plain, new_needs_a_url_and_a_bound_and_free_takes_null)
{
	struct kube_client_opts o = { .base_url = "", .max_body_bytes = 1 };
	struct kube_client *c = NULL;

	cr_assert_eq(kube_client__new(&o, &c), -EINVAL);
	o.base_url = "http://127.0.0.1:1";
	o.max_body_bytes = 0;
	cr_assert_eq(kube_client__new(&o, &c), -EINVAL);
	cr_assert_null(c);
	kube_client__free(NULL);
}

Test(kube_client_plain, in_cluster_url)
{
	char buf[128];

	setenv("KUBERNETES_SERVICE_HOST", "10.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	cr_assert_eq(kube_in_cluster_url(buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "https://10.0.0.1:443");
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	cr_assert_eq(kube_in_cluster_url(buf, sizeof(buf)), 0);
	cr_assert_str_eq(buf, "https://[fd00::1]:443");
	unsetenv("KUBERNETES_SERVICE_PORT");
	cr_assert_eq(kube_in_cluster_url(buf, sizeof(buf)), -ENOENT);
}
