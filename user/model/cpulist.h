/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_CPULIST_H
#define KQOS_MODEL_CPULIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * A fixed-size CPU bitmap and the Linux cpu-list text form ("0-3,8,10-11"; "" is the empty set),
 * as found in cpuset.cpus, /sys/devices/system/cpu/online and kubelet's cpu_manager_state.
 * Plain value type: no allocation, copy with `=`.
 */
#define CPUMASK_MAX_CPUS 1024

struct cpumask {
	uint64_t bits[CPUMASK_MAX_CPUS / 64];
};

void cpumask_zero(struct cpumask *m);
/* -EINVAL when cpu >= CPUMASK_MAX_CPUS. */
int cpumask_set(struct cpumask *m, unsigned int cpu);
void cpumask_clear(struct cpumask *m, unsigned int cpu);
/* false for cpu >= CPUMASK_MAX_CPUS. */
bool cpumask_test(const struct cpumask *m, unsigned int cpu);
unsigned int cpumask_count(const struct cpumask *m);
bool cpumask_empty(const struct cpumask *m);
bool cpumask_equal(const struct cpumask *a, const struct cpumask *b);
/* dst may alias a or b. */
void cpumask_or(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b);
void cpumask_and(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b);
/* dst = a minus b */
void cpumask_andnot(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b);
/* Lowest set CPU, or -1 when empty. */
int cpumask_first(const struct cpumask *m);
/* Highest set CPU, or -1 when empty. */
int cpumask_last(const struct cpumask *m);
/* Lowest set CPU greater than cpu, or -1. cpu may be -1 to start from 0. */
int cpumask_next(const struct cpumask *m, int cpu);

#define cpumask_for_each(cpu, m) \
	for ((cpu) = cpumask_first(m); (cpu) >= 0; (cpu) = cpumask_next(m, cpu))

/*
 * Parse a cpu-list. Accepts decimal CPUs and ascending ranges separated by commas, and one
 * trailing newline. Anything else -> -EINVAL (reversed range "3-1", empty element "1,,2",
 * sign, space, CPU >= CPUMASK_MAX_CPUS). *ret is written only on success.
 */
int cpulist_parse(const char *s, struct cpumask *ret);
/*
 * Canonical form (ascending, ranges of two or more CPUs collapsed, no newline) into buf.
 * Returns the string length, or -ENOSPC when it does not fit (buf then holds a truncated,
 * NUL-terminated prefix). The longest possible string fits in CPULIST_BUF_SIZE.
 */
#define CPULIST_BUF_SIZE 4096
int cpulist_format(const struct cpumask *m, char *buf, size_t size);

#endif
