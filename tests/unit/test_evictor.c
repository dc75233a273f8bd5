// SPDX-License-Identifier: GPL-2.0
/*
 * The evictor against a local HTTPS server that plays the API server: the Eviction call's
 * path, method and body, the token re-read after rotation, 429/404/500/garbage, a slow
 * server bounded by the timeout, pending until the pod leaves, dry run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "evictor.h"
#include "https_server.h"
#include "log.h"

#define SEC 1000000000ULL

static struct https_server *srv;
static struct evictor *ev;
static struct pod pods[2];
static char base[128], token[256], journal_path[256];

static void teardown(void)
{
	evictor__free(ev);
	ev = NULL;
	if (srv) {
		unlink(token);
		unlink(journal_path);
	}
	https_server__free(srv);
	srv = NULL;
}

TestSuite(evictor, .fini = teardown);

static void start(bool dry_run, uint64_t timeout_ns)
{
	struct evictor_opts o = { .dry_run = dry_run, .timeout_ns = timeout_ns };

	cr_assert_eq(https_server__start(true, &srv), 0, "cannot start the fake API server");
	snprintf(base, sizeof(base), "%s", https_server__base(srv));
	snprintf(token, sizeof(token), "%s/token", https_server__dir(srv));
	snprintf(journal_path, sizeof(journal_path), "%s/journal", https_server__dir(srv));
	cr_assert_eq(https_server__write(srv, "token", "t1\n"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "t1"), 0);
	o.api_url = base;
	o.token_path = token;
	o.ca_path = https_server__ca(srv);
	o.journal_path = journal_path;
	o.retry_ns = 10 * SEC;
	cr_assert_eq(evictor__new(&o, &ev), 0);
}

static struct pod *mkpod(int i, const char *name, const char *uid)
{
	struct pod *p = &pods[i];

	memset(p, 0, sizeof(*p));
	p->uid = (char *)uid;
	p->name = (char *)name;
	p->namespace = "shop";
	p->qos_raw = p->qos = POD_QOS_BE;
	p->is_active = true;
	return p;
}

/* A snapshot holding @n of the two pods. */
static struct snapshot *snap_of(size_t n)
{
	struct snapshot *s = snapshot__new();

	s->pods = calloc(2, sizeof(*s->pods));
	s->nr_pods = n;
	for (size_t i = 0; i < n; i++)
		s->pods[i].pod = &pods[i];
	return s;
}

static struct evict_list one(const struct pod *p)
{
	struct evict_list l = { .nr = 1, .pressure = 1u << POD_EVICT_BE_MEMORY };

	snprintf(l.req[0].uid, sizeof(l.req[0].uid), "%s", p->uid);
	snprintf(l.req[0].namespace, sizeof(l.req[0].namespace), "%s", p->namespace);
	snprintf(l.req[0].name, sizeof(l.req[0].name), "%s", p->name);
	l.req[0].strategy = POD_EVICT_BE_MEMORY;
	snprintf(l.req[0].reason, sizeof(l.req[0].reason), "trigger by koordlet feature x");
	return l;
}

static void tick(size_t nr_pods, const struct evict_list *l, uint64_t now_s)
{
	struct snapshot *s = snap_of(nr_pods);

	evictor__tick(ev, s, l, now_s * SEC, now_s * SEC);
	snapshot__put(s);
}

static int posts(const char *path)
{
	char *all = https_server__read(srv, "posts"), *p = all;
	int n = 0;

	while (p && (p = strstr(p, path))) {
		n++;
		p += strlen(path);
	}
	free(all);
	return n;
}

static bool pending(const char *uid)
{
	return evict_pending_has(evictor__pending(ev), uid);
}

#define EVICT_PATH "POST /api/v1/namespaces/shop/pods/web-0/eviction"

Test(evictor, posts_an_eviction_with_the_uid_precondition)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));

	start(false, 2 * SEC);
	tick(1, &l, 1);
	/* the eviction, then koordlet's Warning Event (the body is checked below) */
	cr_expect_eq(posts(EVICT_PATH), 1);
	cr_expect_eq(posts("POST /api/v1/namespaces/shop/events"), 1, "a Warning Event");
	cr_expect(pending("5f3c-1"));
	cr_expect_eq(evictor__count(ev, POD_EVICT_BE_MEMORY, EVICT_RES_OK), 1);
	/* the same victim again while pending: no second call */
	tick(1, &l, 2);
	cr_expect_eq(posts(EVICT_PATH), 1);
	/* the pod left the list: done */
	tick(0, NULL, 3);
	cr_expect_not(pending("5f3c-1"));
}

Test(evictor, decisions_are_counted_and_listed_with_the_actions)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));
	static struct snap_enforce en;
	bool counted = false;

	start(false, 2 * SEC);
	tick(1, &l, 1);
	memset(&en, 0, sizeof(en));
	evictor__fill(ev, &en);
	for (size_t i = 0; i < en.nr_counts; i++)
		counted |= !strcmp(en.counts[i].strategy, "BEMemoryEvict") &&
			   !strcmp(en.counts[i].knob, "evict") &&
			   !strcmp(en.counts[i].result, "ok") && en.counts[i].count == 1;
	cr_expect(counted,
		  "kqos_enforce_actions_total{strategy=BEMemoryEvict,knob=evict,result=ok}");
	cr_assert_eq(en.nr_recent, 1);
	cr_expect_str_eq(en.recent[0].knob, "evict");
	cr_expect_str_eq(en.recent[0].cgroup, "shop/web-0");
	cr_expect_str_eq(en.recent[0].result, "ok");
}

Test(evictor, body_is_policy_v1_eviction)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));
	char *last, *body;
	json_t *j;

	start(false, 2 * SEC);
	/* the event would overwrite last_post: make it fail first (the eviction 404s) */
	cr_assert_eq(https_server__write(srv, "post_mode", "404"), 0);
	tick(1, &l, 1);
	last = https_server__read(srv, "last_post");
	cr_assert_not_null(last);
	body = strchr(last, '\n');
	cr_assert_not_null(body);
	*body++ = '\0';
	cr_expect_str_eq(last, EVICT_PATH);
	j = json_loads(body, 0, NULL);
	cr_assert_not_null(j);
	cr_expect_str_eq(json_string_value(json_object_get(j, "apiVersion")), "policy/v1");
	cr_expect_str_eq(json_string_value(json_object_get(j, "kind")), "Eviction");
	cr_expect_str_eq(json_string_value(json_object_get(json_object_get(j, "metadata"), "name")),
			 "web-0");
	cr_expect_str_eq(
		json_string_value(json_object_get(json_object_get(j, "metadata"), "namespace")),
		"shop");
	cr_expect_str_eq(
		json_string_value(json_object_get(
			json_object_get(json_object_get(j, "deleteOptions"), "preconditions"),
			"uid")),
		"5f3c-1");
	json_decref(j);
	free(last);
	/* 404: gone, nothing pending, no retry */
	cr_expect_not(pending("5f3c-1"));
	cr_expect_eq(evictor__count(ev, POD_EVICT_BE_MEMORY, EVICT_RES_GONE), 1);
	tick(1, NULL, 100);
	cr_expect_eq(posts(EVICT_PATH), 1);
}

Test(evictor, token_is_read_again_after_rotation)
{
	struct evict_list a = one(mkpod(0, "web-0", "5f3c-1"));
	struct evict_list b = one(mkpod(1, "web-1", "5f3c-2"));
	char *auth;

	start(false, 2 * SEC);
	tick(1, &a, 1);
	cr_expect(pending("5f3c-1"));
	cr_assert_eq(https_server__write(srv, "token", "t2"), 0);
	cr_assert_eq(https_server__write(srv, "expect_token", "t2"), 0);
	tick(2, &b, 2);
	cr_expect(pending("5f3c-2"), "accepted with the rotated token");
	auth = https_server__read(srv, "last_auth");
	cr_expect_str_eq(auth, "Bearer t2");
	free(auth);
}

Test(evictor, too_many_requests_is_retried_after_the_cool_down)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));

	start(false, 2 * SEC);
	cr_assert_eq(https_server__write(srv, "post_mode", "429"), 0);
	tick(1, &l, 10);
	cr_expect_eq(posts(EVICT_PATH), 1);
	cr_expect_not(pending("5f3c-1"), "a PDB refusal is not pending");
	cr_expect_eq(evictor__count(ev, POD_EVICT_BE_MEMORY, EVICT_RES_RETRY), 1);
	/* the memory cool-down is 4 s: not at 13 s, at 14 s */
	tick(1, NULL, 13);
	cr_expect_eq(posts(EVICT_PATH), 1);
	cr_assert_eq(https_server__write(srv, "post_mode", "ok"), 0);
	tick(1, NULL, 14);
	cr_expect_eq(posts(EVICT_PATH), 2);
	cr_expect(pending("5f3c-1"));
}

Test(evictor, server_error_and_garbage_are_logged_and_retried)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));

	start(false, 2 * SEC);
	cr_assert_eq(https_server__write(srv, "post_mode", "500"), 0);
	tick(1, &l, 10);
	cr_expect_not(pending("5f3c-1"));
	cr_assert_eq(https_server__write(srv, "post_mode", "garbage"), 0);
	tick(1, NULL, 19);
	cr_expect_eq(posts(EVICT_PATH), 1, "retry_ns is 10 s");
	tick(1, NULL, 20);
	cr_expect_eq(posts(EVICT_PATH), 2);
	cr_expect_not(pending("5f3c-1"), "a 201 that is not a Status is not taken");
	cr_expect_eq(evictor__count(ev, POD_EVICT_BE_MEMORY, EVICT_RES_RETRY), 2);
	cr_assert_eq(https_server__write(srv, "post_mode", "ok"), 0);
	tick(1, NULL, 30);
	cr_expect(pending("5f3c-1"));
}

static uint64_t mono_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

Test(evictor, slow_server_never_stalls_the_tick_past_the_timeout)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));
	uint64_t t0, dt;

	start(false, 300000000ULL); /* 300 ms for all the calls of a tick */
	cr_assert_eq(https_server__write(srv, "post_mode", "slow"), 0);
	/* two victims: the second must not get a second 300 ms */
	mkpod(1, "web-1", "5f3c-2");
	l.nr = 2;
	l.req[1] = l.req[0];
	snprintf(l.req[1].uid, sizeof(l.req[1].uid), "5f3c-2");
	snprintf(l.req[1].name, sizeof(l.req[1].name), "web-1");
	t0 = mono_ms();
	tick(2, &l, 1);
	dt = mono_ms() - t0;
	cr_expect_lt(dt, 450, "the tick took %llu ms", (unsigned long long)dt);
	cr_expect_not(pending("5f3c-1"));
	cr_expect_not(pending("5f3c-2"));
	cr_expect_geq(evictor__count(ev, POD_EVICT_BE_MEMORY, EVICT_RES_RETRY), 1);
}

Test(evictor, dry_run_calls_nothing)
{
	struct evict_list l = one(mkpod(0, "web-0", "5f3c-1"));
	char line[512];
	FILE *f;
	int n = 0;

	start(true, 2 * SEC);
	tick(1, &l, 1);
	cr_expect_eq(https_server__requests(srv), 0);
	cr_expect_not(pending("5f3c-1"));
	cr_expect_eq(evictor__count(ev, POD_EVICT_BE_MEMORY, EVICT_RES_DRY_RUN), 1);
	/* the journal has the decision */
	f = fopen(journal_path, "r");
	cr_assert_not_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, "uid=5f3c-1") && strstr(line, "result=dry_run");
	fclose(f);
	cr_expect_eq(n, 1);
}
