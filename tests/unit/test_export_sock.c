// SPDX-License-Identifier: GPL-2.0
/* The snapshot socket: protocol, permissions, bounds, slow and broken clients. */
#include <errno.h>
#include <grp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "export.h"
#include "sockserv.h"
#include "test_export_snap.h"

static char dir[32], path[64];
static int fds[64];
static int nr_fds;

static void setup(void)
{
	snprintf(dir, sizeof(dir), "/tmp/kqos-sock-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	/* a directory the server must create */
	snprintf(path, sizeof(path), "%s/run/kqos.sock", dir);
	nr_fds = 0;
}

static void teardown(void)
{
	char cmd[128];

	for (int i = 0; i < nr_fds; i++)
		close(fds[i]);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "cannot remove %s\n", dir);
}

TestSuite(export_sock, .init = setup, .fini = teardown);

static int connect_to(const char *p)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", p);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -errno;
	}
	fds[nr_fds++] = fd;
	return fd;
}

static void say(int fd, const char *line)
{
	cr_assert_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
}

/* Drive the server while waiting for one line from @fd (the test is the agent loop). */
static char *read_line(struct exporter *e, int fd)
{
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);

	for (int i = 0; i < 400; i++) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;
		char *nl;

		exporter__dispatch(e, 0);
		if (poll(&p, 1, 5) <= 0)
			continue;
		if (len + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		n = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (n <= 0) {
			if (n == 0)
				break;
			continue;
		}
		len += (size_t)n;
		buf[len] = '\0';
		nl = strchr(buf, '\n');
		if (nl) {
			cr_assert_eq(nl, buf + len - 1, "one line per answer");
			*nl = '\0';
			return buf;
		}
	}
	free(buf);
	return NULL;
}

static struct exporter *new_exporter(void)
{
	struct export_opts o = { .socket_path = path };
	struct exporter *e = NULL;

	cr_assert_eq(exporter__new(&o, &e), 0);
	cr_assert_geq(exporter__epoll_fd(e), 0);
	return e;
}

Test(export_sock, socket_is_0600_in_a_created_dir)
{
	struct exporter *e = new_exporter();
	struct stat st;
	char parent[64];

	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISSOCK(st.st_mode));
	cr_assert_eq(st.st_mode & 0777, 0600, "mode %o", st.st_mode & 0777);
	snprintf(parent, sizeof(parent), "%s/run", dir);
	cr_assert_eq(stat(parent, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0755);
	exporter__free(e);
	cr_assert_neq(access(path, F_OK), 0, "socket file removed on free");
}

Test(export_sock, group_makes_it_0660)
{
	struct export_opts o = { .socket_path = path, .socket_group = "daemon" };
	struct exporter *e = NULL;
	struct group *g = getgrnam("daemon");
	struct stat st;

	if (!g || geteuid())
		cr_skip_test("needs root and a daemon group");
	cr_assert_eq(exporter__new(&o, &e), 0);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0660);
	cr_assert_eq(st.st_gid, g->gr_gid);
	exporter__free(e);
	o.socket_group = "no-such-group-kqos";
	cr_assert_eq(exporter__new(&o, &e), -ENOENT);
}

Test(export_sock, snapshot_request_answers_one_json_line)
{
	struct exporter *e = new_exporter();
	struct snapshot *s = snap_fx_rich(7);
	json_t *root, *en;
	char *line;
	int fd = connect_to(path);

	say(fd, "snapshot\n");
	line = read_line(e, fd);
	cr_assert_not_null(line);
	cr_assert_str_eq(line, "{\"error\":\"no snapshot yet\"}");
	free(line);
	exporter__publish(e, s, &snap_fx_en, 1);
	say(fd, "snapshot\n");
	line = read_line(e, fd);
	cr_assert_not_null(line);
	root = json_loads(line, 0, NULL);
	cr_assert_not_null(root, "%s", line);
	cr_assert_eq(json_integer_value(json_object_get(root, "seq")), 7);
	cr_assert_eq(json_array_size(json_object_get(root, "pods")), 5);
	en = json_object_get(root, "enforcement");
	cr_assert_str_eq(json_string_value(json_object_get(en, "be_cpus")), "2-3");
	cr_assert_eq(json_integer_value(json_object_get(en, "be_cfs_quota_us")), 200000);
	cr_assert_str_eq(json_string_value(json_object_get(
				 json_array_get(json_object_get(en, "recent"), 0), "why")),
			 "LS load 1.2 cores");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(en, "resctrl"), "misses")),
		     1, "enforcement.resctrl");
	cr_assert_str_eq(
		json_string_value(json_array_get(
			json_object_get(json_object_get(en, "resctrl"), "no_closid_pods"), 0)),
		"5f3c0000-0000-4000-8000-000000000002");
	cr_assert_eq(json_array_size(json_object_get(json_object_get(root, "resctrl"), "groups")),
		     3);
	cr_assert_not_null(json_object_get(json_object_get(root, "agent"), "version"));
	json_decref(root);
	free(line);
	snapshot__put(s);
	exporter__free(e);
}

Test(export_sock, bad_request_gets_an_error_and_the_connection_stays)
{
	struct exporter *e = new_exporter();
	struct snapshot *s = snap_fx_rich(1);
	char *line;
	int fd = connect_to(path);

	exporter__publish(e, s, &snap_fx_en, 1);
	say(fd, "gimme\r\n");
	line = read_line(e, fd);
	cr_assert_not_null(line);
	cr_assert_not_null(strstr(line, "\"error\":\"unknown request"), "%s", line);
	free(line);
	say(fd, "status\n");
	line = read_line(e, fd);
	cr_assert_not_null(strstr(line, "\"seq\":1"), "%s", line);
	free(line);
	snapshot__put(s);
	exporter__free(e);
}

Test(export_sock, overlong_request_is_refused_and_closed)
{
	struct exporter *e = new_exporter();
	char big[4096];
	char *line;
	int fd = connect_to(path);

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	say(fd, big);
	line = read_line(e, fd);
	cr_assert_not_null(line);
	cr_assert_str_eq(line, "{\"error\":\"request line too long\"}");
	free(line);
	line = read_line(e, fd);
	cr_assert_null(line, "closed after the error");
	exporter__free(e);
}

Test(export_sock, watch_gets_every_snapshot)
{
	struct exporter *e = new_exporter();
	int fd = connect_to(path);

	say(fd, "watch\n");
	for (__u64 seq = 1; seq <= 3; seq++) {
		struct snapshot *s = snap_fx_rich(seq);
		char want[32], *line;

		/* let the server read the request before the first publish */
		exporter__dispatch(e, 0);
		usleep(10000);
		exporter__dispatch(e, 0);
		exporter__publish(e, s, &snap_fx_en, seq);
		snapshot__put(s);
		line = read_line(e, fd);
		cr_assert_not_null(line);
		snprintf(want, sizeof(want), "{\"seq\":%llu,", (unsigned long long)seq);
		cr_assert_eq(strncmp(line, want, strlen(want)), 0, "%.40s", line);
		free(line);
	}
	exporter__free(e);
}

static const char *big_json(void *ctx, size_t *ret_len)
{
	static char *buf;

	if (!buf) {
		buf = malloc(64 << 10);
		memset(buf, 'j', 64 << 10);
	}
	*ret_len = 64 << 10;
	return buf;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A watcher that never reads is dropped; publish stays fast; a good client is served. */
Test(export_sock, slow_client_never_stalls_publish)
{
	struct sockserv_opts o = { .path = path, .max_out = 1 << 20, .json = big_json };
	struct sockserv *s = NULL;
	int slow, good, dropped_at = -1;
	double worst = 0;
	char buf[1 << 16];

	cr_assert_eq(sockserv__new(&o, &s), 0);
	slow = connect_to(path);
	good = connect_to(path);
	say(slow, "watch\n");
	usleep(10000);
	sockserv__dispatch(s);
	sockserv__dispatch(s);
	cr_assert_eq(sockserv__nr_clients(s), 2);
	for (int i = 0; i < 200; i++) {
		double t0 = now_s(), dt;

		sockserv__publish(s);
		dt = now_s() - t0;
		worst = dt > worst ? dt : worst;
		if (dropped_at < 0 && sockserv__nr_dropped(s))
			dropped_at = i;
	}
	cr_assert_geq(dropped_at, 1, "the slow client is dropped once its queue is full");
	cr_assert_lt(dropped_at, 40);
	cr_assert_eq(sockserv__nr_dropped(s), 1);
	cr_assert_lt(worst, 0.05, "publish took %.3f s", worst);
	/* the one that is still here gets answers */
	say(good, "snapshot\n");
	for (int i = 0; i < 100; i++) {
		struct pollfd p = { .fd = good, .events = POLLIN };

		sockserv__dispatch(s);
		if (poll(&p, 1, 5) > 0)
			break;
	}
	cr_assert_gt(recv(good, buf, sizeof(buf), MSG_DONTWAIT), 0);
	cr_assert_eq(buf[0], 'j');
	/* the slow one finds its connection closed after what was queued */
	sockserv__free(s);
}

Test(export_sock, client_count_is_bounded)
{
	struct sockserv_opts o = { .path = path, .max_clients = 2, .json = big_json };
	struct sockserv *s = NULL;
	char buf[128] = "";
	int c3;

	cr_assert_eq(sockserv__new(&o, &s), 0);
	connect_to(path);
	connect_to(path);
	c3 = connect_to(path);
	for (int i = 0; i < 20; i++) {
		sockserv__dispatch(s);
		usleep(2000);
	}
	cr_assert_eq(sockserv__nr_clients(s), 2);
	cr_assert_gt(recv(c3, buf, sizeof(buf) - 1, MSG_DONTWAIT), 0);
	cr_assert_not_null(strstr(buf, "too many clients"));
	sockserv__free(s);
}

Test(export_sock, a_full_server_drops_its_most_idle_client_for_a_new_one)
{
	struct sockserv_opts o = {
		.path = path, .max_clients = 2, .json = big_json, .idle_ns = 50000000ULL
	};
	struct sockserv *s = NULL;
	char buf[256] = "";
	int idle, busy, late;

	cr_assert_eq(sockserv__new(&o, &s), 0);
	idle = connect_to(path);
	busy = connect_to(path);
	for (int i = 0; i < 5; i++)
		sockserv__dispatch(s);
	cr_assert_eq(sockserv__nr_clients(s), 2);
	usleep(30000);
	say(busy, "health\n"); /* busy asks something: idle is now the staler one */
	for (int i = 0; i < 5; i++)
		sockserv__dispatch(s);
	usleep(40000); /* idle: 70 ms without a byte, busy: 40 ms */
	late = connect_to(path);
	for (int i = 0; i < 20; i++) {
		sockserv__dispatch(s);
		usleep(2000);
	}
	cr_assert_eq(sockserv__nr_clients(s), 2);
	cr_assert_eq(sockserv__nr_dropped(s), 1);
	cr_assert_eq(recv(idle, buf, sizeof(buf), MSG_DONTWAIT), 0, "the idle one was closed");
	say(late, "snapshot\n");
	for (int i = 0; i < 100; i++) {
		struct pollfd p = { .fd = late, .events = POLLIN };

		sockserv__dispatch(s);
		if (poll(&p, 1, 5) > 0)
			break;
	}
	cr_assert_gt(recv(late, buf, sizeof(buf), MSG_DONTWAIT), 0, "the new one is served");
	sockserv__free(s);
}

Test(export_sock, broken_clients_are_reaped)
{
	struct exporter *e = new_exporter();
	struct snapshot *s = snap_fx_rich(1);
	int fd = connect_to(path);

	say(fd, "watch\n");
	for (int i = 0; i < 10; i++)
		exporter__dispatch(e, 0);
	close(fd);
	nr_fds--;
	/* writing to a reset peer must not raise SIGPIPE */
	for (int i = 0; i < 5; i++) {
		exporter__publish(e, s, &snap_fx_en, (uint64_t)i);
		exporter__dispatch(e, 0);
	}
	snapshot__put(s);
	exporter__free(e);
}

Test(export_sock, stale_socket_replaced_live_one_refused)
{
	struct exporter *a = new_exporter(), *b = NULL;
	struct export_opts o = { .socket_path = path };
	struct sockserv *s = NULL;
	struct sockserv_opts so = { .path = path };
	int lfd;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	cr_assert_eq(exporter__new(&o, &b), -EADDRINUSE);
	cr_assert_eq(access(path, F_OK), 0, "the live socket stays");
	exporter__free(a);
	/* a crashed agent leaves its file behind: bind a socket, close it, keep the file */
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	cr_assert_eq(bind(lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	close(lfd);
	cr_assert_eq(sockserv__new(&so, &s), 0);
	sockserv__free(s);
	/* a regular file at the path is never removed */
	fclose(fopen(path, "w"));
	cr_assert_eq(sockserv__new(&so, &s), -EEXIST);
	cr_assert_eq(access(path, F_OK), 0);
}

Test(export_sock, nested_epoll_fd_signals_work)
{
	struct exporter *e = new_exporter();
	int ep = epoll_create1(0);
	struct epoll_event ev = { .events = EPOLLIN };

	cr_assert_eq(epoll_ctl(ep, EPOLL_CTL_ADD, exporter__epoll_fd(e), &ev), 0);
	cr_assert_eq(epoll_wait(ep, &ev, 1, 0), 0, "idle: nothing to do");
	connect_to(path);
	cr_assert_eq(epoll_wait(ep, &ev, 1, 1000), 1, "a new client wakes the agent");
	exporter__dispatch(e, 0);
	close(ep);
	exporter__free(e);
}

static __u64 mono_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ULL + (__u64)ts.tv_nsec;
}

Test(export_sock, health_is_ok_only_while_snapshots_are_fresh)
{
	struct export_opts o = { .socket_path = path, .health_max_age_ns = 200000000ULL };
	struct snapshot *s = snap_fx_rich(3);
	struct exporter *e = NULL;
	char *line;
	int fd;

	cr_assert_eq(exporter__new(&o, &e), 0);
	fd = connect_to(path);
	say(fd, "health\n");
	line = read_line(e, fd);
	cr_assert_not_null(strstr(line, "\"ok\":false"), "%s", line);
	cr_assert_not_null(strstr(line, "no snapshot yet"), "%s", line);
	free(line);

	exporter__publish(e, s, &snap_fx_en, mono_now_ns());
	say(fd, "health\n");
	line = read_line(e, fd);
	cr_assert_not_null(strstr(line, "\"ok\":true"), "%s", line);
	cr_assert_not_null(strstr(line, "\"seq\":3"), "%s", line);
	cr_assert_not_null(strstr(line, "\"max_age_ms\":200"), "%s", line);
	free(line);

	/* the loop answers but the ticks stopped: red after max_age */
	usleep(300000);
	say(fd, "health\n");
	line = read_line(e, fd);
	cr_assert_not_null(strstr(line, "\"ok\":false"), "%s", line);
	cr_assert_not_null(strstr(line, "no new snapshot"), "%s", line);
	free(line);
	snapshot__put(s);
	exporter__free(e);
}
