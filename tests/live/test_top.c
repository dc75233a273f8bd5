// SPDX-License-Identifier: GPL-2.0
/* kqos-top and the exporter against a real kqosd: socket, textfile, --standalone. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <criterion/criterion.h>

#include "cmd.h"
#include <jansson.h>

#include "live.h"

static char kqosd[512], top[512], dir[32], sock[64], errlog[64];
static pid_t daemon_pid = -1;

static void setup(void)
{
	const char *out = getenv("OUTPUT");

	if (!live_require_root())
		return;
	snprintf(kqosd, sizeof(kqosd), "%s/kqosd", out ? out : ".output");
	snprintf(top, sizeof(top), "%s/kqos-top", out ? out : ".output");
	cr_assert_eq(access(kqosd, X_OK), 0, "%s not built", kqosd);
	cr_assert_eq(access(top, X_OK), 0, "%s not built", top);
	snprintf(dir, sizeof(dir), "/tmp/kqos-live-top-XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
	snprintf(sock, sizeof(sock), "%s/kqos.sock", dir);
	snprintf(errlog, sizeof(errlog), "%s/kqosd.err", dir);
}

static void teardown(void)
{
	char cmd[128];

	if (daemon_pid > 0) {
		kill(daemon_pid, SIGKILL);
		waitpid(daemon_pid, NULL, 0);
		daemon_pid = -1;
	}
	if (*dir) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
		if (system(cmd))
			fprintf(stderr, "cannot remove %s\n", dir);
	}
}

TestSuite(live_top, .init = setup, .fini = teardown, .timeout = 90);

static void start_kqosd(void)
{
	daemon_pid = fork();
	cr_assert_geq(daemon_pid, 0);
	if (daemon_pid == 0) {
		int e = open(errlog, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(e, 2);
		execl(kqosd, "kqosd", "--dry-run", "--socket", sock, "--textfile-dir", dir,
		      "--interval", "1s", (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 300 && access(sock, F_OK); i++)
		live_sleep_ms(50);
	cr_assert_eq(access(sock, F_OK), 0, "kqosd did not open %s (log %s)", sock, errlog);
}

Test(live_top, kqosd_serves_kqos_top_and_writes_the_textfile)
{
	char cmd[900], path[128], *out;
	json_t *root;
	struct stat st;
	int rc;

	if (!live_require_root())
		return;
	start_kqosd();
	cr_assert_eq(stat(sock, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600);

	snprintf(cmd, sizeof(cmd), "%s --json -s %s", top, sock);
	out = cmd_run(cmd, &rc);
	/* right after start the agent may not have a snapshot: ask again after a tick */
	for (int i = 0; i < 10 && strstr(out, "no snapshot yet"); i++) {
		free(out);
		live_sleep_ms(500);
		out = cmd_run(cmd, &rc);
	}
	cr_assert_eq(rc, 0);
	root = json_loads(out, 0, NULL);
	cr_assert_not_null(root, "%s", out);
	cr_assert(json_is_array(json_object_get(root, "pods")));
	cr_assert_not_null(json_object_get(json_object_get(root, "agent"), "version"), "%s", out);
	cr_assert_gt(json_integer_value(json_object_get(root, "seq")), 0);
	json_decref(root);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s -b -n 2 -d 1 -s %s", top, sock);
	out = cmd_run(cmd, &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_not_null(strstr(out, "NAME "), "%s", out);
	cr_assert_not_null(strstr(out, "allowance: "), "%s", out);
	free(out);

	/* the first publish writes the textfile; it passes promtool */
	snprintf(path, sizeof(path), "%s/kqos.prom", dir);
	for (int i = 0; i < 60 && access(path, F_OK); i++)
		live_sleep_ms(100);
	cr_assert_eq(access(path, F_OK), 0, "no %s", path);
	snprintf(cmd, sizeof(cmd), "promtool check metrics < %s >&2", path);
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "grep -q '^kqos_last_cycle_timestamp_seconds ' %s", path);
	cr_assert_eq(system(cmd), 0);

	/* SIGTERM: kqosd exits cleanly and removes its socket */
	kill(daemon_pid, SIGTERM);
	cr_assert_eq(waitpid(daemon_pid, &rc, 0), daemon_pid);
	daemon_pid = -1;
	cr_assert_neq(access(sock, F_OK), 0, "socket file left behind");
}

/* Any process still running with a --standalone temp socket on its command line? */
static bool standalone_child_alive(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	bool found = false;

	while (d && (de = readdir(d)) && !found) {
		char path[300], buf[512];
		ssize_t n;
		int fd;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		buf[n > 0 ? n : 0] = '\0';
		found = strstr(buf, "--socket /tmp/kqos-top-") != NULL;
	}
	if (d)
		closedir(d);
	return found;
}

Test(live_top, standalone_runs_its_own_collector_and_stops_it)
{
	char cmd[900], *out;
	int rc;

	if (!live_require_root())
		return;
	snprintf(cmd, sizeof(cmd), "%s --standalone -b -n 2 -d 1 2>&1", top);
	out = cmd_run(cmd, &rc);
	cr_assert_eq(rc, 0, "%s", out);
	cr_assert_not_null(strstr(out, "monitoring-only collector"), "%s", out);
	cr_assert_not_null(strstr(out, "NAME "), "%s", out);
	cr_assert(strstr(out, "enforcement off") || strstr(out, "(dry-run)"),
		  "standalone never enforces:\n%s", out);
	free(out);
	cr_assert_not(standalone_child_alive(), "kqosd of --standalone still runs");
}
