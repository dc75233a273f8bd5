/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_BPF_HIST_H
#define KQOS_BPF_HIST_H

/*
 * Log-linear latency histogram shared by BPF and user space (no vmlinux.h needed, so the unit
 * tests compile it for the host).
 *
 * Values below 16 ns get a slot each. Above, every power of two [2^p, 2^(p+1)) is split into
 * 2^KQOS_HIST_SUB_BITS equal sub-buckets, so a slot is at most 1/8 = 12.5 % of its lower bound
 * wide and its midpoint is within 6.25 % of any value in it: p99 read from the histogram is
 * within the ~10 % the design asks for. 256 u32 slots = 1 KiB per cgroup per CPU; the last slot
 * (from 2^33 + 7 * 2^30 ns, about 16 s) collects everything larger.
 */
#define KQOS_HIST_SUB_BITS 3
#define KQOS_HIST_SUB	   (1 << KQOS_HIST_SUB_BITS)
#define KQOS_HIST_SLOTS	   256 /* a power of two: BPF indexes with a mask */

#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif

/* floor(log2(v)) for v > 0, branchy but loop-free so the verifier stays happy. */
static __always_inline __u32 kqos_log2_u64(__u64 v)
{
	__u32 r = 0;

	if (v >> 32) {
		v >>= 32;
		r += 32;
	}
	if (v >> 16) {
		v >>= 16;
		r += 16;
	}
	if (v >> 8) {
		v >>= 8;
		r += 8;
	}
	if (v >> 4) {
		v >>= 4;
		r += 4;
	}
	if (v >> 2) {
		v >>= 2;
		r += 2;
	}
	if (v >> 1)
		r += 1;
	return r;
}

static __always_inline __u32 kqos_hist_slot(__u64 v)
{
	__u32 p, slot;

	if (v < 2 * KQOS_HIST_SUB)
		return (__u32)v;
	p = kqos_log2_u64(v);
	slot = ((p - KQOS_HIST_SUB_BITS + 1) << KQOS_HIST_SUB_BITS) +
	       (__u32)(v >> (p - KQOS_HIST_SUB_BITS)) - KQOS_HIST_SUB;
	return slot < KQOS_HIST_SLOTS ? slot : KQOS_HIST_SLOTS - 1;
}

/* Smallest value that lands in @slot. */
static __always_inline __u64 kqos_hist_slot_lower(__u32 slot)
{
	__u32 p;

	if (slot < 2 * KQOS_HIST_SUB)
		return slot;
	p = (slot >> KQOS_HIST_SUB_BITS) + KQOS_HIST_SUB_BITS - 1;
	return (__u64)((slot & (KQOS_HIST_SUB - 1)) + KQOS_HIST_SUB) << (p - KQOS_HIST_SUB_BITS);
}

/* Width of @slot in ns (1 for the exact slots). The last slot is open-ended. */
static __always_inline __u64 kqos_hist_slot_width(__u32 slot)
{
	__u32 p;

	if (slot < 2 * KQOS_HIST_SUB)
		return 1;
	p = (slot >> KQOS_HIST_SUB_BITS) + KQOS_HIST_SUB_BITS - 1;
	return (__u64)1 << (p - KQOS_HIST_SUB_BITS);
}

#endif
