// SPDX-License-Identifier: GPL-2.0
/* Plan knob -> cgroupfs file: the one table. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "knob.h"

/* The plan's value, or the original a restore writes back. */
static const struct plan_value *want(const struct knob_target *t)
{
	return t->orig ? &t->orig->v : t->v;
}

/* --- cpuset.cpus --- */

static int cpuset_read(struct cgroupfs *cg, const char *rel, struct knob_value *ret)
{
	return cgroupfs__read_cpuset(cg, CG_KNOB_CPUSET_CPUS, rel, &ret->v.cpus);
}

static int cpuset_write(struct cgroupfs *cg, const char *rel, const struct knob_target *t)
{
	return cgroupfs__write_cpuset(cg, rel, &want(t)->cpus);
}

static bool cpuset_holds(const struct knob_value *cur, const struct knob_target *t)
{
	return cpumask_equal(&cur->v.cpus, &want(t)->cpus);
}

static int cpuset_format(const struct knob_value *o, char *buf, size_t size)
{
	return cpulist_format(&o->v.cpus, buf, size) < 0 ? -ENOSPC : 0;
}

static int cpuset_parse(const char *s, struct knob_value *ret)
{
	return cpulist_parse(s, &ret->v.cpus);
}

/* --- cfs quota and period --- */

static int quota_read(struct cgroupfs *cg, const char *rel, struct knob_value *ret)
{
	struct cg_cpu_max m;
	int err = cgroupfs__read_cpu_max(cg, rel, &m);

	ret->v.quota_us = m.quota_us;
	ret->v.period_us = m.period_us;
	return err;
}

static int quota_write(struct cgroupfs *cg, const char *rel, const struct knob_target *t)
{
	const struct plan_value *v = want(t);
	struct cg_cpu_max m = {
		.quota_us = v->quota_us < 0 ? CG_QUOTA_UNLIMITED : v->quota_us,
		.period_us = v->period_us != PLAN_PERIOD_KEEP ? v->period_us : t->cur->v.period_us,
	};

	return cgroupfs__write_cpu_max(cg, rel, &m);
}

static bool quota_holds(const struct knob_value *cur, const struct knob_target *t)
{
	return plan_value_equal(PLAN_KNOB_CFS_QUOTA, want(t), &cur->v);
}

static int quota_format(const struct knob_value *o, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRId64 " %" PRIu64, o->v.quota_us, o->v.period_us);
	return 0;
}

static int quota_parse(const char *s, struct knob_value *ret)
{
	int n = 0;

	if (sscanf(s, "%" SCNd64 " %" SCNu64 "%n", &ret->v.quota_us, &ret->v.period_us, &n) != 2)
		return -EINVAL;
	return s[n] ? -EINVAL : 0;
}

/* --- cpu.shares (v2 cpu.weight) --- */

static int shares_read(struct cgroupfs *cg, const char *rel, struct knob_value *ret)
{
	return cgroupfs__read_cpu_weight(cg, rel, &ret->w);
}

static int shares_write(struct cgroupfs *cg, const char *rel, const struct knob_target *t)
{
	/* an original goes back as stored: no shares formula may round a v2 weight */
	if (t->orig)
		return cgroupfs__write_cpu_weight_raw(cg, rel, &t->orig->w);
	return cgroupfs__write_cpu_shares(cg, rel, t->v->shares, t->formula);
}

/* What the shares file will hold for @shares: shares on v1, the converted weight on v2. */
static uint64_t stored_shares(const struct cg_cpu_weight *w, uint64_t shares,
			      enum cg_weight_formula formula)
{
	uint64_t s = shares < 2 ? 2 : shares > 262144 ? 262144 : shares;

	return w->is_weight ? cg_shares_to_weight(s, formula) : s;
}

static bool shares_holds(const struct knob_value *cur, const struct knob_target *t)
{
	if (t->orig)
		return t->orig->w.value == cur->w.value;
	return stored_shares(&cur->w, t->v->shares, t->formula) == cur->w.value;
}

static int shares_format(const struct knob_value *o, char *buf, size_t size)
{
	snprintf(buf, size, "%c %" PRIu64, o->w.is_weight ? 'w' : 's', o->w.value);
	return 0;
}

static int shares_parse(const char *s, struct knob_value *ret)
{
	char kind;
	int n = 0;

	if (sscanf(s, "%c %" SCNu64 "%n", &kind, &ret->w.value, &n) != 2 ||
	    (kind != 'w' && kind != 's'))
		return -EINVAL;
	ret->w.is_weight = kind == 'w';
	return s[n] ? -EINVAL : 0;
}

/* --- cpu.idle --- */

static int idle_read(struct cgroupfs *cg, const char *rel, struct knob_value *ret)
{
	return cgroupfs__read_cpu_idle(cg, rel, &ret->v.idle);
}

static int idle_write(struct cgroupfs *cg, const char *rel, const struct knob_target *t)
{
	return cgroupfs__write_cpu_idle(cg, rel, want(t)->idle);
}

static bool idle_holds(const struct knob_value *cur, const struct knob_target *t)
{
	return cur->v.idle == want(t)->idle;
}

static int idle_format(const struct knob_value *o, char *buf, size_t size)
{
	snprintf(buf, size, "%d", o->v.idle);
	return 0;
}

static int idle_parse(const char *s, struct knob_value *ret)
{
	if (strcmp(s, "0") && strcmp(s, "1"))
		return -EINVAL;
	ret->v.idle = s[0] == '1';
	return 0;
}

/* --- memory limit --- */

static int memory_read(struct cgroupfs *cg, const char *rel, struct knob_value *ret)
{
	return cgroupfs__read_memory_max(cg, rel, &ret->v.mem_bytes);
}

static int memory_write(struct cgroupfs *cg, const char *rel, const struct knob_target *t)
{
	return cgroupfs__write_memory_max(cg, rel, want(t)->mem_bytes);
}

static bool memory_holds(const struct knob_value *cur, const struct knob_target *t)
{
	return cur->v.mem_bytes == want(t)->mem_bytes;
}

static int memory_format(const struct knob_value *o, char *buf, size_t size)
{
	if (o->v.mem_bytes == UINT64_MAX)
		snprintf(buf, size, "max");
	else
		snprintf(buf, size, "%" PRIu64, o->v.mem_bytes);
	return 0;
}

static int memory_parse(const char *s, struct knob_value *ret)
{
	int n = 0;

	if (!strcmp(s, "max")) {
		ret->v.mem_bytes = UINT64_MAX;
		return 0;
	}
	if (sscanf(s, "%" SCNu64 "%n", &ret->v.mem_bytes, &n) != 1)
		return -EINVAL;
	return s[n] ? -EINVAL : 0;
}

/* --- cfs burst --- */

static int burst_read(struct cgroupfs *cg, const char *rel, struct knob_value *ret)
{
	return cgroupfs__read_cpu_burst(cg, rel, &ret->v.burst_us);
}

static int burst_write(struct cgroupfs *cg, const char *rel, const struct knob_target *t)
{
	return cgroupfs__write_cpu_burst(cg, rel, want(t)->burst_us);
}

static bool burst_holds(const struct knob_value *cur, const struct knob_target *t)
{
	return cur->v.burst_us == want(t)->burst_us;
}

static int burst_format(const struct knob_value *o, char *buf, size_t size)
{
	snprintf(buf, size, "%" PRIu64, o->v.burst_us);
	return 0;
}

static int burst_parse(const char *s, struct knob_value *ret)
{
	int n = 0;

	if (sscanf(s, "%" SCNu64 "%n", &ret->v.burst_us, &n) != 1 || s[0] == '-')
		return -EINVAL;
	return s[n] ? -EINVAL : 0;
}

#define KNOB(k, p)                    \
	[k] = { .read = p##_read,     \
		.write = p##_write,   \
		.holds = p##_holds,   \
		.format = p##_format, \
		.parse = p##_parse }

static const struct knob_ops knobs[PLAN_KNOB_NR] = {
	KNOB(PLAN_KNOB_CPUSET, cpuset),	    KNOB(PLAN_KNOB_CFS_QUOTA, quota),
	KNOB(PLAN_KNOB_SHARES, shares),	    KNOB(PLAN_KNOB_IDLE, idle),
	KNOB(PLAN_KNOB_MEMORY_MAX, memory), KNOB(PLAN_KNOB_CFS_BURST, burst),
};

const struct knob_ops *knob_ops(enum plan_knob knob)
{
	return (unsigned int)knob < PLAN_KNOB_NR ? &knobs[knob] : NULL;
}
