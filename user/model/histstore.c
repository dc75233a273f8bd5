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

const __u32 *hist_store_read(struct hist_store *s, size_t i, const __u32 *now,
			     struct hist_span *span)
{
	*span = hist_delta(s->delta[i], s->last[i], now);
	return s->delta[i];
}
