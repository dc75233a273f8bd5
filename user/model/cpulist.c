// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cpulist.h"

#define NR_WORDS (CPUMASK_MAX_CPUS / 64)

void cpumask_zero(struct cpumask *m)
{
	memset(m, 0, sizeof(*m));
}

int cpumask_set(struct cpumask *m, unsigned int cpu)
{
	if (cpu >= CPUMASK_MAX_CPUS)
		return -EINVAL;
	m->bits[cpu / 64] |= 1ULL << (cpu % 64);
	return 0;
}

void cpumask_clear(struct cpumask *m, unsigned int cpu)
{
	if (cpu < CPUMASK_MAX_CPUS)
		m->bits[cpu / 64] &= ~(1ULL << (cpu % 64));
}

bool cpumask_test(const struct cpumask *m, unsigned int cpu)
{
	if (cpu >= CPUMASK_MAX_CPUS)
		return false;
	return m->bits[cpu / 64] & (1ULL << (cpu % 64));
}

unsigned int cpumask_count(const struct cpumask *m)
{
	unsigned int n = 0;

	for (int i = 0; i < NR_WORDS; i++)
		n += __builtin_popcountll(m->bits[i]);
	return n;
}

bool cpumask_empty(const struct cpumask *m)
{
	for (int i = 0; i < NR_WORDS; i++)
		if (m->bits[i])
			return false;
	return true;
}

bool cpumask_equal(const struct cpumask *a, const struct cpumask *b)
{
	return memcmp(a->bits, b->bits, sizeof(a->bits)) == 0;
}

void cpumask_or(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < NR_WORDS; i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

void cpumask_and(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < NR_WORDS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

void cpumask_andnot(struct cpumask *dst, const struct cpumask *a, const struct cpumask *b)
{
	for (int i = 0; i < NR_WORDS; i++)
		dst->bits[i] = a->bits[i] & ~b->bits[i];
}

int cpumask_next(const struct cpumask *m, int cpu)
{
	unsigned int start = cpu < 0 ? 0 : (unsigned int)cpu + 1;

	for (unsigned int w = start / 64; w < NR_WORDS; w++) {
		uint64_t word = m->bits[w];

		if (w == start / 64)
			word &= ~0ULL << (start % 64);
		if (word)
			return (int)(w * 64 + __builtin_ctzll(word));
	}
	return -1;
}

int cpumask_first(const struct cpumask *m)
{
	return cpumask_next(m, -1);
}

int cpumask_last(const struct cpumask *m)
{
	for (int w = CPUMASK_MAX_CPUS / 64 - 1; w >= 0; w--)
		if (m->bits[w])
			return w * 64 + 63 - __builtin_clzll(m->bits[w]);
	return -1;
}

/* One decimal CPU number; leading zeros are accepted as the kernel's parser does. */
static int parse_cpu(const char **p, unsigned int *ret)
{
	const char *s = *p;
	unsigned int v = 0;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (unsigned int)(*s - '0');
		if (v >= CPUMASK_MAX_CPUS)
			return -EINVAL;
	}
	*p = s;
	*ret = v;
	return 0;
}

int cpulist_parse(const char *s, struct cpumask *ret)
{
	struct cpumask m;
	const char *p = s;
	unsigned int lo, hi;
	int err;

	if (!s)
		return -EINVAL;
	cpumask_zero(&m);
	if (*p == '\0' || strcmp(p, "\n") == 0)
		goto out;
	for (;;) {
		err = parse_cpu(&p, &lo);
		if (err)
			return err;
		hi = lo;
		if (*p == '-') {
			p++;
			err = parse_cpu(&p, &hi);
			if (err)
				return err;
			if (hi < lo)
				return -EINVAL;
		}
		for (unsigned int c = lo; c <= hi; c++)
			cpumask_set(&m, c);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		if (*p != '\0')
			return -EINVAL;
		break;
	}
out:
	*ret = m;
	return 0;
}

int cpulist_format(const struct cpumask *m, char *buf, size_t size)
{
	size_t len = 0;
	int cpu, end, n;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	for (cpu = cpumask_first(m); cpu >= 0; cpu = cpumask_next(m, end)) {
		end = cpu;
		while (cpumask_test(m, (unsigned int)end + 1))
			end++;
		if (end == cpu)
			n = snprintf(buf + len, size - len, "%s%d", len ? "," : "", cpu);
		else
			n = snprintf(buf + len, size - len, "%s%d-%d", len ? "," : "", cpu, end);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}
