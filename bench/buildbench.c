// SPDX-License-Identifier: GPL-2.0
/*
 * bench/buildbench: the snapshot build alone (user/model/snapbuild.c), at N walked pods of one
 * container each, every cgroup running every tick and every 10th tick with histograms, as
 * kqosd's 100 ms tick sees it with collector.histInterval 1 s. Pure: no root, no BPF, no
 * files, so a change to the model can be measured before and after on a busy machine too.
 *
 *   buildbench PODS TICKS ROUNDS [EVICT_MB]
 *
 * EVICT_MB (0): before each build, write that many MB elsewhere (untimed), so the build finds
 * its data evicted from the caches as kqosd does among a running load (2-3x slower than hot).
 * Prints, per round, the mean µs per build and ns per entity (pod or container), and the
 * medians of builds without and with histograms; then the median of the rounds. Figures,
 * never a verdict.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sample.h"
#include "snapbuild.h"

#define HIST_EVERY 10

struct load {
	size_t npods;
	struct cgwalk_result walk;
	struct cgwalk_pod *pods;
	struct cgwalk_container *ctrs;
	struct cg_delta *d; /* 2 per pod, sorted by cgid */
	char **paths;
	struct cg_file_stat *files; /* sorted by path */
	__u32 (*hist)[KQOS_HIST_SLOTS];
	struct hist_span *span; /* of each histogram, as the collector's read gives it */
};

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_file(const void *a, const void *b)
{
	return strcmp(((const struct cg_file_stat *)a)->path,
		      ((const struct cg_file_stat *)b)->path);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The blocks a first read of @h moved, as the collector's read gives them. */
static struct hist_span span_of(const __u32 *h)
{
	unsigned int lo = KQOS_HIST_SLOTS, hi = KQOS_HIST_SLOTS;

	for (unsigned int s = 0; s < KQOS_HIST_SLOTS; s++) {
		if (!h[s])
			continue;
		if (lo == KQOS_HIST_SLOTS)
			lo = s & ~(HIST_SPAN_BLOCK - 1u);
		hi = (s | (HIST_SPAN_BLOCK - 1u)) + 1;
	}
	return (struct hist_span){ .lo = (__u16)lo, .hi = (__u16)hi };
}

static void make_pod(struct load *l, size_t i)
{
	struct cgwalk_pod *p = &l->pods[i];
	struct cgwalk_container *c = &l->ctrs[i];

	/* random-looking, as kubelet's are: path order (the files') is not the pod list's */
	snprintf(p->uid, sizeof(p->uid), "%08x-0000-4000-8000-%012zx",
		 (unsigned int)((i + 1) * 2654435761u), i);
	p->qos = i % 3 == 0 ? CGWALK_QOS_BESTEFFORT : CGWALK_QOS_BURSTABLE;
	if (asprintf(&p->path, "kubepods/%spod%s", i % 3 == 0 ? "besteffort/" : "burstable/",
		     p->uid) < 0)
		exit(2);
	snprintf(c->id, sizeof(c->id), "%064zx", i);
	if (asprintf(&c->path, "%s/%s", p->path, c->id) < 0)
		exit(2);
	p->containers = c;
	p->nr_containers = 1;
	for (int k = 0; k < 2; k++) {
		size_t e = 2 * i + k;

		if (asprintf(&l->paths[e], "/%s", k ? c->path : p->path) < 0)
			exit(2);
		l->d[e] = (struct cg_delta){ .d = { .cgid = 1000 + e }, .path = l->paths[e] };
		l->files[e] = (struct cg_file_stat){ .path = l->paths[e],
						     .is_pod = !k,
						     .read_ns = 1,
						     .cgid = 1000 + e,
						     .has_memory = true,
						     .mem_used_bytes = 1 << 20 };
		snprintf(l->files[e].cpuset, sizeof(l->files[e].cpuset), "0-1");
		l->hist[e][8 + e % 16] = 3;
		l->hist[e][40] = 1;
		l->span[e] = span_of(l->hist[e]);
	}
}

static void make_load(struct load *l, size_t npods)
{
	size_t n = 2 * npods;

	l->npods = npods;
	l->pods = calloc(npods, sizeof(*l->pods));
	l->ctrs = calloc(npods, sizeof(*l->ctrs));
	l->d = calloc(n, sizeof(*l->d));
	l->paths = calloc(n, sizeof(*l->paths));
	l->files = calloc(n, sizeof(*l->files));
	l->hist = calloc(n, sizeof(*l->hist));
	l->span = calloc(n, sizeof(*l->span));
	if (!l->pods || !l->ctrs || !l->d || !l->paths || !l->files || !l->hist || !l->span)
		exit(2);
	for (size_t i = 0; i < npods; i++)
		make_pod(l, i);
	qsort(l->files, n, sizeof(*l->files), cmp_file);
	l->walk = (struct cgwalk_result){ .pods = l->pods, .nr_pods = npods };
}

/* One tick's deltas: every cgroup ran; histograms every HIST_EVERY ticks. */
static void tick_input(struct load *l, unsigned int t, struct snapbuild_input *in)
{
	for (size_t e = 0; e < 2 * l->npods; e++) {
		struct cg_totals *d = &l->d[e].d;

		d->oncpu_ns = 1000000 + (e + t) % 7 * 1000;
		d->nr_switch_in = 5 + (e + t) % 3;
		d->rq_wait_cnt = 5;
		d->rq_wait_ns = 50000;
		d->rq_wait_max_ns = 20000;
		d->no_hist = t % HIST_EVERY;
		d->rq_hist = d->no_hist ? NULL : l->hist[e] + l->span[e].lo;
		d->rq_span = l->span[e];
	}
	*in = (struct snapbuild_input){ .dt_ns = 100000000ULL,
					.mono_ns = (t + 1) * 100000000ULL,
					.wall_ns = (t + 1) * 100000000ULL,
					.cgs = l->d,
					.nr_cgs = 2 * l->npods,
					.pods_from_walk = true,
					.walk = &l->walk,
					.walk_gen = 1,
					.files = l->files,
					.nr_files = 2 * l->npods,
					.files_gen = 1,
					.nr_online = 2,
					.kubepods = "/kubepods" };
}

struct figures {
	double mean, plain, hist; /* µs: mean of all builds, median without and with histograms */
};

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n ? v[n / 2] : 0;
}

/* Push the build's data out of the caches, as a load running between two ticks does. */
static void evict(unsigned char *buf, size_t len, unsigned int t)
{
	for (size_t i = 0; i < len; i += 64)
		buf[i] = (unsigned char)(t + i);
}

static struct figures one_round(struct load *l, unsigned int ticks, unsigned char *ev,
				size_t ev_len)
{
	struct snapbuild_opts o = { .hierarchy = "v1-cpu", .mount = "/m", .pod_source = "cgroup" };
	double *plain = calloc(ticks, sizeof(double)), *hist = calloc(ticks, sizeof(double));
	struct snapshot *prev = NULL, *s;
	struct figures f = { 0 };
	size_t np = 0, nh = 0;
	struct snapbuild_input in;
	struct snapbuild *sb;

	if (!plain || !hist || snapbuild__new(&o, &sb))
		exit(2);
	for (unsigned int t = 0; t < ticks; t++) {
		double t0, us;

		tick_input(l, t, &in);
		evict(ev, ev_len, t);
		t0 = now_us();
		s = snapbuild__build(sb, &in);
		us = now_us() - t0;
		if (!s)
			exit(2);
		f.mean += us / ticks;
		if (t % HIST_EVERY)
			plain[np++] = us;
		else
			hist[nh++] = us;
		/* as in kqosd: the last snapshot stays alive while the next is built */
		snapshot__put(prev);
		prev = s;
	}
	snapshot__put(prev);
	snapbuild__free(sb);
	f.plain = median(plain, np);
	f.hist = median(hist, nh);
	free(plain);
	free(hist);
	return f;
}

int main(int argc, char **argv)
{
	size_t npods = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000;
	unsigned int ticks = argc > 2 ? strtoul(argv[2], NULL, 10) : 200;
	unsigned int rounds = argc > 3 ? strtoul(argv[3], NULL, 10) : 5;
	size_t ev_len = (argc > 4 ? strtoul(argv[4], NULL, 10) : 0) << 20;
	unsigned char *ev = ev_len ? malloc(ev_len) : NULL;
	double mean[64], plain[64], hist[64];
	struct load l;

	if (!npods || ticks < HIST_EVERY || !rounds || rounds > 64 || (ev_len && !ev)) {
		fprintf(stderr,
			"usage: buildbench PODS TICKS ROUNDS [EVICT_MB] (TICKS >= %d, ROUNDS <= 64)\n",
			HIST_EVERY);
		return 2;
	}
	make_load(&l, npods);
	printf("buildbench: %zu pods (%zu entities), %u ticks a round, histograms every %d, "
	       "%zu MB evicted before each\n",
	       npods, 2 * npods, ticks, HIST_EVERY, ev_len >> 20);
	for (unsigned int r = 0; r < rounds; r++) {
		struct figures f = one_round(&l, ticks, ev, ev_len);

		mean[r] = f.mean;
		plain[r] = f.plain;
		hist[r] = f.hist;
		printf("round %u: mean %.1f us/build (%.0f ns/entity); median %.1f us without "
		       "histograms, %.1f us with\n",
		       r + 1, f.mean, f.mean * 1e3 / (2 * npods), f.plain, f.hist);
	}
	printf("median of rounds: mean %.1f us/build (%.0f ns/entity); %.1f us without "
	       "histograms, %.1f us with\n",
	       median(mean, rounds), median(mean, rounds) * 1e3 / (2 * npods),
	       median(plain, rounds), median(hist, rounds));
	free(ev);
	return 0;
}
