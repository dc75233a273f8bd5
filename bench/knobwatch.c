// SPDX-License-Identifier: GPL-2.0
/*
 * knobwatch: polls cgroup knob files and logs every change, for bench/interference.sh.
 *
 * Every interval (default 1 ms, absolute CLOCK_MONOTONIC schedule) each pattern is expanded with
 * glob(3), so files of a cgroup created during the run are picked up within one interval, and
 * each file is read. A file seen for the first time logs "init", a changed value "set":
 *
 *   <unix_us> init|set <path> <value>
 *
 * The time is CLOCK_REALTIME in µs, the clock of the other bench logs. A poll only sees changes:
 * a write of the value already there is invisible (kqos' actuator skips those anyway), and two
 * writes within one interval show as one. Runs until SIGINT or SIGTERM, or --duration.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_SEC  UINT64_C(1000000000)
#define MAX_FILES     512
#define VALUE_LEN     128

struct watched_file {
	char path[PATH_MAX];
	char value[VALUE_LEN];
};

struct watch {
	struct watched_file *files;
	size_t nr;
	FILE *out;
	uint64_t interval_ns;
	uint64_t end_ns; /* 0: until a signal */
	char **patterns;
	int nr_patterns;
};

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The first line of @path without its newline; -errno if it cannot be read. */
static int read_value(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0) {
		n = -errno;
		close(fd);
		return (int)n;
	}
	close(fd);
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

static struct watched_file *find_or_add(struct watch *w, const char *path, bool *ret_is_new)
{
	*ret_is_new = false;
	for (size_t i = 0; i < w->nr; i++)
		if (!strcmp(w->files[i].path, path))
			return &w->files[i];
	if (w->nr >= MAX_FILES || strlen(path) >= PATH_MAX)
		return NULL;
	*ret_is_new = true;
	snprintf(w->files[w->nr].path, PATH_MAX, "%s", path);
	return &w->files[w->nr++];
}

static void check_file(struct watch *w, const char *path)
{
	char value[VALUE_LEN];
	struct watched_file *f;
	bool is_new;

	if (read_value(path, value, sizeof(value)))
		return; /* removed between glob and read, or not readable: nothing to log */
	f = find_or_add(w, path, &is_new);
	if (!f || (!is_new && !strcmp(f->value, value)))
		return;
	fprintf(w->out, "%" PRIu64 " %s %s %s\n", now_ns(CLOCK_REALTIME) / NSEC_PER_USEC,
		is_new ? "init" : "set", path, *value ? value : "\"\"");
	snprintf(f->value, sizeof(f->value), "%s", value);
}

static void poll_once(struct watch *w)
{
	for (int i = 0; i < w->nr_patterns; i++) {
		glob_t gl;

		if (glob(w->patterns[i], GLOB_NOSORT, NULL, &gl) == 0)
			for (size_t j = 0; j < gl.gl_pathc; j++)
				check_file(w, gl.gl_pathv[j]);
		globfree(&gl);
	}
}

static bool stop_requested(void)
{
	sigset_t pending;

	sigpending(&pending);
	return sigismember(&pending, SIGINT) || sigismember(&pending, SIGTERM);
}

static void run(struct watch *w)
{
	uint64_t next = now_ns(CLOCK_MONOTONIC);

	while (!stop_requested() && (!w->end_ns || next < w->end_ns)) {
		struct timespec ts;

		poll_once(w);
		next += w->interval_ns;
		ts.tv_sec = next / NSEC_PER_SEC;
		ts.tv_nsec = next % NSEC_PER_SEC;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
}

static void usage(FILE *f)
{
	fprintf(f, "Usage: knobwatch [-i INTERVAL_US] [-d SECONDS] [-o FILE] PATTERN...\n"
		   "Polls the files matching each glob PATTERN and logs\n"
		   "\"<unix_us> init|set <path> <value>\" for each new file and each change.\n"
		   "Default interval 1000 us; runs until SIGINT/SIGTERM or -d seconds.\n");
}

static int parse_opts(int argc, char **argv, struct watch *w, const char **ret_out)
{
	char *end;
	int c;

	while ((c = getopt(argc, argv, "i:d:o:h")) != -1) {
		switch (c) {
		case 'i':
			w->interval_ns = strtoull(optarg, &end, 10) * NSEC_PER_USEC;
			if (*end || !w->interval_ns)
				return -EINVAL;
			break;
		case 'd':
			w->end_ns = strtoull(optarg, &end, 10) * NSEC_PER_SEC;
			if (*end)
				return -EINVAL;
			break;
		case 'o':
			*ret_out = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(EXIT_SUCCESS);
		default:
			return -EINVAL;
		}
	}
	w->patterns = argv + optind;
	w->nr_patterns = argc - optind;
	return w->nr_patterns > 0 ? 0 : -EINVAL;
}

int main(int argc, char **argv)
{
	struct watch w = { .interval_ns = 1000 * NSEC_PER_USEC };
	const char *out_path = NULL;
	sigset_t mask;
	int ret = EXIT_FAILURE;

	if (parse_opts(argc, argv, &w, &out_path)) {
		usage(stderr);
		return EXIT_FAILURE;
	}
	if (w.end_ns)
		w.end_ns += now_ns(CLOCK_MONOTONIC);
	/* Blocked, not handled: the loop notices them with sigpending and flushes before exit. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	w.files = calloc(MAX_FILES, sizeof(*w.files));
	w.out = out_path ? fopen(out_path, "we") : stdout;
	if (!w.files || !w.out) {
		fprintf(stderr, "knobwatch: %s: %s\n", out_path ? out_path : "memory",
			strerror(errno));
		goto out;
	}
	run(&w);
	ret = fflush(w.out) ? EXIT_FAILURE : EXIT_SUCCESS;
out:
	if (w.out && w.out != stdout)
		fclose(w.out);
	free(w.files);
	return ret;
}
