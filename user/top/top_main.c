// SPDX-License-Identifier: GPL-2.0
/* kqos-top: a live view of kqosd's snapshot socket (docs/kqos-top.md). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <locale.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "export.h"
#include "top.h"

#ifndef KQOS_VERSION
#define KQOS_VERSION "unknown"
#endif

volatile sig_atomic_t top_stop;

struct top_opts {
	const char *socket;
	double interval_s;
	bool batch;
	long iterations; /* -1 = until stopped */
	bool json;
	bool standalone;
	bool check; /* --check: ask kqosd's health, exit 0 (healthy) or 1 */
	bool status; /* --status: the agent's own figures, then exit */
	int timeout_ms;
	const char *filter;
};

/* The collector kqos-top started itself (--standalone). */
static pid_t child_pid = -1;
static char child_dir[64], child_sock[128], child_log[128];

static void usage(FILE *f)
{
	fprintf(f,
		"usage: kqos-top [options]\n"
		"  -s, --socket PATH   kqosd's snapshot socket (default " EXPORT_SOCKET_DEFAULT
		")\n"
		"  -d, --delay SECONDS refresh interval (default 1)\n"
		"  -b, --batch         print the table as text, no terminal control (like top -b)\n"
		"  -n, --iterations N  with -b or --json: stop after N snapshots\n"
		"      --json          print the raw snapshot JSON, one line per snapshot\n"
		"  -f, --filter TEXT   show only rows whose name, class, priority+QoS class or group contains TEXT\n"
		"      --standalone    no agent running: start a monitoring-only collector\n"
		"                      (kqosd --dry-run next to this binary; needs root)\n"
		"      --check         health check: exit 0 if kqosd answers within the timeout\n"
		"                      and its last snapshot is fresh, else 1 (probes, HEALTHCHECK)\n"
		"      --status        the agent's status: its own time per tick stage\n"
		"  -t, --timeout MS    how long --check and --status wait (default 2000)\n"
		"  -V, --version\n"
		"  -h, --help\n");
}

static int parse_args(int argc, char **argv, struct top_opts *o)
{
	enum { OPT_JSON = 256, OPT_STANDALONE, OPT_CHECK, OPT_STATUS };
	static const struct option longs[] = {
		{ "socket", required_argument, NULL, 's' },
		{ "delay", required_argument, NULL, 'd' },
		{ "batch", no_argument, NULL, 'b' },
		{ "iterations", required_argument, NULL, 'n' },
		{ "json", no_argument, NULL, OPT_JSON },
		{ "filter", required_argument, NULL, 'f' },
		{ "standalone", no_argument, NULL, OPT_STANDALONE },
		{ "check", no_argument, NULL, OPT_CHECK },
		{ "status", no_argument, NULL, OPT_STATUS },
		{ "timeout", required_argument, NULL, 't' },
		{ "version", no_argument, NULL, 'V' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char *end;
	int c;

	while ((c = getopt_long(argc, argv, "s:d:bn:f:t:Vh", longs, NULL)) != -1) {
		switch (c) {
		case 's':
			o->socket = optarg;
			break;
		case 'd':
			o->interval_s = strtod(optarg, &end);
			if (*end || o->interval_s < 0.05 || o->interval_s > 3600) {
				fprintf(stderr, "kqos-top: -d: '%s' is not 0.05..3600 seconds\n",
					optarg);
				return -EINVAL;
			}
			break;
		case 'b':
			o->batch = true;
			break;
		case 'n':
			o->iterations = strtol(optarg, &end, 10);
			if (*end || o->iterations < 1) {
				fprintf(stderr, "kqos-top: -n: '%s' is not a positive count\n",
					optarg);
				return -EINVAL;
			}
			break;
		case OPT_JSON:
			o->json = true;
			break;
		case 'f':
			o->filter = optarg;
			break;
		case OPT_STANDALONE:
			o->standalone = true;
			break;
		case OPT_CHECK:
			o->check = true;
			break;
		case OPT_STATUS:
			o->status = true;
			break;
		case 't':
			o->timeout_ms = (int)strtol(optarg, &end, 10);
			if (*end || o->timeout_ms < 1 || o->timeout_ms > 600000) {
				fprintf(stderr, "kqos-top: -t: '%s' is not 1..600000 ms\n", optarg);
				return -EINVAL;
			}
			break;
		case 'V':
			printf("kqos-top %s\n", KQOS_VERSION);
			exit(EXIT_SUCCESS);
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "kqos-top: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	/* --json alone prints one snapshot; batch mode runs until stopped, as top -b */
	if (o->json && o->iterations < 0 && !o->batch)
		o->iterations = 1;
	return 0;
}

/* --- standalone collector ----------------------------------------------------------------- */

static void stop_child(void)
{
	if (child_pid > 0) {
		kill(child_pid, SIGTERM);
		for (int i = 0; i < 50 && waitpid(child_pid, NULL, WNOHANG) == 0; i++)
			usleep(100000);
		if (waitpid(child_pid, NULL, WNOHANG) == 0) {
			kill(child_pid, SIGKILL);
			waitpid(child_pid, NULL, 0);
		}
		child_pid = -1;
	}
	if (*child_dir) {
		unlink(child_sock);
		unlink(child_log);
		rmdir(child_dir);
		child_dir[0] = '\0';
	}
}

static void on_signal(int sig)
{
	top_stop = 1;
}

static int kqosd_path(char *buf, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -errno;
	exe[n] = '\0';
	if (snprintf(buf, len, "%s/kqosd", dirname(exe)) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

static void show_child_log(void)
{
	char line[512];
	FILE *f = fopen(child_log, "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		fprintf(stderr, "  kqosd: %s", line);
	fclose(f);
}

/* Start `kqosd --dry-run --socket <tmp>` and wait until it answers; 0 or -errno (printed). */
static int start_standalone(struct top_conn **ret)
{
	char kqosd[PATH_MAX];
	int err = kqosd_path(kqosd, sizeof(kqosd));

	if (!err && access(kqosd, X_OK))
		err = -errno;
	if (err) {
		fprintf(stderr, "kqos-top: --standalone needs kqosd next to kqos-top: %s\n",
			strerror(-err));
		return err;
	}
	snprintf(child_dir, sizeof(child_dir), "/tmp/kqos-top-XXXXXX");
	if (!mkdtemp(child_dir)) {
		err = -errno;
		child_dir[0] = '\0';
		return err;
	}
	snprintf(child_sock, sizeof(child_sock), "%s/kqos.sock", child_dir);
	snprintf(child_log, sizeof(child_log), "%s/kqosd.log", child_dir);
	child_pid = fork();
	if (child_pid < 0)
		return -errno;
	if (child_pid == 0) {
		int fd = open(child_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		/* never outlive kqos-top, even after a SIGKILL */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		execl(kqosd, "kqosd", "--dry-run", "--socket", child_sock, "--log-level", "warn",
		      (char *)NULL);
		_exit(127);
	}
	fprintf(stderr, "kqos-top: starting a monitoring-only collector (%s --dry-run)\n", kqosd);
	for (int i = 0; i < 300 && !top_stop; i++) {
		int status;

		if (waitpid(child_pid, &status, WNOHANG) == child_pid) {
			child_pid = -1;
			fprintf(stderr, "kqos-top: the collector exited (status %d)\n", status);
			show_child_log();
			return -ECHILD;
		}
		if (!top_conn__open(child_sock, ret))
			return 0;
		usleep(100000);
	}
	fprintf(stderr, "kqos-top: the collector did not open its socket in 30 s\n");
	show_child_log();
	return -ETIMEDOUT;
}

/* --- modes -------------------------------------------------------------------------------- */

static void sleep_s(double s)
{
	struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (time_t)s) * 1e9) };

	/* a signal cuts the sleep short (no SA_RESTART) */
	nanosleep(&ts, NULL);
}

/* Error objects from the agent; an agent that just started has no snapshot until its first tick. */
static bool is_error(const char *line)
{
	return !strncmp(line, "{\"error\":", 9);
}

static int run_batch(struct top_conn *c, const struct top_opts *o)
{
	int errors = 0;

	for (long i = 0; (o->iterations < 0 || i < o->iterations) && !top_stop; i++) {
		struct top_model *m = NULL;
		char *line = NULL;
		int err = top_conn__get(c, 10000, &line);

		if (!err && is_error(line) && ++errors < 100) {
			if (!strstr(line, "no snapshot yet"))
				fprintf(stderr, "kqos-top: agent says %s\n", line);
			free(line);
			i--;
			sleep_s(0.2);
			continue;
		}
		if (!err && !o->json && top_model__parse(line, &m))
			err = -EPROTO;
		if (err) {
			fprintf(stderr, "kqos-top: no usable answer from the agent: %s\n",
				line ? line : strerror(-err));
			free(line);
			return EXIT_FAILURE;
		}
		errors = 0;
		if (o->json) {
			printf("%s\n", line);
		} else {
			if (i)
				putchar('\n');
			top_model__sort(m, COL_CPU, true);
			top_print_batch(stdout, m, o->filter);
		}
		fflush(stdout);
		top_model__free(m);
		free(line);
		if (o->iterations < 0 || i + 1 < o->iterations)
			sleep_s(o->interval_s);
	}
	return EXIT_SUCCESS;
}

/*
 * --check: one `health` request. Silent agents (a stopped or wedged loop) time out; a loop that
 * runs but no longer produces snapshots answers ok=false. Prints one line either way.
 */
static int run_check(const struct top_opts *o)
{
	struct top_conn *c = NULL;
	char *line = NULL;
	int err = top_conn__open(o->socket, &c);

	if (!err)
		err = top_conn__call(c, "health", o->timeout_ms, &line);
	top_conn__free(c);
	if (err == -ETIMEDOUT) {
		printf("kqos-top: unhealthy: kqosd at %s did not answer within %d ms (loop stuck)\n",
		       o->socket, o->timeout_ms);
		return EXIT_FAILURE;
	}
	if (err) {
		printf("kqos-top: unhealthy: no kqos agent at %s: %s\n", o->socket, strerror(-err));
		return EXIT_FAILURE;
	}
	err = strstr(line, "\"ok\":true") ? 0 : -EPROTO;
	printf("kqos-top: %s: %s\n", err ? "unhealthy" : "healthy", line);
	free(line);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}

/* --status: one `status` request, printed as text. */
static int run_status(const struct top_opts *o)
{
	struct top_conn *c = NULL;
	char *line = NULL;
	int err = top_conn__open(o->socket, &c);

	if (!err)
		err = top_conn__call(c, "status", o->timeout_ms, &line);
	top_conn__free(c);
	if (err) {
		fprintf(stderr, "kqos-top: no status from kqosd at %s: %s\n", o->socket,
			strerror(-err));
		return EXIT_FAILURE;
	}
	err = top_status_print(stdout, line);
	if (err)
		fprintf(stderr, "kqos-top: the agent's status is not JSON: %s\n", line);
	free(line);
	return err ? EXIT_FAILURE : EXIT_SUCCESS;
}

static void no_agent(const char *path, int err)
{
	fprintf(stderr, "kqos-top: no kqos agent at %s: %s\n", path, strerror(-err));
	if (err == -EACCES)
		fprintf(stderr, "  the socket is root's (mode 0600): run as root, or set "
				"export.socketGroup in kqosd's config and join that group\n");
	else
		fprintf(stderr, "  start kqosd, point -s at its socket, or run "
				"`kqos-top --standalone` (as root) to collect without enforcing\n");
}

int main(int argc, char **argv)
{
	struct top_opts o = { .socket = EXPORT_SOCKET_DEFAULT,
			      .interval_s = 1,
			      .iterations = -1,
			      .timeout_ms = 2000 };
	struct sigaction sa = { .sa_handler = on_signal };
	struct top_conn *c = NULL;
	int err, rc;

	setlocale(LC_ALL, "");
	if (parse_args(argc, argv, &o))
		return EXIT_FAILURE;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (o.check)
		return run_check(&o);
	if (o.status)
		return run_status(&o);
	if (o.standalone) {
		err = start_standalone(&c);
		if (err) {
			stop_child();
			return EXIT_FAILURE;
		}
	} else {
		err = top_conn__open(o.socket, &c);
		if (err) {
			no_agent(o.socket, err);
			return EXIT_FAILURE;
		}
	}
	if (o.batch || o.json) {
		rc = run_batch(c, &o);
	} else {
		struct top_view_opts vo = { .interval_s = o.interval_s, .filter = o.filter };

		rc = top_view_run(c, &vo);
	}
	top_conn__free(c);
	stop_child();
	return rc;
}
