// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <bpf/bpf.h>

#include "ctrslots.h"

/* The rows are mapped in steps of this many slots: few remaps while cgroups come. */
#define MAP_STEP 256

struct ctrslots {
	struct ctrslots_maps m;
	struct kqos_cg_row *rows;
	volatile __u64 *owners;
	size_t rows_len, owners_len;
	__u32 mapped; /* slots whose rows are mapped */
	/* freed slots the stack refused: pushed again before the next release, never lost */
	__u32 *pending;
	size_t npending;
	__u64 push_failures; /* since start */
};

__u32 ctrslots_auto(__u32 capacity, int ncpus)
{
	size_t fit;

	if (ncpus <= 0)
		return 0;
	fit = CTRSLOTS_AUTO_BYTES / ((size_t)ncpus * sizeof(struct kqos_cg_row));
	return fit < capacity ? (__u32)fit : capacity;
}

/* An mmapable array maps whole pages: its length rounded up to one. */
static size_t map_len(size_t bytes)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	return (bytes + page - 1) / page * page;
}

static void *map_shared(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Pushed from the last slot down, so pops hand out 0, 1, 2...: the rows in use stay dense. */
static int fill_free(const struct ctrslots_maps *m)
{
	for (__u32 i = m->nslots; i-- > 0;)
		if (bpf_map_update_elem(m->free_fd, NULL, &i, BPF_ANY))
			return -errno;
	*m->free_hint = 1;
	return 0;
}

int ctrslots__new(const struct ctrslots_maps *m, struct ctrslots **ret)
{
	struct ctrslots *s;
	int err;

	if (!m->nslots || m->ncpus <= 0)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->m = *m;
	s->owners_len = map_len(sizeof(*s->owners) * m->nslots);
	s->owners = map_shared(m->owner_fd, s->owners_len);
	if (!s->owners) {
		err = -errno;
		goto err_free;
	}
	err = fill_free(m);
	if (err)
		goto err_free;
	*ret = s;
	return 0;

err_free:
	ctrslots__free(s);
	return err;
}

void ctrslots__free(struct ctrslots *s)
{
	if (!s)
		return;
	if (s->rows)
		munmap(s->rows, s->rows_len);
	if (s->owners)
		munmap((void *)s->owners, s->owners_len);
	free(s->pending);
	free(s);
}

const volatile __u64 *ctrslots__owners(const struct ctrslots *s)
{
	return s->owners;
}

/* Map the rows of slots [0, @upto) and more, up to the next step; the old mapping goes. */
static int map_rows(struct ctrslots *s, __u32 upto)
{
	__u32 want = (upto + MAP_STEP - 1) / MAP_STEP * MAP_STEP;
	size_t len;
	void *p;

	if (want > s->m.nslots)
		want = s->m.nslots;
	len = map_len(sizeof(*s->rows) * want * (size_t)s->m.ncpus);
	p = map_shared(s->m.ctr_fd, len);
	if (!p)
		return -errno;
	if (s->rows)
		munmap(s->rows, s->rows_len);
	s->rows = p;
	s->rows_len = len;
	s->mapped = want;
	return 0;
}

const struct kqos_cg_row *ctrslots__rows(struct ctrslots *s, __u32 upto)
{
	int err;

	if (upto > s->m.nslots) {
		errno = ERANGE;
		return NULL;
	}
	if (upto > s->mapped) {
		err = map_rows(s, upto);
		if (err) {
			errno = -err;
			return NULL;
		}
	}
	return s->rows;
}

void ctrslots__hint_free(struct ctrslots *s)
{
	*s->m.free_hint = 1;
}

/*
 * Unmapped from the id first: a removed cgroup's exiting tasks still point at it and can be
 * charged on their last switches, and those must not land in the next owner's rows. Then
 * zeroed and pushed back, so the next owner starts from zero. On failure before the push the
 * owner stays set: the slot is still read, and the next reap tries again. A refused push keeps
 * the slot pending (counted), pushed again first at the next release.
 */
/* Push the slots the stack refused before; those it refuses again wait for the next try. */
int ctrslots__retry(struct ctrslots *s)
{
	size_t kept = 0;

	for (size_t i = 0; i < s->npending; i++)
		if (bpf_map_update_elem(s->m.free_fd, NULL, &s->pending[i], BPF_ANY))
			s->pending[kept++] = s->pending[i];
	if (kept < s->npending)
		ctrslots__hint_free(s);
	s->npending = kept;
	return kept ? -EAGAIN : 0;
}

/* A zeroed, unowned slot the stack refused: kept until a push succeeds. */
static int push_failed(struct ctrslots *s, __u32 slot, int err)
{
	s->push_failures++;
	if (!s->pending)
		s->pending = calloc(s->m.nslots, sizeof(*s->pending));
	if (s->pending && s->npending < s->m.nslots)
		s->pending[s->npending++] = slot;
	return err;
}

void ctrslots__push_stats(const struct ctrslots *s, __u64 *failures, __u32 *pending)
{
	*failures = s->push_failures;
	*pending = (__u32)s->npending;
}

int ctrslots__release(struct ctrslots *s, __u64 cgid)
{
	struct kqos_cg_row *rows;
	__u32 slot;

	ctrslots__retry(s);
	if (bpf_map_lookup_elem(s->m.slot_fd, &cgid, &slot))
		return -errno;
	if (slot >= s->m.nslots)
		return -ERANGE;
	rows = (struct kqos_cg_row *)ctrslots__rows(s, slot + 1);
	if (!rows)
		return -errno;
	if (bpf_map_delete_elem(s->m.slot_fd, &cgid) && errno != ENOENT)
		return -errno;
	memset(&rows[(size_t)slot * s->m.ncpus], 0, sizeof(*rows) * s->m.ncpus);
	s->owners[slot] = 0;
	if (bpf_map_update_elem(s->m.free_fd, NULL, &slot, BPF_ANY))
		return push_failed(s, slot, -errno);
	ctrslots__hint_free(s);
	return 0;
}
