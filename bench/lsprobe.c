// SPDX-License-Identifier: GPL-2.0
/*
 * lsprobe: a latency-sensitive service stand-in for bench/interference.sh.
 *
 * N threads each serve one request per period: wake at the request's scheduled start (absolute
 * CLOCK_MONOTONIC, so a late request never shifts the ones after it), do a fixed amount of CPU
 * work, and record the response delay = completion - scheduled start. A wait in the run queue,
 * a preemption by a neighbour or a throttled period all land in that delay; with no neighbour it
 * is the work itself plus the wake-up latency. The schedule is open-loop: a thread that falls
 * behind serves its backlog at once, and every request of the backlog counts its full delay.
 *
 * The work is a calibrated spin loop. Calibration takes the fastest of many short trials, so a
 * busy machine slows it less than it slows a single long trial; the script calibrates once and
 * passes --loops to every run so that all conditions do the same work.
 *
 * Output: one JSON object on stdout (count, p50, p90, p99, p99.9, max, mean in µs). --samples
 * writes every delay (µs, one per line), --trace writes "unix_us delay_us" per request (the
 * scheduled start in CLOCK_REALTIME µs), for timelines. --start-fifo blocks until a byte arrives
 * on a FIFO, so the caller can first move the process into its cgroups; the threads are created
 * only after that.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define NSEC_PER_USEC UINT64_C(1000)
#define NSEC_PER_SEC  UINT64_C(1000000000)
#define MAX_THREADS   256
#define CALIB_TRIALS  200
#define CALIB_TRIAL_NS \
	UINT64_C(20000) /* long enough to time, short enough to run between preemptions */
#define START_MARGIN_NS (5 * UINT64_C(1000000))

struct probe_opts {
	unsigned int nr_threads;
	uint64_t period_ns;
	uint64_t work_ns;
	uint64_t duration_ns;
	uint64_t loops; /* 0: calibrate */
	bool is_calibrate_only;
	const char *samples_path;
	const char *trace_path;
	const char *start_fifo;
};

struct probe_thread {
	pthread_t tid;
	uint64_t first_ns; /* scheduled start of request 0 */
	uint64_t period_ns;
	uint64_t end_ns; /* no request is scheduled at or after this */
	uint64_t loops;
	uint64_t *delay_ns;
	size_t nr;
	size_t cap;
};

static volatile uint64_t spin_sink; /* keeps the work loop from being optimised away */

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

static __attribute__((noinline)) void spin(uint64_t loops)
{
	uint64_t x = 0;

	for (uint64_t i = 0; i < loops; i++) {
		x += i * 2654435761ULL;
		__asm__ volatile("" : "+r"(x));
	}
	spin_sink = x;
}

/* Loops for @work_ns: the fastest of CALIB_TRIALS trials of about CALIB_TRIAL_NS each. */
static uint64_t calibrate(uint64_t work_ns)
{
	uint64_t trial = 64, best = UINT64_MAX;

	for (;;) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC);

		spin(trial);
		if (now_ns(CLOCK_MONOTONIC) - t0 >= CALIB_TRIAL_NS || trial >= (1ULL << 40))
			break;
		trial *= 2;
	}
	for (int i = 0; i < CALIB_TRIALS; i++) {
		uint64_t t0 = now_ns(CLOCK_MONOTONIC), dt;

		spin(trial);
		dt = now_ns(CLOCK_MONOTONIC) - t0;
		if (dt && dt < best)
			best = dt;
	}
	return best == UINT64_MAX ? trial : (uint64_t)((double)trial * work_ns / best + 0.5);
}

static void sleep_until(uint64_t t_ns)
{
	struct timespec ts = { .tv_sec = t_ns / NSEC_PER_SEC, .tv_nsec = t_ns % NSEC_PER_SEC };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *thread_main(void *arg)
{
	struct probe_thread *t = arg;

	for (uint64_t sched = t->first_ns; sched < t->end_ns && t->nr < t->cap;
	     sched += t->period_ns) {
		sleep_until(sched);
		spin(t->loops);
		t->delay_ns[t->nr++] = now_ns(CLOCK_MONOTONIC) - sched;
	}
	return NULL;
}

static int parse_duration_ns(const char *s, uint64_t *ret)
{
	static const struct {
		const char *suffix;
		double mult;
	} units[] = { { "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1e9 } };
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].suffix)) {
			*ret = (uint64_t)(v * units[i].mult + 0.5);
			return 0;
		}
	}
	return -EINVAL;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: lsprobe [OPTIONS]\n"
		"LS service probe: threads that wake on a period, work, and record response delays.\n\n"
		"  -t, --threads N        worker threads (default 4)\n"
		"  -p, --period DUR       request period per thread (default 2ms)\n"
		"  -w, --work DUR         CPU work per request (default 200us, calibrated)\n"
		"  -d, --duration DUR     how long to serve (default 10s)\n"
		"  -L, --loops N          spin loops per request (skips calibration)\n"
		"  -C, --calibrate        print the loop count for --work as JSON and exit\n"
		"  -s, --samples FILE     every delay in us, one per line\n"
		"  -T, --trace FILE       \"unix_us delay_us\" per request (scheduled start, realtime)\n"
		"  -f, --start-fifo PATH  read one byte from this FIFO before starting\n"
		"  -h, --help\n"
		"Durations: 2ms, 200us, 1.5s, or a number of seconds.\n");
}

static int parse_one(int c, const char *arg, struct probe_opts *o)
{
	char *end;

	switch (c) {
	case 't':
		o->nr_threads = (unsigned int)strtoul(arg, &end, 10);
		return *end || !o->nr_threads || o->nr_threads > MAX_THREADS ? -EINVAL : 0;
	case 'p':
		return parse_duration_ns(arg, &o->period_ns) || !o->period_ns ? -EINVAL : 0;
	case 'w':
		return parse_duration_ns(arg, &o->work_ns);
	case 'd':
		return parse_duration_ns(arg, &o->duration_ns);
	case 'L':
		o->loops = strtoull(arg, &end, 10);
		return *end || !o->loops ? -EINVAL : 0;
	case 'C':
		o->is_calibrate_only = true;
		return 0;
	case 's':
		o->samples_path = arg;
		return 0;
	case 'T':
		o->trace_path = arg;
		return 0;
	case 'f':
		o->start_fifo = arg;
		return 0;
	default:
		return -EINVAL;
	}
}

static int parse_opts(int argc, char **argv, struct probe_opts *o)
{
	static const struct option long_opts[] = {
		{ "threads", required_argument, NULL, 't' },
		{ "period", required_argument, NULL, 'p' },
		{ "work", required_argument, NULL, 'w' },
		{ "duration", required_argument, NULL, 'd' },
		{ "loops", required_argument, NULL, 'L' },
		{ "calibrate", no_argument, NULL, 'C' },
		{ "samples", required_argument, NULL, 's' },
		{ "trace", required_argument, NULL, 'T' },
		{ "start-fifo", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*o = (struct probe_opts){ .nr_threads = 4,
				  .period_ns = 2000 * NSEC_PER_USEC,
				  .work_ns = 200 * NSEC_PER_USEC,
				  .duration_ns = 10 * NSEC_PER_SEC };
	while ((c = getopt_long(argc, argv, "t:p:w:d:L:Cs:T:f:h", long_opts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			exit(EXIT_SUCCESS);
		}
		if (parse_one(c, optarg, o)) {
			fprintf(stderr, "lsprobe: bad option -%c %s (see --help)\n", c,
				optarg ? optarg : "");
			return -EINVAL;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "lsprobe: unexpected argument '%s'\n", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

static int wait_fifo(const char *path)
{
	char byte;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (read(fd, &byte, 1) < 0)
		err = -errno;
	close(fd);
	return err;
}

static void threads_free(struct probe_thread *th, unsigned int n)
{
	if (!th)
		return;
	for (unsigned int i = 0; i < n; i++)
		free(th[i].delay_ns);
	free(th);
}

/* Per-thread schedules staggered by period/N; sample buffers touched now, not while serving. */
static int threads_new(const struct probe_opts *o, uint64_t start_ns, struct probe_thread **ret)
{
	struct probe_thread *th = calloc(o->nr_threads, sizeof(*th));
	size_t cap = o->duration_ns / o->period_ns + 1;

	if (!th)
		return -ENOMEM;
	for (unsigned int i = 0; i < o->nr_threads; i++) {
		th[i].first_ns = start_ns + o->period_ns * i / o->nr_threads;
		th[i].period_ns = o->period_ns;
		th[i].end_ns = start_ns + o->duration_ns;
		th[i].loops = o->loops;
		th[i].cap = cap;
		th[i].delay_ns = malloc(cap * sizeof(*th[i].delay_ns));
		if (!th[i].delay_ns) {
			threads_free(th, o->nr_threads);
			return -ENOMEM;
		}
		memset(th[i].delay_ns, 0, cap * sizeof(*th[i].delay_ns));
	}
	*ret = th;
	return 0;
}

static int threads_run(struct probe_thread *th, unsigned int n)
{
	unsigned int started = 0;
	int err = 0;

	for (; started < n; started++) {
		err = -pthread_create(&th[started].tid, NULL, thread_main, &th[started]);
		if (err)
			break;
	}
	for (unsigned int i = 0; i < started; i++)
		pthread_join(th[i].tid, NULL);
	return err;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* All delays, sorted; NULL only when out of memory (an empty run gives a zero-length array). */
static uint64_t *merge_sorted(const struct probe_thread *th, unsigned int n, size_t *ret_nr)
{
	size_t total = 0, k = 0;
	uint64_t *all;

	for (unsigned int i = 0; i < n; i++)
		total += th[i].nr;
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return NULL;
	for (unsigned int i = 0; i < n; i++)
		for (size_t j = 0; j < th[i].nr; j++)
			all[k++] = th[i].delay_ns[j];
	if (total)
		qsort(all, total, sizeof(*all), cmp_u64);
	*ret_nr = total;
	return all;
}

/* Nearest rank: the smallest sample with at least @q of the samples at or below it. */
static double pct_us(const uint64_t *sorted, size_t n, double q)
{
	size_t rank;

	if (!n)
		return 0;
	rank = (size_t)(q * (double)n + 0.999999);
	rank = rank ? rank - 1 : 0;
	return (double)sorted[rank < n ? rank : n - 1] / NSEC_PER_USEC;
}

static double mean_us(const uint64_t *v, size_t n)
{
	double sum = 0;

	for (size_t i = 0; i < n; i++)
		sum += (double)v[i];
	return n ? sum / (double)n / NSEC_PER_USEC : 0;
}

static void print_summary(const struct probe_opts *o, uint64_t start_unix_ns, const uint64_t *s,
			  size_t n)
{
	printf("{\"threads\": %u, \"period_us\": %.1f, \"work_us\": %.1f, \"loops\": %" PRIu64
	       ", \"duration_s\": %.3f, \"start_unix_us\": %" PRIu64 ", \"count\": %zu"
	       ", \"p50_us\": %.1f, \"p90_us\": %.1f, \"p99_us\": %.1f, \"p999_us\": %.1f"
	       ", \"max_us\": %.1f, \"mean_us\": %.1f}\n",
	       o->nr_threads, (double)o->period_ns / NSEC_PER_USEC,
	       (double)o->work_ns / NSEC_PER_USEC, o->loops, (double)o->duration_ns / NSEC_PER_SEC,
	       start_unix_ns / NSEC_PER_USEC, n, pct_us(s, n, 0.50), pct_us(s, n, 0.90),
	       pct_us(s, n, 0.99), pct_us(s, n, 0.999), n ? (double)s[n - 1] / NSEC_PER_USEC : 0,
	       mean_us(s, n));
}

static int write_samples(const char *path, const uint64_t *s, size_t n)
{
	FILE *f = fopen(path, "we");
	int err = 0;

	if (!f)
		return -errno;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%.1f\n", (double)s[i] / NSEC_PER_USEC);
	if (fclose(f))
		err = -errno;
	return err;
}

/* Scheduled starts in CLOCK_REALTIME µs: @offset_ns = realtime - monotonic at start. */
static int write_trace(const char *path, const struct probe_thread *th, unsigned int n,
		       int64_t offset_ns)
{
	FILE *f = fopen(path, "we");
	int err = 0;

	if (!f)
		return -errno;
	for (unsigned int i = 0; i < n; i++)
		for (size_t j = 0; j < th[i].nr; j++)
			fprintf(f, "%" PRIu64 " %.1f\n",
				(uint64_t)((int64_t)(th[i].first_ns + j * th[i].period_ns) +
					   offset_ns) /
					NSEC_PER_USEC,
				(double)th[i].delay_ns[j] / NSEC_PER_USEC);
	if (fclose(f))
		err = -errno;
	return err;
}

static int report(const struct probe_opts *o, const struct probe_thread *th, int64_t offset_ns,
		  uint64_t start_ns)
{
	size_t n = 0;
	uint64_t *sorted = merge_sorted(th, o->nr_threads, &n);
	int err = 0;

	if (!sorted)
		return -ENOMEM;
	print_summary(o, (uint64_t)((int64_t)start_ns + offset_ns), sorted, n);
	if (o->samples_path && (err = write_samples(o->samples_path, sorted, n)))
		fprintf(stderr, "lsprobe: writing %s: %s\n", o->samples_path, strerror(-err));
	if (!err && o->trace_path &&
	    (err = write_trace(o->trace_path, th, o->nr_threads, offset_ns)))
		fprintf(stderr, "lsprobe: writing %s: %s\n", o->trace_path, strerror(-err));
	free(sorted);
	return err;
}

static int serve(struct probe_opts *o)
{
	struct probe_thread *th = NULL;
	uint64_t start_ns;
	int64_t offset_ns;
	int err;

	if (!o->loops)
		o->loops = calibrate(o->work_ns);
	offset_ns = (int64_t)now_ns(CLOCK_REALTIME) - (int64_t)now_ns(CLOCK_MONOTONIC);
	start_ns = now_ns(CLOCK_MONOTONIC) + START_MARGIN_NS;
	err = threads_new(o, start_ns, &th);
	if (err) {
		fprintf(stderr, "lsprobe: %s\n", strerror(-err));
		return err;
	}
	err = threads_run(th, o->nr_threads);
	if (err)
		fprintf(stderr, "lsprobe: creating threads: %s\n", strerror(-err));
	else
		err = report(o, th, offset_ns, start_ns);
	threads_free(th, o->nr_threads);
	return err;
}

int main(int argc, char **argv)
{
	struct probe_opts o;
	int err;

	if (parse_opts(argc, argv, &o))
		return EXIT_FAILURE;
	if (o.is_calibrate_only) {
		o.loops = o.loops ? o.loops : calibrate(o.work_ns);
		printf("{\"work_us\": %.1f, \"loops\": %" PRIu64 "}\n",
		       (double)o.work_ns / NSEC_PER_USEC, o.loops);
		return EXIT_SUCCESS;
	}
	/* The default 50 µs timer slack would be measured as wake-up delay. */
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	if (o.start_fifo) {
		err = wait_fifo(o.start_fifo);
		if (err) {
			fprintf(stderr, "lsprobe: start fifo %s: %s\n", o.start_fifo,
				strerror(-err));
			return EXIT_FAILURE;
		}
	}
	return serve(&o) ? EXIT_FAILURE : EXIT_SUCCESS;
}
