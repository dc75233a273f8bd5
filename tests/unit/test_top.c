// SPDX-License-Identifier: GPL-2.0
/*
 * kqos-top as a user sees it: batch mode against the snapshot JSON, the no-agent message, and
 * the curses view driven in a real terminal (tmux). The agent is a child of this test that
 * serves a hand-built snapshot through the real exporter.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "cmd.h"
#include <jansson.h>

#include "export.h"
#include "top.h"
#include "test_export_snap.h"

static char dir[32], sock[64], top_bin[512], tmux_sock[64];
static pid_t server_pid = -1;

/* The fake agent: publish the rich snapshot every 100 ms and serve the socket. */
static void serve(void)
{
	struct export_opts o = { .socket_path = sock };
	struct exporter *e = NULL;
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (exporter__new(&o, &e))
		_exit(1);
	epoll_ctl(ep, EPOLL_CTL_ADD, exporter__epoll_fd(e), &ev);
	for (__u64 seq = 1;; seq++) {
		struct snapshot *s = snap_fx_rich(seq);

		exporter__publish(e, s, &snap_fx_en, seq);
		snapshot__put(s);
		for (int i = 0; i < 10; i++) {
			if (epoll_wait(ep, &ev, 1, 10) > 0)
				exporter__dispatch(e, 0);
		}
	}
}

static void setup(void)
{
	const char *out = getenv("OUTPUT");

	snprintf(top_bin, sizeof(top_bin), "%s/kqos-top", out ? out : ".output");
	cr_assert_eq(access(top_bin, X_OK), 0, "%s not built", top_bin);
	snprintf(dir, sizeof(dir), "/tmp/kqos-top-t-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/kqos.sock", dir);
	snprintf(tmux_sock, sizeof(tmux_sock), "kqos-test-%d", (int)getpid());
	server_pid = fork();
	cr_assert_geq(server_pid, 0);
	if (server_pid == 0)
		serve();
	for (int i = 0; i < 200 && access(sock, F_OK); i++)
		usleep(10000);
	cr_assert_eq(access(sock, F_OK), 0, "the fake agent did not start");
}

static void teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "tmux -L %s kill-server >/dev/null 2>&1", tmux_sock);
	/* fails when no tmux server was started: nothing to clean then */
	(void)!system(cmd);
	if (server_pid > 0) {
		kill(server_pid, SIGKILL);
		waitpid(server_pid, NULL, 0);
		server_pid = -1;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(top, .init = setup, .fini = teardown, .timeout = 60);

/* The batch line of a row: starts with its name (padded), NULL when absent. */
static char *row_line(char *out, const char *name)
{
	size_t n = strlen(name);

	for (char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (!strncmp(l, name, n) && l[n] == ' ')
			return l;
	return NULL;
}

/* Field @i (0-based, space separated) of a table line. */
static void field(const char *line, int i, char *buf, size_t len)
{
	const char *p = line;

	for (int k = 0; k <= i; k++) {
		size_t n;

		while (*p == ' ')
			p++;
		n = strcspn(p, " \n");
		if (k == i) {
			snprintf(buf, len, "%.*s", (int)n, p);
			return;
		}
		p += n;
	}
}

Test(top, batch_table_matches_the_snapshot_json)
{
	char cmd[700], *json, *out, *l, cell[64], want[64];
	json_t *root, *pod;
	size_t i;
	int st;

	snprintf(cmd, sizeof(cmd), "%s --json -s %s", top_bin, sock);
	json = cmd_run(cmd, &st);
	cr_assert_eq(st, 0);
	root = json_loads(json, 0, NULL);
	cr_assert_not_null(root, "%s", json);
	snprintf(cmd, sizeof(cmd), "%s -b -n 1 -s %s", top_bin, sock);
	out = cmd_run(cmd, &st);
	cr_assert_eq(st, 0, "%s", out);
	json_array_foreach(json_object_get(root, "pods"), i, pod) {
		const json_t *stats = json_object_get(pod, "stats");
		const json_t *cpu = json_object_get(stats, "cpu_cores");
		const char *ns = json_string_value(json_object_get(pod, "namespace")), *pq;
		char name[128];

		if (json_is_true(json_object_get(pod, "bare_metal")))
			snprintf(name, sizeof(name), "%s",
				 json_string_value(json_object_get(pod, "name")));
		else if (strchr(ns, '\n'))
			continue; /* the escaping fixture breaks the line on purpose */
		else
			snprintf(name, sizeof(name), "%s/%s", ns,
				 json_string_value(json_object_get(pod, "name")));
		l = row_line(out, name);
		cr_assert_not_null(l, "row %s missing in:\n%s", name, out);
		field(l, 1, cell, sizeof(cell));
		cr_assert_str_eq(cell, json_string_value(json_object_get(pod, "qos_class")));
		field(l, 2, cell, sizeof(cell));
		pq = json_string_value(json_object_get(pod, "priority_qos_class"));
		cr_assert_not_null(pq, "%s: no priority_qos_class", name);
		cr_assert_str_eq(cell, *pq ? pq : "-", "%s PRIO/QOS", name);
		field(l, 3, cell, sizeof(cell));
		if (cpu)
			snprintf(want, sizeof(want), "%.2f", json_real_value(cpu));
		else
			snprintf(want, sizeof(want), "-");
		cr_assert_str_eq(cell, want, "%s CPU", name);
	}
	/* web-0: p99 1.2 ms, throttled 10 %, CPI 1.5, its own resctrl group: 6 MiB, 100 MB/s */
	l = row_line(out, "shop/web-0");
	field(l, 4, cell, sizeof(cell));
	cr_assert_str_eq(cell, "1.2ms");
	field(l, 5, cell, sizeof(cell));
	cr_assert_str_eq(cell, "10.0");
	field(l, 6, cell, sizeof(cell));
	cr_assert_str_eq(cell, "1.50");
	field(l, 7, cell, sizeof(cell));
	cr_assert_str_eq(cell, "6.0");
	field(l, 8, cell, sizeof(cell));
	cr_assert_str_eq(cell, "100.0");
	field(l, 10, cell, sizeof(cell));
	cr_assert_str_eq(cell, "kqos-pod-web-0");
	/* batch-1: no PMU -> CPI '-'; BE -> the BE cpuset and the class group, no LLC of its own */
	l = row_line(out, "jobs/batch-1");
	field(l, 6, cell, sizeof(cell));
	cr_assert_str_eq(cell, "-");
	field(l, 7, cell, sizeof(cell));
	cr_assert_str_eq(cell, "-");
	field(l, 9, cell, sizeof(cell));
	cr_assert_str_eq(cell, "2-3");
	field(l, 10, cell, sizeof(cell));
	cr_assert_str_eq(cell, "kqos-BE");
	/* sorted by CPU, highest first: web-0 (1.5 cores) is the first row */
	l = strstr(out, "NAME ");
	cr_assert_not_null(l);
	l = strchr(l, '\n') + 1;
	cr_assert_eq(strncmp(l, "shop/web-0 ", 11), 0, "%s", out);
	/* containers under their pod */
	cr_assert_not_null(strstr(out, " |- web "), "%s", out);
	cr_assert_not_null(strstr(out, " `- sidecar "));
	/* header: node, classes, allowance, resctrl masks, recent actions */
	cr_assert_not_null(strstr(out, "cpu used 2.25 of 4 (56%)"), "%s", out);
	cr_assert_not_null(strstr(out, "classes: LS 1.60 | BE 1.00 cores"), "%s", out);
	cr_assert_not_null(strstr(out, "BE cpus 2-3 (2)  quota 200000us  enforcement on"));
	cr_assert_not_null(strstr(out, "kqos-LS L3:0=ff0;1=ff0;MB:0=100;1=100"));
	cr_assert_not_null(strstr(out, "cpu_suppress /kubepods/besteffort cpuset=2-3 ok"));
	json_decref(root);
	free(json);
	free(out);
}

Test(top, batch_prints_n_times_and_filters)
{
	char cmd[700], *out, *p;
	int st, n = 0;

	snprintf(cmd, sizeof(cmd), "%s -b -n 3 -d 0.1 -f batch -s %s", top_bin, sock);
	out = cmd_run(cmd, &st);
	cr_assert_eq(st, 0);
	for (p = out; (p = strstr(p, "kqos-top ")); p++)
		n++;
	cr_assert_eq(n, 3, "%s", out);
	cr_assert_not_null(strstr(out, "jobs/batch-1 "));
	cr_assert_not_null(strstr(out, "\nbatchgrp "));
	cr_assert_null(strstr(out, "web-0 "), "%s", out);
	free(out);
}

Test(top, no_agent_says_so_and_suggests_standalone)
{
	char cmd[700], *out;
	int st;

	snprintf(cmd, sizeof(cmd), "%s -b -n 1 -s %s/nothing.sock 2>&1", top_bin, dir);
	out = cmd_run(cmd, &st);
	cr_assert_eq(st, 1);
	cr_assert_not_null(strstr(out, "no kqos agent at"), "%s", out);
	cr_assert_not_null(strstr(out, "--standalone"), "%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "%s -d 0 2>&1", top_bin);
	out = cmd_run(cmd, &st);
	cr_assert_eq(st, 1);
	cr_assert_not_null(strstr(out, "-d: '0'"), "%s", out);
	free(out);
}

/* --- tmux --------------------------------------------------------------------------------- */

static void tmux(const char *args)
{
	char cmd[900];

	snprintf(cmd, sizeof(cmd), "tmux -L %s %s", tmux_sock, args);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
}

static char *screen(void)
{
	char cmd[256];
	int st;

	snprintf(cmd, sizeof(cmd), "tmux -L %s capture-pane -p -t kt", tmux_sock);
	return cmd_run(cmd, &st);
}

/* Wait until the screen contains @text (or, with @absent, no longer does). */
static char *wait_screen(const char *text, bool absent)
{
	char *s = NULL;

	for (int i = 0; i < 100; i++) {
		free(s);
		s = screen();
		if (!strstr(s, text) == absent)
			return s;
		usleep(50000);
	}
	cr_assert_fail("screen %s '%s':\n%s", absent ? "still has" : "never showed", text, s);
	return s;
}

static const char *first_row(char *s)
{
	char *l = strstr(s, "NAME ");

	cr_assert_not_null(l, "%s", s);
	return strchr(l, '\n') + 1;
}

Test(top, live_view_in_tmux_sorts_filters_folds_pauses)
{
	char args[800], *s;

	snprintf(args, sizeof(args),
		 "new-session -d -s kt -x 150 -y 40 'TERM=xterm-256color %s -s %s -d 0.2'", top_bin,
		 sock);
	tmux(args);
	s = wait_screen("shop/web-0", false);
	cr_assert_not_null(strstr(s, "sort CPU desc"), "%s", s);
	cr_assert_not_null(strstr(s, "allowance: BE cpus 2-3"));
	cr_assert_eq(strncmp(first_row(s), "- shop/web-0 ", 13), 0, "%s", s);
	free(s);

	/* > : next column, RQ_P99 (web-0 has the highest p99 as well) */
	tmux("send-keys -t kt '>'");
	s = wait_screen("sort RQ_P99 desc", false);
	free(s);
	/* < < < : back to CPU, PRIO/QOS, then CLASS; I inverts */
	tmux("send-keys -t kt '<' '<' '<' I");
	s = wait_screen("sort CLASS asc", false);
	/* class ascending: BE before LS; cgroups outside pods ('-') sort first */
	cr_assert_lt(strstr(s, "jobs/batch-1"), strstr(s, "shop/web-0"), "%s", s);
	free(s);

	/* / filter */
	tmux("send-keys -t kt / b a t c h Enter");
	s = wait_screen("shop/web-0", true);
	cr_assert_not_null(strstr(s, "filter: batch"), "%s", s);
	cr_assert_not_null(strstr(s, "jobs/batch-1"), "%s", s);
	cr_assert_null(strstr(s, "sshd.service"));
	free(s);
	tmux("send-keys -t kt Escape");
	s = wait_screen("shop/web-0", false);
	free(s);

	/* c collapses every pod, e expands */
	tmux("send-keys -t kt c");
	s = wait_screen("- sidecar", true);
	cr_assert_not_null(strstr(s, "+ shop/web-0"), "%s", s);
	free(s);
	tmux("send-keys -t kt e");
	s = wait_screen("- sidecar", false);
	free(s);

	/* p pauses: the sequence number stops */
	tmux("send-keys -t kt p");
	s = wait_screen("[PAUSED]", false);
	free(s);
	{
		char *a, *b, *sa, *sb;

		usleep(300000);
		a = screen();
		usleep(600000);
		b = screen();
		sa = strstr(a, "seq ");
		sb = strstr(b, "seq ");
		cr_assert(sa && sb);
		cr_assert_eq(strncmp(sa, sb, 12), 0, "paused screen moved:\n%s\n%s", a, b);
		free(a);
		free(b);
	}
	tmux("send-keys -t kt p");
	s = wait_screen("[PAUSED]", true);
	free(s);

	/* ? help, any key closes it, q quits */
	tmux("send-keys -t kt '?'");
	s = wait_screen("kqos-top keys", false);
	free(s);
	tmux("send-keys -t kt x");
	s = wait_screen("kqos-top keys", true);
	free(s);
	tmux("send-keys -t kt q");
	for (int i = 0; i < 100; i++) {
		char cmd[256];

		snprintf(cmd, sizeof(cmd), "tmux -L %s has-session -t kt 2>/dev/null", tmux_sock);
		if (system(cmd))
			return; /* the session ended with kqos-top */
		usleep(50000);
	}
	cr_assert_fail("kqos-top did not quit on q");
}

Test(top, enter_folds_the_selected_pod)
{
	char args[800], *s;

	snprintf(args, sizeof(args),
		 "new-session -d -s kt -x 150 -y 40 'TERM=xterm-256color %s -s %s -d 0.2'", top_bin,
		 sock);
	tmux(args);
	s = wait_screen("- sidecar", false);
	free(s);
	/* the first row (web-0) is selected: Enter folds it, again unfolds */
	tmux("send-keys -t kt Enter");
	s = wait_screen("+ shop/web-0", false);
	cr_assert_null(strstr(s, "- sidecar"), "%s", s);
	/* the other pods keep their containers */
	cr_assert_not_null(strstr(s, "`- worker"), "%s", s);
	free(s);
	tmux("send-keys -t kt Enter");
	s = wait_screen("- sidecar", false);
	free(s);
}

/* The parser alone, no agent. */
TestSuite(top_model);

/*
 * fuzz_top_model (regress-huge-quota): a quota of 1e308 prints 309 digits, and the header
 * went on writing past the allowance line at the length snprintf said it would have written.
 */
Test(top_model, a_huge_quota_stays_inside_the_allowance_line)
{
	static const char json[] = "{\"pods\": [], \"enforcement\": {\"enabled\": true, "
				   "\"be_cpus\": \"0-3\", \"be_cfs_quota_us\": 1e308}}";
	struct top_model *m = NULL;
	size_t len;

	cr_assert_eq(top_model__parse(json, &m), 0);
	cr_assert_lt(strlen(m->hdr.allowance), sizeof(m->hdr.allowance));
	cr_assert_eq(strncmp(m->hdr.allowance, "BE cpus 0-3 (4)  quota 1000", 27), 0, "%s",
		     m->hdr.allowance);
	/* the next field ("-", no resctrl) is as calloc left it past its string: no spill */
	len = strlen(m->hdr.resctrl);
	for (size_t i = len; i < sizeof(m->hdr.resctrl); i++)
		cr_assert_eq(m->hdr.resctrl[i], '\0', "resctrl[%zu] written: %s", i,
			     m->hdr.resctrl + i);
	top_model__free(m);
}
