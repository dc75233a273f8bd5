// SPDX-License-Identifier: GPL-2.0
/*
 * The counter slots' bookkeeping against real BPF maps, made here as cgstat.bpf.c declares
 * them (no program: the test claims slots as the BPF side does). Needs root.
 */
#include <errno.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <criterion/criterion.h>

#include "ctrslots.h"

#define NSLOTS 4

static struct ctrslots_maps m;
static volatile __u32 hint;
static struct ctrslots *cs;

static int mmapable(size_t value, __u32 n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = BPF_F_MMAPABLE);

	return bpf_map_create(BPF_MAP_TYPE_ARRAY, NULL, 4, value, n, &o);
}

static void setup(void)
{
	m = (struct ctrslots_maps){ .nslots = NSLOTS, .ncpus = 1, .free_hint = &hint };
	m.ctr_fd = mmapable(sizeof(struct kqos_cg_row), NSLOTS);
	m.owner_fd = mmapable(sizeof(__u64), NSLOTS);
	m.slot_fd = bpf_map_create(BPF_MAP_TYPE_HASH, NULL, 8, 4, NSLOTS, NULL);
	m.free_fd = bpf_map_create(BPF_MAP_TYPE_STACK, NULL, 0, 4, NSLOTS, NULL);
	cr_assert(m.ctr_fd >= 0 && m.owner_fd >= 0 && m.slot_fd >= 0 && m.free_fd >= 0,
		  "bpf_map_create (root?): %d", -errno);
	cr_assert_eq(ctrslots__new(&m, &cs), 0);
}

static void teardown(void)
{
	ctrslots__free(cs);
	close(m.ctr_fd);
	close(m.owner_fd);
	close(m.slot_fd);
	close(m.free_fd);
}

/* What the BPF side does on a cgroup's first switch: pop a slot, map the id, own the slot. */
static __u32 claim(__u64 cgid)
{
	__u32 slot, key;

	cr_assert_eq(bpf_map_lookup_and_delete_elem(m.free_fd, NULL, &slot), 0);
	cr_assert_eq(bpf_map_update_elem(m.slot_fd, &cgid, &slot, BPF_NOEXIST), 0);
	key = slot;
	cr_assert_eq(bpf_map_update_elem(m.owner_fd, &key, &cgid, BPF_ANY), 0);
	return slot;
}

TestSuite(ctrslots, .init = setup, .fini = teardown);

/*
 * A freed slot the full stack refuses is neither lost nor handed out twice: counted, kept,
 * and pushed at the next release once there is room.
 */
Test(ctrslots, a_refused_push_back_is_counted_and_pushed_again)
{
	__u32 a = claim(100), dummy = 99, popped, npend;
	__u64 fails;

	claim(101);
	/* the stack fills up behind the claims (a foreign push): the release cannot push */
	cr_assert_eq(bpf_map_update_elem(m.free_fd, NULL, &dummy, BPF_ANY), 0);
	cr_assert_eq(bpf_map_update_elem(m.free_fd, NULL, &dummy, BPF_ANY), 0);
	cr_assert_neq(bpf_map_update_elem(m.free_fd, NULL, &dummy, BPF_ANY), 0, "full");
	cr_expect_lt(ctrslots__release(cs, 100), 0);
	ctrslots__push_stats(cs, &fails, &npend);
	cr_expect_eq(fails, 1);
	cr_expect_eq(npend, 1);
	cr_expect_eq(ctrslots__owners(cs)[a], 0, "no owner while it waits");
	cr_expect_eq(ctrslots__retry(cs), -EAGAIN, "still no room");
	/* room again: the next release pushes the waiting slot first, then its own */
	cr_assert_eq(bpf_map_lookup_and_delete_elem(m.free_fd, NULL, &popped), 0);
	cr_assert_eq(bpf_map_lookup_and_delete_elem(m.free_fd, NULL, &popped), 0);
	cr_expect_eq(ctrslots__release(cs, 101), 0);
	ctrslots__push_stats(cs, &fails, &npend);
	cr_expect_eq(fails, 1, "since start");
	cr_expect_eq(npend, 0);
	cr_expect_eq(hint, 1, "BPF told a slot is free");
	/* both slots are on the stack, each once */
	{
		__u32 got[NSLOTS], n = 0;
		bool seen_a = false;

		while (n < NSLOTS && !bpf_map_lookup_and_delete_elem(m.free_fd, NULL, &got[n]))
			n++;
		for (__u32 i = 0; i < n; i++)
			seen_a |= got[i] == a;
		cr_expect_eq(n, 4, "the two never claimed and the two freed");
		cr_expect(seen_a, "the refused slot came back");
		for (__u32 i = 0; i < n; i++)
			for (__u32 j = i + 1; j < n; j++)
				cr_expect_neq(got[i], got[j], "slot %u twice", got[i]);
	}
}
