// SPDX-License-Identifier: GPL-2.0
#include <math.h>

#include "stages.h"

static int bucket_of(__u64 ns)
{
	__u64 us = (ns + 999) / 1000;
	int i = 0;

	while (i < STAGE_BUCKETS - 1 && us > (1ULL << i))
		i++;
	return i;
}

void stages_add(struct agent_stages *st, enum stage stage, __u64 ns)
{
	struct stage_hist *h = &st->s[stage];

	h->count++;
	h->sum_ns += ns;
	h->last_ns = ns;
	if (ns > h->max_ns)
		h->max_ns = ns;
	h->bucket[bucket_of(ns)]++;
}

const char *stage_name(enum stage stage)
{
	static const char *const names[STAGE_NR] = { "collect", "build", "decide", "apply",
						     "export",	"tick",	 "wall" };

	return stage < STAGE_NR ? names[stage] : "?";
}

__u64 stage_bucket_le_us(int i)
{
	return i < STAGE_BUCKETS - 1 ? 1ULL << i : 0;
}

double stage_quantile_us(const struct stage_hist *h, double q)
{
	__u64 rank, seen = 0;
	double max_us = (double)h->max_ns / 1000;

	if (!h->count)
		return 0;
	rank = (__u64)ceil(q * (double)h->count);
	for (int i = 0; i < STAGE_BUCKETS - 1; i++) {
		seen += h->bucket[i];
		if (seen >= rank && rank)
			return fmin((double)(1ULL << i), max_us);
	}
	return max_us;
}
