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
	free(s->delta);
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

/* Room for @n deltas, grown only: their contents mean nothing until a read writes them. */
static int grow_deltas(struct hist_store *s, size_t n)
{
	void *p;

	if (n <= s->cap)
		return 0;
	p = realloc(s->delta, n * sizeof(*s->delta));
	if (!p)
		return -ENOMEM;
	s->delta = p;
	s->cap = n;
	return 0;
}

int hist_store_sync(struct hist_store *s, const struct cg_totals *buf, size_t n)
{
	__u32(*last)[KQOS_HIST_SLOTS];
	__u64 *ids;

	if (same_ids(s, buf, n))
		return 0;
	if (grow_deltas(s, n))
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
	__u32 *last = s->last[i], *delta = s->delta[i], sum[HIST_SPAN_BLOCK];
	unsigned int lo = KQOS_HIST_SLOTS, hi = KQOS_HIST_SLOTS;

	for (unsigned int b = 0; b < KQOS_HIST_SLOTS; b += HIST_SPAN_BLOCK) {
		sum_block(rows, nrows, b, sum);
		if (!block_moved(sum, &last[b]))
			continue;
		if (lo == KQOS_HIST_SLOTS)
			lo = b;
		else /* still blocks of the span: their increase is none */
			memset(&delta[hi], 0, (b - hi) * sizeof(*delta));
		for (unsigned int k = 0; k < HIST_SPAN_BLOCK; k++) {
			delta[b + k] = sum[k] - last[b + k];
			last[b + k] = sum[k];
		}
		hi = b + HIST_SPAN_BLOCK;
	}
	*span = (struct hist_span){ .lo = (__u16)lo, .hi = (__u16)hi };
	return delta;
}

const __u32 *hist_store_read(struct hist_store *s, size_t i, const __u32 *now,
			     struct hist_span *span)
{
	return hist_store_read_rows(s, i, now, 1, span);
}
