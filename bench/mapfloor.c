// SPDX-License-Identifier: GPL-2.0
/*
 * mapfloor: the floor under kqosd's per-tick cost, the BPF batch read of a per-CPU hash of N
 * cgroups, measured on a map of the same shape that this tool creates and fills.
 *
 *   mapfloor N VALUE_SIZE [REPS]
 *
 * Prints the median µs per cgroup of REPS (default 50) full batch reads, 256 keys per call as
 * kqosd's collector does. A floor, not a model: kqosd also reads its stat files and builds.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#define BATCH 256

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int fill(int fd, int n, size_t vsz, int ncpus)
{
	char *v = calloc(ncpus, (vsz + 7) & ~7UL);

	if (!v)
		return -ENOMEM;
	for (__u64 k = 1; k <= (__u64)n; k++)
		if (bpf_map_update_elem(fd, &k, v, BPF_ANY)) {
			free(v);
			return -errno;
		}
	free(v);
	return 0;
}

/* One full read, as the collector does it: batches until ENOENT. */
static int read_all(int fd, __u64 *keys, void *vals)
{
	LIBBPF_OPTS(bpf_map_batch_opts, o);
	__u64 in = 0, out = 0;
	void *inp = NULL;
	int total = 0;

	for (;;) {
		__u32 cnt = BATCH;
		int err = bpf_map_lookup_batch(fd, inp, &out, keys, vals, &cnt, &o);

		total += (int)cnt;
		if (err)
			return errno == ENOENT ? total : -errno;
		in = out;
		inp = &in;
	}
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n, reps = 50, ncpus = libbpf_num_possible_cpus(), fd, err, cap;
	size_t vsz;
	double *us;
	__u64 *keys;
	void *vals;

	if (argc < 3 || (n = atoi(argv[1])) <= 0 || (vsz = strtoul(argv[2], NULL, 0)) == 0 ||
	    (argc > 3 && (reps = atoi(argv[3])) <= 0)) {
		fprintf(stderr, "usage: %s N VALUE_SIZE [REPS [MAX_ENTRIES]]\n", argv[0]);
		return 2;
	}
	/* A hash map's batch read walks every bucket (max_entries, rounded up), full or not. */
	cap = argc > 4 ? atoi(argv[4]) : n;
	if (cap < n) {
		fprintf(stderr, "mapfloor: MAX_ENTRIES %d is below N %d\n", cap, n);
		return 2;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_HASH, "mapfloor", 8, vsz, cap, NULL);
	if (fd < 0) {
		fprintf(stderr, "mapfloor: bpf_map_create: %s\n", strerror(errno));
		return 1;
	}
	keys = calloc(BATCH, sizeof(*keys));
	vals = calloc((size_t)BATCH * ncpus, (vsz + 7) & ~7UL);
	us = calloc(reps, sizeof(*us));
	if (!keys || !vals || !us || (err = fill(fd, n, vsz, ncpus))) {
		fprintf(stderr, "mapfloor: setup failed\n");
		return 1;
	}
	for (int r = 0; r < reps; r++) {
		double t0 = now_us();

		if (read_all(fd, keys, vals) != n) {
			fprintf(stderr, "mapfloor: a batch read did not return %d keys\n", n);
			return 1;
		}
		us[r] = (now_us() - t0) / n;
	}
	qsort(us, reps, sizeof(*us), cmp_d);
	printf("%.3f\n", us[reps / 2]);
	return 0;
}
