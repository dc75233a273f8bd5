// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "histstore.h"
#include "sample.h"

void hist_store_fini(struct hist_store *s)
{
	free(s->ids);
	free(s->last);
	free(s->pool);
	memset(s, 0, sizeof(*s));
}

static bool same_ids(const struct hist_store *s, const struct cg_totals *buf, size_t n)
{
	if (n != s->n)
		return false;
	for (size_t i = 0; i < n; i++)
		if (s->ids[i] != buf[i].cgid)
			return false;
	return true;
}

/* Both lists are sorted: one pass carries each staying cgroup's last read to its new place. */
static void carry(const struct hist_store *s, const struct cg_totals *buf, size_t n,
		  __u32 (*last)[KQOS_HIST_SLOTS])
{
	size_t j = 0;

	for (size_t i = 0; i < n; i++) {
		while (j < s->n && s->ids[j] < buf[i].cgid)
			j++;
		if (j < s->n && s->ids[j] == buf[i].cgid)
			memcpy(last[i], s->last[j], sizeof(last[i]));
		else
			memset(last[i], 0, sizeof(last[i]));
	}
}

/*
 * Room for @n whole histograms, grown only. Their pages are touched only as far as reads fill
 * them: the memory kept is what the largest read's spans took.
 */
static int grow_pool(struct hist_store *s, size_t n)
{
	size_t cap = (n ? n : 1) * KQOS_HIST_SLOTS;
	void *p;

	if (cap <= s->pool_cap)
		return 0;
	p = realloc(s->pool, cap * sizeof(*s->pool));
	if (!p)
		return -ENOMEM;
	s->pool = p;
	s->pool_cap = cap;
	return 0;
}

int hist_store_sync(struct hist_store *s, const struct cg_totals *buf, size_t n)
{
	__u32(*last)[KQOS_HIST_SLOTS];
	__u64 *ids;

	s->pool_used = 0;
	if (same_ids(s, buf, n))
		return 0;
	if (grow_pool(s, n))
		return -ENOMEM;
	ids = malloc((n ? n : 1) * sizeof(*ids));
	last = malloc((n ? n : 1) * sizeof(*last));
	if (!ids || !last) {
		free(ids);
		free(last);
		return -ENOMEM;
	}
	carry(s, buf, n, last);
	for (size_t i = 0; i < n; i++)
		ids[i] = buf[i].cgid;
	free(s->ids);
	free(s->last);
	s->ids = ids;
	s->last = last;
	s->n = n;
	return 0;
}

/* Block @b of the @nrows rows, summed into @sum. */
static void sum_block(const __u32 *rows, int nrows, unsigned int b, __u32 *sum)
{
	memcpy(sum, &rows[b], HIST_SPAN_BLOCK * sizeof(*sum));
	for (int r = 1; r < nrows; r++)
		for (unsigned int k = 0; k < HIST_SPAN_BLOCK; k++)
			sum[k] += rows[(size_t)r * KQOS_HIST_SLOTS + b + k];
}

static bool block_moved(const __u32 *sum, const __u32 *last)
{
	__u32 any = 0;

	for (unsigned int k = 0; k < HIST_SPAN_BLOCK; k++)
		any |= sum[k] ^ last[k];
	return any;
}

const __u32 *hist_store_read_rows(struct hist_store *s, size_t i, const __u32 *rows, int nrows,
				  struct hist_span *span)
{
	unsigned int lo = KQOS_HIST_SLOTS, hi = KQOS_HIST_SLOTS;
	__u32 *last, *out, sum[HIST_SPAN_BLOCK];

	if (i >= s->n || s->pool_used + KQOS_HIST_SLOTS > s->pool_cap)
		return NULL;
	last = s->last[i];
	out = &s->pool[s->pool_used]; /* out[k] is slot lo + k */
	for (unsigned int b = 0; b < KQOS_HIST_SLOTS; b += HIST_SPAN_BLOCK) {
		sum_block(rows, nrows, b, sum);
		if (!block_moved(sum, &last[b]))
			continue;
		if (lo == KQOS_HIST_SLOTS)
			lo = b;
		else /* still blocks of the span: their increase is none */
			memset(&out[hi - lo], 0, (b - hi) * sizeof(*out));
		for (unsigned int k = 0; k < HIST_SPAN_BLOCK; k++) {
			out[b - lo + k] = sum[k] - last[b + k];
			last[b + k] = sum[k];
		}
		hi = b + HIST_SPAN_BLOCK;
	}
	s->pool_used += hi - lo;
	*span = (struct hist_span){ .lo = (__u16)lo, .hi = (__u16)hi };
	return out;
}

const __u32 *hist_store_read(struct hist_store *s, size_t i, const __u32 *now,
			     struct hist_span *span)
{
	return hist_store_read_rows(s, i, now, 1, span);
}
