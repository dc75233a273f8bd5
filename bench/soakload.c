// SPDX-License-Identifier: GPL-2.0
/*
 * The churn soak's load and recorder (bench/soak.sh runs it): churns cgroups with short-lived
 * tasks (tests/lib/soak.c) next to running kqosd processes, samples each of them every second
 * (BPF hash map entries by map id, RSS, open fds, journal lines naming gone cgroups), reads a
 * snapshot from each socket every 100 ms, prints a table over time, then the baseline, peak
 * and final figures with a pass/fail line per bound. Exits 1 when a bound is broken, 2 when it
 * could not run.
 *
 *   soakload --top NAME [--cgroups 1000] [--duration 60] [--live 50] [--pods-file F]
 *            [--warmup 5] [--settle 30] [--probe-ms 100] [--map-slack 16]
 *            [--rss-growth-kb 4096] [--read-bound-ms 200]
 *            --daemon LABEL:PID:SOCKET:JOURNAL:MOUNT ...   (MOUNT: whose cgroup ids it keys on)
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "soak.h"

#define MAX_DAEMONS 4

enum phase { PH_BASE, PH_CHURN, PH_SETTLE };
static const char *const phase_name[] = { "base", "churn", "settle" };

struct map_fig {
	struct soak_map m;
	long base, peak, final;
	long stale_base, stale_peak, stale_final; /* entries of cgroups that are gone */
	bool seen_base;
};

struct daemon {
	char label[16], sock[108], journal[256], mount[128];
	pid_t pid;
	struct soak_probe *probe;
	struct map_fig maps[SOAK_MAX_MAPS];
	size_t nr_maps;
	long rss_base, rss_warm, rss_peak_warm, rss_peak, rss_final;
	long fd_base, fd_peak, fd_final;
	char fds_before[8192]; /* what the fds pointed to at the baseline */
	size_t jr_peak, jr_gone_final, jr_lines_final;
	long cpu_last, cpu_base, cpu_churn_end;
	__u64 cpu_last_ms, base_end_ms, churn_end_ms;
	char jr_first_gone[256];
	bool alive;
};

static struct opts {
	const char *top, *pods_file;
	unsigned int cgroups, duration_s, live, warmup_s, settle_s, probe_ms;
	long map_slack, rss_growth_kb, read_bound_ms;
} o = { .cgroups = 1000,
	.duration_s = 60,
	.live = 50,
	.warmup_s = 5,
	.settle_s = 30,
	.probe_ms = 100,
	.map_slack = 16,
	.rss_growth_kb = 4096,
	.read_bound_ms = 200 };

static struct daemon ds[MAX_DAEMONS];
static size_t nr_ds;
static atomic_bool stopping;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stopping, true);
}

static int parse_daemon(char *arg)
{
	struct daemon *d = &ds[nr_ds];
	char *label = strtok(arg, ":"), *pid = strtok(NULL, ":"), *sock = strtok(NULL, ":");
	char *journal = strtok(NULL, ":"), *mount = strtok(NULL, "");

	if (nr_ds >= MAX_DAEMONS || !label || !pid || !sock || !journal || !mount)
		return -EINVAL;
	snprintf(d->label, sizeof(d->label), "%s", label);
	d->pid = (pid_t)atoi(pid);
	snprintf(d->sock, sizeof(d->sock), "%s", sock);
	snprintf(d->journal, sizeof(d->journal), "%s", journal);
	snprintf(d->mount, sizeof(d->mount), "%s", mount);
	d->fd_base = d->fd_final = -1;
	nr_ds++;
	return 0;
}

static int parse_opts(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "top", required_argument, NULL, 't' },
		{ "cgroups", required_argument, NULL, 'n' },
		{ "duration", required_argument, NULL, 'd' },
		{ "live", required_argument, NULL, 'l' },
		{ "pods-file", required_argument, NULL, 'p' },
		{ "warmup", required_argument, NULL, 'w' },
		{ "settle", required_argument, NULL, 's' },
		{ "probe-ms", required_argument, NULL, 'i' },
		{ "map-slack", required_argument, NULL, 'm' },
		{ "rss-growth-kb", required_argument, NULL, 'r' },
		{ "read-bound-ms", required_argument, NULL, 'b' },
		{ "daemon", required_argument, NULL, 'D' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		unsigned long v = optarg ? strtoul(optarg, NULL, 10) : 0;

		switch (c) {
		case 't':
			o.top = optarg;
			break;
		case 'n':
			o.cgroups = (unsigned int)v;
			break;
		case 'd':
			o.duration_s = (unsigned int)v;
			break;
		case 'l':
			o.live = (unsigned int)v;
			break;
		case 'p':
			o.pods_file = optarg;
			break;
		case 'w':
			o.warmup_s = (unsigned int)v;
			break;
		case 's':
			o.settle_s = (unsigned int)v;
			break;
		case 'i':
			o.probe_ms = (unsigned int)v;
			break;
		case 'm':
			o.map_slack = (long)v;
			break;
		case 'r':
			o.rss_growth_kb = (long)v;
			break;
		case 'b':
			o.read_bound_ms = (long)v;
			break;
		case 'D':
			if (parse_daemon(optarg))
				return -EINVAL;
			break;
		default:
			return -EINVAL;
		}
	}
	return o.top && nr_ds && o.cgroups && o.duration_s && o.probe_ms ? 0 : -EINVAL;
}

static struct map_fig *map_fig(struct daemon *d, const struct soak_map *m)
{
	for (size_t i = 0; i < d->nr_maps; i++)
		if (d->maps[i].m.id == m->id)
			return &d->maps[i];
	if (d->nr_maps >= SOAK_MAX_MAPS)
		return NULL;
	printf("# %s: map id=%u name=%s type=%u max_entries=%u\n", d->label, m->id, m->name,
	       m->type, m->max_entries);
	d->maps[d->nr_maps] = (struct map_fig){ .m = *m,
						.base = -1,
						.peak = -1,
						.final = -1,
						.stale_base = -1,
						.stale_peak = -1,
						.stale_final = -1 };
	return &d->maps[d->nr_maps++];
}

/* One row's figures of one daemon; returns whether its maps and journal are back. */
static bool sample(struct daemon *d, enum phase ph, bool warm, char *row, size_t len)
{
	struct soak_map maps[SOAK_MAX_MAPS];
	struct soak_probe_stats ps;
	struct soak_journal j;
	size_t n = 0, off = 0;
	long total = 0, stale = 0, rss = soak_rss_kb(d->pid), fds = soak_fds(d->pid);
	bool back = true;

	long cpu = soak_cpu_ticks(d->pid);
	__u64 now = soak_now_ms();
	double pct = 0;

	d->alive = !kill(d->pid, 0) && rss >= 0;
	if (d->cpu_last_ms && now > d->cpu_last_ms)
		pct = 100.0 * (double)(cpu - d->cpu_last) / (double)sysconf(_SC_CLK_TCK) /
		      ((double)(now - d->cpu_last_ms) / 1000.0);
	d->cpu_last = cpu;
	d->cpu_last_ms = now;
	if (ph == PH_BASE) {
		d->cpu_base = cpu;
		d->base_end_ms = now;
	}
	if (ph == PH_CHURN) {
		d->cpu_churn_end = cpu;
		d->churn_end_ms = now;
	}
	if (soak_maps(d->pid, maps, SOAK_MAX_MAPS, &n))
		n = 0;
	soak_maps_stale(d->mount, maps, n);
	for (size_t i = 0; i < n; i++) {
		struct map_fig *f = map_fig(d, &maps[i]);
		long e = maps[i].entries;

		if (!f)
			continue;
		total += e > 0 ? e : 0;
		if (ph == PH_BASE) {
			f->base = e;
			f->seen_base = true;
		}
		f->peak = e > f->peak ? e : f->peak;
		f->final = e;
		if (ph == PH_BASE)
			f->stale_base = maps[i].stale;
		f->stale_peak = maps[i].stale > f->stale_peak ? maps[i].stale : f->stale_peak;
		f->stale_final = maps[i].stale;
		/* judged where the keys were live cgroup ids at the baseline */
		if (f->stale_base == 0) {
			back &= maps[i].stale == 0;
			stale += maps[i].stale > 0 ? maps[i].stale : 0;
		} else {
			back &= !f->seen_base || e <= f->base + o.map_slack;
		}
	}
	if (ph == PH_BASE) {
		d->rss_base = rss;
		if (d->fd_base < 0 || fds < d->fd_base) {
			d->fd_base = fds;
			soak_fd_list(d->pid, d->fds_before, sizeof(d->fds_before));
		}
	}
	if (warm && !d->rss_warm)
		d->rss_warm = rss;
	if (d->rss_warm && rss > d->rss_peak_warm)
		d->rss_peak_warm = rss;
	d->rss_peak = rss > d->rss_peak ? rss : d->rss_peak;
	d->rss_final = rss;
	d->fd_peak = fds > d->fd_peak ? fds : d->fd_peak;
	soak_journal_check(d->journal, "/sys/fs/cgroup", o.top, &j);
	d->jr_peak = j.lines > d->jr_peak ? j.lines : d->jr_peak;
	d->jr_gone_final = j.gone;
	d->jr_lines_final = j.lines;
	snprintf(d->jr_first_gone, sizeof(d->jr_first_gone), "%s", j.first_gone);
	back &= !j.gone;
	soak_probe__stats(d->probe, &ps);
	off += (size_t)snprintf(row + off, len - off,
				" | %s %5.1f %6ld %4ld %6ld %5ld %4zu/%-3zu %6.1f", d->label, pct,
				rss, fds, total, stale, j.lines, j.gone,
				(double)ps.last_max_us / 1000.0);
	for (size_t i = 0; i < n && off < len; i++)
		off += (size_t)snprintf(row + off, len - off, " %ld", maps[i].entries);
	return back;
}

static void header(void)
{
	printf("%6s %-6s %5s %4s", "t_s", "phase", "cgs", "live");
	for (size_t i = 0; i < nr_ds; i++)
		printf(" | %s %5s %6s %4s %6s %5s %8s %6s %s", ds[i].label, "cpu%", "rss_kb", "fds",
		       "maps", "stale", "jrnl/gone", "rd_ms", "entries per map (by id)");
	printf("\n");
}

static bool sample_all(__u64 t0, enum phase ph, bool warm, const struct soak_churn_stats *cs)
{
	char row[2048];
	size_t off;
	bool back = true;

	off = (size_t)snprintf(row, sizeof(row), "%6.1f %-6s %5u %4u",
			       (double)(soak_now_ms() - t0) / 1000.0, phase_name[ph], cs->created,
			       cs->live);
	for (size_t i = 0; i < nr_ds && off < sizeof(row); i++) {
		back &= sample(&ds[i], ph, warm, row + off, sizeof(row) - off);
		off = strlen(row);
	}
	printf("%s\n", row);
	fflush(stdout);
	return back;
}

/* The fd targets that were not there at the baseline: what a leak holds. */
static void print_new_fds(const struct daemon *d)
{
	char now[8192], *line, *save = NULL;

	if (soak_fd_list(d->pid, now, sizeof(now)))
		return;
	for (line = strtok_r(now, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[300];

		snprintf(key, sizeof(key), "%s\n", line);
		if (!strstr(d->fds_before, key))
			printf("#   %s: fd not there at the baseline: %s\n", d->label, line);
	}
}

static int verdict(bool ok, const char *label, const char *what)
{
	printf("%s %s: %s\n", ok ? "PASS" : "FAIL", label, what);
	return ok ? 0 : 1;
}

static int report(const struct soak_churn_stats *cs, __u64 settle_ms, bool settled)
{
	char what[256];
	int fails = 0;

	printf("\n# churn: %u cgroups created, %u destroyed, %u tasks, %u PodList writes, %u "
	       "errors%s%s\n",
	       cs->created, cs->destroyed, cs->tasks, cs->pod_writes, cs->errors,
	       cs->errors ? ", last: " : "", cs->errors ? cs->last_error : "");
	printf("# churn: slowest create %u ms, slowest destroy %u ms\n", cs->create_ms_max,
	       cs->destroy_ms_max);
	printf("# settle: %s after %.1f s\n", settled ? "back to baseline" : "NOT back",
	       (double)settle_ms / 1000.0);
	for (size_t i = 0; i < nr_ds; i++) {
		struct daemon *d = &ds[i];
		struct soak_probe_stats ps;

		soak_probe__stats(d->probe, &ps);
		printf("\n## %s (pid %d)\n", d->label, (int)d->pid);
		printf("%-28s %10s %10s %10s\n", "metric", "baseline", "peak", "final");
		for (size_t k = 0; k < d->nr_maps; k++) {
			struct map_fig *f = &d->maps[k];

			snprintf(what, sizeof(what), "map %u %s (max %u)", f->m.id, f->m.name,
				 f->m.max_entries);
			printf("%-28s %10ld %10ld %10ld\n", what, f->base, f->peak, f->final);
			printf("%-28s %10ld %10ld %10ld\n", "  of gone cgroups", f->stale_base,
			       f->stale_peak, f->stale_final);
		}
		printf("%-28s %10ld %10ld %10ld  (warm %ld, peak after warm %ld)\n", "rss_kb",
		       d->rss_base, d->rss_peak, d->rss_final, d->rss_warm, d->rss_peak_warm);
		printf("%-28s %10ld %10ld %10ld\n", "fds", d->fd_base, d->fd_peak, d->fd_final);
		if (d->churn_end_ms > d->base_end_ms)
			printf("%-28s %.1f %% of one CPU during the churn\n", "cpu",
			       100.0 * (double)(d->cpu_churn_end - d->cpu_base) /
				       (double)sysconf(_SC_CLK_TCK) /
				       ((double)(d->churn_end_ms - d->base_end_ms) / 1000.0));
		printf("%-28s %10s %10zu %10zu  (naming gone cgroups at the end: %zu)\n",
		       "journal lines", "-", d->jr_peak, d->jr_lines_final, d->jr_gone_final);
		printf("%-28s reads %zu, errors %zu, p99 %.1f ms, max %.1f ms%s%s\n",
		       "socket snapshot read", ps.reads, ps.errors, (double)ps.p99_us / 1000.0,
		       (double)ps.max_us / 1000.0, ps.errors ? ", last error: " : "",
		       ps.errors ? ps.last_error : "");

		fails += verdict(d->alive, d->label, "kqosd still running");
		for (size_t k = 0; k < d->nr_maps; k++) {
			struct map_fig *f = &d->maps[k];

			snprintf(what, sizeof(what), "map %u %s: peak %ld <= max_entries %u",
				 f->m.id, f->m.name, f->peak, f->m.max_entries);
			fails += verdict(f->peak <= (long)f->m.max_entries && f->final >= 0,
					 d->label, what);
			/*
			 * Keyed by cgroup ids: exact, whatever else makes cgroups on the host. Other
			 * keys: the count, with a slack.
			 */
			if (f->stale_base != 0) {
				snprintf(what, sizeof(what),
					 "map %u %s: final %ld <= baseline %ld + %ld", f->m.id,
					 f->m.name, f->final, f->base, o.map_slack);
				fails += verdict(!f->seen_base || f->final <= f->base + o.map_slack,
						 d->label, what);
				continue;
			}
			snprintf(what, sizeof(what),
				 "map %u %s: no entry of a gone cgroup left (%ld; peak %ld)",
				 f->m.id, f->m.name, f->stale_final, f->stale_peak);
			fails += verdict(!f->stale_final, d->label, what);
		}
		snprintf(what, sizeof(what),
			 "rss flat after warm-up: peak %ld - warm %ld <= %ld KiB", d->rss_peak_warm,
			 d->rss_warm, o.rss_growth_kb);
		fails += verdict(d->rss_warm > 0 &&
					 d->rss_peak_warm - d->rss_warm <= o.rss_growth_kb,
				 d->label, what);
		snprintf(what, sizeof(what), "fds back to baseline: final %ld <= %ld", d->fd_final,
			 d->fd_base);
		fails += verdict(d->fd_final >= 0 && d->fd_final <= d->fd_base, d->label, what);
		if (d->fd_final > d->fd_base)
			print_new_fds(d);
		snprintf(what, sizeof(what),
			 "socket responsive: max read %.1f ms <= %ld ms, %zu errors, %zu reads",
			 (double)ps.max_us / 1000.0, o.read_bound_ms, ps.errors, ps.reads);
		fails += verdict(ps.reads > 0 && !ps.errors &&
					 ps.max_us <= (__u64)o.read_bound_ms * 1000,
				 d->label, what);
		snprintf(what, sizeof(what), "journal names no gone cgroup: %zu of %zu lines%s%s",
			 d->jr_gone_final, d->jr_lines_final, d->jr_gone_final ? ", first: " : "",
			 d->jr_first_gone);
		fails += verdict(!d->jr_gone_final, d->label, what);
	}
	fails += verdict(cs->created == o.cgroups && cs->destroyed == o.cgroups, "load",
			 "every cgroup created and destroyed");
	printf("\n%s: %d bound(s) broken\n", fails ? "FAIL" : "PASS", fails);
	return fails ? 1 : 0;
}

static void pause_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* Sample every second for @secs (or until @until_back says maps and journal are back). */
static bool record(__u64 t0, enum phase ph, unsigned int secs, bool until_back,
		   struct soak_churn_stats *cs, __u64 *ret_ms)
{
	__u64 start = soak_now_ms();
	int back_in_row = 0;

	for (unsigned int s = 0; s < secs && !atomic_load(&stopping); s++) {
		pause_ms(1000);
		back_in_row = sample_all(t0, ph, false, cs) ? back_in_row + 1 : 0;
		/* three quiet samples in a row: the fd figure is their minimum */
		if (until_back && back_in_row >= 3)
			break;
	}
	*ret_ms = soak_now_ms() - start;
	return back_in_row >= 3;
}

static void churn_loop(struct soak_churn *c, __u64 t0, struct soak_churn_stats *cs)
{
	__u64 start = soak_now_ms(), next = start + 1000;
	__u64 warm_at = start + (__u64)o.duration_s * 250;
	bool warm = false;

	while (!atomic_load(&stopping) && soak_churn__step(c, soak_now_ms() - start) > 0) {
		soak_churn__stats(c, cs);
		if (soak_now_ms() >= next) {
			/* RSS is judged from a quarter into the churn: warm-up is allocation */
			warm = warm || soak_now_ms() >= warm_at;
			sample_all(t0, PH_CHURN, warm, cs);
			next += 1000;
		}
		pause_ms(5);
	}
	soak_churn__stats(c, cs);
}

/*
 * The final fds are the smallest of ten samples over 3 s: a walk in flight holds a dir open,
 * and on a busy host one walk can take seconds.
 */
static void final_fds(void)
{
	for (int k = 0; k < 10; k++) {
		for (size_t i = 0; i < nr_ds; i++) {
			long n = soak_fds(ds[i].pid);

			if (n >= 0 && (ds[i].fd_final < 0 || n < ds[i].fd_final))
				ds[i].fd_final = n;
		}
		pause_ms(300);
	}
}

int main(int argc, char **argv)
{
	struct soak_churn_opts co = { .cg_root = "/sys/fs/cgroup" };
	struct soak_churn_stats cs = { 0 };
	struct soak_churn *c = NULL;
	__u64 t0, settle_ms = 0;
	bool settled;
	int err, rc;

	if (parse_opts(argc, argv)) {
		fprintf(stderr,
			"usage: soakload --top NAME --daemon LABEL:PID:SOCKET:JOURNAL:MOUNT ... "
			"(see bench/README.md)\n");
		return 2;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (size_t i = 0; i < nr_ds; i++) {
		err = soak_probe__new(ds[i].sock, o.probe_ms, &ds[i].probe);
		if (err) {
			fprintf(stderr, "soakload: socket client: %s\n", strerror(-err));
			return 2;
		}
	}
	co.top = o.top;
	co.pods_file = o.pods_file;
	co.total = o.cgroups;
	co.duration_ms = o.duration_s * 1000;
	co.live = o.live;
	printf("# soak: %u cgroups over %u s, %u at once, lifetime %.1f s; warm-up %u s, settle "
	       "<= %u s; a snapshot read every %u ms\n",
	       o.cgroups, o.duration_s, o.live,
	       (double)o.duration_s * o.live / (o.cgroups ? o.cgroups : 1), o.warmup_s, o.settle_s,
	       o.probe_ms);
	/* the permanent dirs (<top>, kubepods) first: the baseline includes them */
	err = soak_churn__new(&co, &c);
	if (err) {
		fprintf(stderr, "soakload: cannot set up the churn: %s\n", strerror(-err));
		rc = 2;
		goto out;
	}
	header();
	t0 = soak_now_ms();
	record(t0, PH_BASE, o.warmup_s ? o.warmup_s : 1, false, &cs, &settle_ms);
	churn_loop(c, t0, &cs);
	settled = record(t0, PH_SETTLE, o.settle_s, true, &cs, &settle_ms);
	final_fds();
	rc = atomic_load(&stopping) ? 130 : report(&cs, settle_ms, settled);
out:
	soak_churn__free(c);
	for (size_t i = 0; i < nr_ds; i++)
		soak_probe__free(ds[i].probe);
	return rc;
}
