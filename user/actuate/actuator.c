// SPDX-License-Identifier: GPL-2.0
/* Plan -> cgroup files: diff, leveled ordering, journal of originals, restore, counters. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "actuator.h"
#include "log.h"

#define JOURNAL_NAME   "journal"
#define JOURNAL_HEADER "# kqos journal v1: knob<TAB>cgroup<TAB>original value\n"
#define RESTORE_WHO    "restore"

/* A knob's value as read from the files; shares keep the raw stored unit (v2 weight). */
struct cur_value {
	struct plan_value v;
	struct cg_cpu_weight w;
};

struct jent {
	char cgroup[PLAN_CGROUP_MAX];
	enum plan_knob knob;
	struct cur_value orig;
};

/* One knob to change in this pass. */
struct item {
	const char *cgroup;
	enum plan_knob knob;
	const char *strategy;
	const char *why;
	struct plan_value want; /* plan items */
	const struct cur_value *orig; /* restore items: write this raw value back */
	struct cur_value cur;
	unsigned int depth;
	int result; /* 1 written, 0 equal, -errno */
};

/*
 * A failure or dry-run line that repeats tick after tick says nothing new: it is logged at
 * info/warn when it first appears (not said in the previous pass) and at debug afterwards.
 */
#define LOG_MEMORY 256

struct actuator {
	struct cgroupfs *cg;
	char dir[PATH_MAX];
	char path[PATH_MAX];
	bool dry_run;
	enum cg_weight_formula formula;
	struct jent *j;
	size_t nj, capj;
	struct snap_action_count counts[SNAP_ACTION_KINDS];
	size_t nr_counts;
	uint64_t write_errors;
	struct snap_action recent[SNAP_RECENT]; /* ring */
	size_t recent_head, nr_recent;
	uint64_t now_ns;
	/* what was logged last pass and this pass: a repeat goes to debug, not the log */
	uint64_t said_prev[LOG_MEMORY], said_cur[LOG_MEMORY];
	size_t n_said_prev, n_said_cur;
};

/* --- counters ---------------------------------------------------------------------------- */

static void count(struct actuator *a, const char *strategy, const char *knob, const char *result)
{
	struct snap_action_count *c;

	for (size_t i = 0; i < a->nr_counts; i++) {
		c = &a->counts[i];
		if (!strcmp(c->strategy, strategy) && !strcmp(c->knob, knob) &&
		    !strcmp(c->result, result)) {
			c->count++;
			return;
		}
	}
	if (a->nr_counts == SNAP_ACTION_KINDS)
		return;
	c = &a->counts[a->nr_counts++];
	snprintf(c->strategy, sizeof(c->strategy), "%s", strategy);
	snprintf(c->knob, sizeof(c->knob), "%s", knob);
	snprintf(c->result, sizeof(c->result), "%s", result);
	c->count = 1;
}

uint64_t actuator__count(const struct actuator *a, const char *strategy, const char *knob,
			 const char *result)
{
	for (size_t i = 0; i < a->nr_counts; i++)
		if (!strcmp(a->counts[i].strategy, strategy) && !strcmp(a->counts[i].knob, knob) &&
		    !strcmp(a->counts[i].result, result))
			return a->counts[i].count;
	return 0;
}

static const char *result_name(int err, bool dry_run)
{
	if (dry_run)
		return "dry_run";
	if (err >= 0)
		return "ok";
	return err == -ENOENT || err == -ENODEV ? "vanished" : "error";
}

static void record(struct actuator *a, const struct item *it, const char *value, const char *res)
{
	struct snap_action *r = &a->recent[a->recent_head];

	a->recent_head = (a->recent_head + 1) % SNAP_RECENT;
	if (a->nr_recent < SNAP_RECENT)
		a->nr_recent++;
	memset(r, 0, sizeof(*r));
	r->wall_ns = a->now_ns;
	snprintf(r->strategy, sizeof(r->strategy), "%s", it->strategy);
	snprintf(r->cgroup, sizeof(r->cgroup), "%s", it->cgroup);
	snprintf(r->knob, sizeof(r->knob), "%s", plan_knob_name(it->knob));
	snprintf(r->value, sizeof(r->value), "%s", value);
	snprintf(r->result, sizeof(r->result), "%s", res);
	snprintf(r->why, sizeof(r->why), "%s", it->why);
}

void actuator__fill(const struct actuator *a, struct snap_enforce *ret)
{
	ret->nr_counts = a->nr_counts;
	memcpy(ret->counts, a->counts, a->nr_counts * sizeof(a->counts[0]));
	ret->write_errors = a->write_errors;
	ret->nr_recent = a->nr_recent;
	/* newest first */
	for (size_t i = 0; i < a->nr_recent; i++)
		ret->recent[i] = a->recent[(a->recent_head + SNAP_RECENT - 1 - i) % SNAP_RECENT];
}

/* --- reading and writing one knob --------------------------------------------------------- */

static int read_cur(struct actuator *a, const char *cg, enum plan_knob knob, struct cur_value *c)
{
	struct cg_cpu_max m;
	int err;

	memset(c, 0, sizeof(*c));
	switch (knob) {
	case PLAN_KNOB_CPUSET:
		return cgroupfs__read_cpuset(a->cg, CG_KNOB_CPUSET_CPUS, cg, &c->v.cpus);
	case PLAN_KNOB_CFS_QUOTA:
		err = cgroupfs__read_cpu_max(a->cg, cg, &m);
		c->v.quota_us = m.quota_us;
		c->v.period_us = m.period_us;
		return err;
	case PLAN_KNOB_SHARES:
		return cgroupfs__read_cpu_weight(a->cg, cg, &c->w);
	case PLAN_KNOB_IDLE:
		return cgroupfs__read_cpu_idle(a->cg, cg, &c->v.idle);
	case PLAN_KNOB_MEMORY_MAX:
		return cgroupfs__read_memory_max(a->cg, cg, &c->v.mem_bytes);
	default:
		return -EINVAL;
	}
}

/* What the shares file will hold for @shares: shares on v1, the converted weight on v2. */
static uint64_t stored_shares(const struct actuator *a, const struct cg_cpu_weight *w,
			      uint64_t shares)
{
	uint64_t s = shares < 2 ? 2 : shares > 262144 ? 262144 : shares;

	return w->is_weight ? cg_shares_to_weight(s, a->formula) : s;
}

static bool item_equal(const struct actuator *a, const struct item *it,
		       const struct plan_value *want)
{
	if (it->orig) {
		if (it->knob == PLAN_KNOB_SHARES)
			return it->orig->w.value == it->cur.w.value;
		return plan_value_equal(it->knob, &it->orig->v, &it->cur.v);
	}
	if (it->knob == PLAN_KNOB_SHARES)
		return stored_shares(a, &it->cur.w, want->shares) == it->cur.w.value;
	return plan_value_equal(it->knob, want, &it->cur.v);
}

/* v2 weight restored as stored: no shares formula may round it. */
static int write_raw_weight(struct actuator *a, const char *cg, uint64_t weight)
{
	char path[PATH_MAX], buf[32];
	int fd, err, len;

	err = cgroupfs__knob_path(a->cg, CG_KNOB_CPU_SHARES, cg, path, sizeof(path));
	if (err)
		return err;
	len = snprintf(buf, sizeof(buf), "%" PRIu64, weight);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = write(fd, buf, (size_t)len) == len ? 1 : -errno;
	close(fd);
	return err;
}

static int write_value(struct actuator *a, const struct item *it, const struct plan_value *v)
{
	struct cg_cpu_max m;

	switch (it->knob) {
	case PLAN_KNOB_CPUSET:
		return cgroupfs__write_cpuset(a->cg, it->cgroup, &v->cpus);
	case PLAN_KNOB_CFS_QUOTA:
		m.quota_us = v->quota_us < 0 ? CG_QUOTA_UNLIMITED : v->quota_us;
		m.period_us = v->period_us != PLAN_PERIOD_KEEP ? v->period_us : it->cur.v.period_us;
		return cgroupfs__write_cpu_max(a->cg, it->cgroup, &m);
	case PLAN_KNOB_SHARES:
		if (it->orig && it->orig->w.is_weight)
			return write_raw_weight(a, it->cgroup, it->orig->w.value);
		return cgroupfs__write_cpu_shares(
			a->cg, it->cgroup, it->orig ? it->orig->w.value : v->shares, a->formula);
	case PLAN_KNOB_IDLE:
		return cgroupfs__write_cpu_idle(a->cg, it->cgroup, v->idle);
	case PLAN_KNOB_MEMORY_MAX:
		return cgroupfs__write_memory_max(a->cg, it->cgroup, v->mem_bytes);
	default:
		return -EINVAL;
	}
}

static void update_cur(struct item *it, const struct plan_value *v)
{
	uint64_t period = it->cur.v.period_us;

	if (it->knob == PLAN_KNOB_SHARES)
		return; /* only written in the final phase */
	it->cur.v = *v;
	if (it->knob == PLAN_KNOB_CFS_QUOTA && v->period_us == PLAN_PERIOD_KEEP)
		it->cur.v.period_us = period;
}

static const struct plan_value *target(const struct item *it)
{
	return it->orig ? &it->orig->v : &it->want;
}

/* --- journal ------------------------------------------------------------------------------ */

static struct jent *jfind(struct actuator *a, const char *cg, enum plan_knob knob)
{
	for (size_t i = 0; i < a->nj; i++)
		if (a->j[i].knob == knob && !strcmp(a->j[i].cgroup, cg))
			return &a->j[i];
	return NULL;
}

static int jadd(struct actuator *a, const char *cg, enum plan_knob knob,
		const struct cur_value *orig)
{
	struct jent *e;

	if (a->nj == a->capj) {
		size_t cap = a->capj ? a->capj * 2 : 32;
		void *n = realloc(a->j, cap * sizeof(*a->j));

		if (!n)
			return -ENOMEM;
		a->j = n;
		a->capj = cap;
	}
	e = &a->j[a->nj++];
	memset(e, 0, sizeof(*e));
	snprintf(e->cgroup, sizeof(e->cgroup), "%s", cg);
	e->knob = knob;
	e->orig = *orig;
	return 0;
}

static void jdel(struct actuator *a, size_t i)
{
	a->j[i] = a->j[--a->nj];
}

static int format_orig(const struct jent *e, char *buf, size_t size)
{
	const struct cur_value *o = &e->orig;

	switch (e->knob) {
	case PLAN_KNOB_CPUSET:
		return cpulist_format(&o->v.cpus, buf, size) < 0 ? -ENOSPC : 0;
	case PLAN_KNOB_CFS_QUOTA:
		snprintf(buf, size, "%" PRId64 " %" PRIu64, o->v.quota_us, o->v.period_us);
		return 0;
	case PLAN_KNOB_SHARES:
		snprintf(buf, size, "%c %" PRIu64, o->w.is_weight ? 'w' : 's', o->w.value);
		return 0;
	case PLAN_KNOB_IDLE:
		snprintf(buf, size, "%d", o->v.idle);
		return 0;
	case PLAN_KNOB_MEMORY_MAX:
		if (o->v.mem_bytes == UINT64_MAX)
			snprintf(buf, size, "max");
		else
			snprintf(buf, size, "%" PRIu64, o->v.mem_bytes);
		return 0;
	default:
		return -EINVAL;
	}
}

static int parse_orig(enum plan_knob knob, const char *s, struct cur_value *o)
{
	char kind;
	int n = 0;

	memset(o, 0, sizeof(*o));
	switch (knob) {
	case PLAN_KNOB_CPUSET:
		return cpulist_parse(s, &o->v.cpus);
	case PLAN_KNOB_CFS_QUOTA:
		if (sscanf(s, "%" SCNd64 " %" SCNu64 "%n", &o->v.quota_us, &o->v.period_us, &n) !=
		    2)
			return -EINVAL;
		break;
	case PLAN_KNOB_SHARES:
		if (sscanf(s, "%c %" SCNu64 "%n", &kind, &o->w.value, &n) != 2 ||
		    (kind != 'w' && kind != 's'))
			return -EINVAL;
		o->w.is_weight = kind == 'w';
		break;
	case PLAN_KNOB_IDLE:
		if (strcmp(s, "0") && strcmp(s, "1"))
			return -EINVAL;
		o->v.idle = s[0] == '1';
		return 0;
	case PLAN_KNOB_MEMORY_MAX:
		if (!strcmp(s, "max")) {
			o->v.mem_bytes = UINT64_MAX;
			return 0;
		}
		if (sscanf(s, "%" SCNu64 "%n", &o->v.mem_bytes, &n) != 1)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	return s[n] ? -EINVAL : 0;
}

static int fsync_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd))
		err = -errno;
	close(fd);
	return err;
}

static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += n;
		len -= (size_t)n;
	}
	return 0;
}

static int journal_lines(const struct actuator *a, int fd)
{
	char line[PLAN_CGROUP_MAX + CPULIST_BUF_SIZE + 32], val[CPULIST_BUF_SIZE];
	int err = write_all(fd, JOURNAL_HEADER, strlen(JOURNAL_HEADER));

	for (size_t i = 0; i < a->nj && !err; i++) {
		err = format_orig(&a->j[i], val, sizeof(val));
		if (err)
			break;
		snprintf(line, sizeof(line), "%s\t%s\t%s\n", plan_knob_name(a->j[i].knob),
			 a->j[i].cgroup, val);
		err = write_all(fd, line, strlen(line));
	}
	return err;
}

/* Crash-safe: the old journal or the new one is on disk, never a torn file. */
static int journal_save(struct actuator *a)
{
	char tmp[PATH_MAX + 8];
	int fd, err;

	if (!a->nj) {
		if (unlink(a->path) && errno != ENOENT)
			return -errno;
		return fsync_dir(a->dir);
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", a->path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0) {
		err = -errno;
		log_err("journal write failed", "path=%s err=%d", tmp, err);
		return err;
	}
	err = journal_lines(a, fd);
	if (!err && fsync(fd))
		err = -errno;
	close(fd);
	if (!err && rename(tmp, a->path))
		err = -errno;
	if (!err)
		err = fsync_dir(a->dir);
	if (err) {
		log_err("journal write failed", "path=%s err=%d", a->path, err);
		unlink(tmp);
	}
	return err;
}

static int journal_parse_line(struct actuator *a, char *line, unsigned int lineno)
{
	char *knob = line, *cg, *val;
	struct cur_value o;
	enum plan_knob k;

	line[strcspn(line, "\n")] = '\0';
	if (!line[0] || line[0] == '#')
		return 0;
	cg = strchr(knob, '\t');
	val = cg ? strchr(cg + 1, '\t') : NULL;
	if (!val)
		goto bad;
	*cg++ = '\0';
	*val++ = '\0';
	if (plan_knob_parse(knob, &k) || !cgpath_is_safe(cg) || strlen(cg) >= PLAN_CGROUP_MAX ||
	    parse_orig(k, val, &o))
		goto bad;
	if (jfind(a, cg, k))
		return 0;
	return jadd(a, cg, k, &o);
bad:
	/* a bad line cannot be restored; the others still can */
	log_err("journal line malformed, skipped", "path=%s line=%u", a->path, lineno);
	return 0;
}

static int journal_load(struct actuator *a)
{
	char line[PLAN_CGROUP_MAX + CPULIST_BUF_SIZE + 32];
	unsigned int lineno = 0;
	FILE *f = fopen(a->path, "re");
	int err = 0;

	if (!f)
		return errno == ENOENT ? 0 : -errno;
	while (!err && fgets(line, sizeof(line), f))
		err = journal_parse_line(a, line, ++lineno);
	fclose(f);
	return err;
}

/* --- the ordered pass ---------------------------------------------------------------------- */

static const struct plan_value *target(const struct item *it);

/*
 * Within one cgroup, phase 2 (which walks this order backwards) must leave cpu.idle before
 * it writes cpu.shares and enter it after: the kernel refuses shares on an idle group.
 */
static int knob_rank(const struct item *it)
{
	if (it->knob == PLAN_KNOB_IDLE)
		return target(it)->idle ? 0 : 3;
	return it->knob == PLAN_KNOB_SHARES ? 2 : 1;
}

/* Parents before children (phase 1 walks forwards, phase 2 backwards). */
static int cmp_items(const void *x, const void *y)
{
	const struct item *a = x, *b = y;
	int c;

	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	c = strcmp(a->cgroup, b->cgroup);
	if (c)
		return c;
	return knob_rank(a) - knob_rank(b);
}

static bool leveled(enum plan_knob knob)
{
	return knob == PLAN_KNOB_CPUSET || knob == PLAN_KNOB_CFS_QUOTA;
}

/* The looser of current and target: what a parent may hold while its children change. */
static bool looser(const struct item *it, struct plan_value *ret)
{
	const struct plan_value *t = target(it);

	*ret = it->cur.v;
	if (it->knob == PLAN_KNOB_CPUSET) {
		cpumask_or(&ret->cpus, &it->cur.v.cpus, &t->cpus);
		return !cpumask_equal(&ret->cpus, &it->cur.v.cpus);
	}
	if (it->cur.v.quota_us < 0)
		return false; /* unlimited is the loosest */
	if (t->quota_us < 0 || t->quota_us > it->cur.v.quota_us) {
		ret->quota_us = t->quota_us < 0 ? -1 : t->quota_us;
		return true;
	}
	return false;
}

static uint64_t said_key(const char *cgroup, int knob, const char *value, int err)
{
	uint64_t h = 1469598103934665603ULL;

	for (const char *p = cgroup; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (const char *p = value; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h ^ ((uint64_t)knob << 48) ^ (uint64_t)(uint32_t)err;
}

/* True when the same line was said in the previous pass; remembers it for the next. */
static bool said_before(struct actuator *a, uint64_t key)
{
	bool seen = false;

	for (size_t i = 0; i < a->n_said_prev && !seen; i++)
		seen = a->said_prev[i] == key;
	if (a->n_said_cur < LOG_MEMORY)
		a->said_cur[a->n_said_cur++] = key;
	return seen;
}

static void said_next_pass(struct actuator *a)
{
	memcpy(a->said_prev, a->said_cur, a->n_said_cur * sizeof(a->said_cur[0]));
	a->n_said_prev = a->n_said_cur;
	a->n_said_cur = 0;
}

static void log_failure(struct actuator *a, const struct item *it, const char *value, int err)
{
	enum log_level lvl = err == -ENOENT || err == -ENODEV ? LOG_INFO : LOG_WARN;

	if (said_before(a, said_key(it->cgroup, it->knob, value, err)))
		lvl = LOG_DEBUG;
	log_msg(lvl, "cgroup write failed",
		"strategy=%s cgroup=%s knob=%s value=\"%s\" path=%s err=%d", it->strategy,
		it->cgroup, plan_knob_name(it->knob), value, cgroupfs__last_path(a->cg), err);
}

/* Phase 1, top-down: parents widen first. Failures here are retried by phase 2. */
static void phase_loosen(struct actuator *a, struct item *items, size_t n)
{
	struct plan_value v;

	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];

		if (it->result < 0 || !leveled(it->knob) || !looser(it, &v))
			continue;
		if (write_value(a, it, &v) >= 0)
			update_cur(it, &v);
	}
}

static void final_write(struct actuator *a, struct item *it)
{
	const struct plan_value *t = target(it);
	char value[CPULIST_BUF_SIZE];
	const char *res;

	if (it->orig)
		format_orig(&(struct jent){ .knob = it->knob, .orig = *it->orig }, value,
			    sizeof(value));
	else
		plan_value_format(it->knob, t, value, sizeof(value));
	if (item_equal(a, it, t)) {
		it->result = 1; /* phase 1 already reached the target */
		res = "ok";
	} else {
		it->result = write_value(a, it, t);
		res = result_name(it->result, false);
	}
	if (it->result < 0) {
		a->write_errors++;
		log_failure(a, it, value, it->result);
	} else {
		log_dbg("cgroup written", "strategy=%s cgroup=%s knob=%s value=\"%s\" why=\"%s\"",
			it->strategy, it->cgroup, plan_knob_name(it->knob), value, it->why);
	}
	count(a, it->strategy, plan_knob_name(it->knob), res);
	record(a, it, value, res);
}

/* Phase 2, bottom-up: children narrow first, then parents take their exact value. */
static void phase_exact(struct actuator *a, struct item *items, size_t n)
{
	for (size_t i = n; i-- > 0;)
		if (items[i].result >= 0)
			final_write(a, &items[i]);
}

static void dry_log(struct actuator *a, struct item *items, size_t n)
{
	char value[CPULIST_BUF_SIZE];

	for (size_t i = 0; i < n; i++) {
		struct item *it = &items[i];

		if (it->result < 0)
			continue;
		if (it->orig)
			format_orig(&(struct jent){ .knob = it->knob, .orig = *it->orig }, value,
				    sizeof(value));
		else
			plan_value_format(it->knob, &it->want, value, sizeof(value));
		log_msg(said_before(a, said_key(it->cgroup, it->knob, value, 0)) ? LOG_DEBUG :
										   LOG_INFO,
			"dry-run: would write",
			"strategy=%s cgroup=%s knob=%s value=\"%s\" why=\"%s\"", it->strategy,
			it->cgroup, plan_knob_name(it->knob), value, it->why);
		count(a, it->strategy, plan_knob_name(it->knob), "dry_run");
		record(a, it, value, "dry_run");
	}
}

/* Read the current value; 1 when the item needs a write, 0 when not, <0 counted failure. */
static int prepare(struct actuator *a, struct item *it)
{
	char value[64] = "";
	int err;

	it->depth = plan_cgroup_depth(it->cgroup);
	err = read_cur(a, it->cgroup, it->knob, &it->cur);
	if (err) {
		/* a journaled cgroup that is gone has nothing left to restore */
		if (it->orig && (err == -ENOENT || err == -ENODEV))
			return 0;
		it->result = err;
		a->write_errors++;
		log_failure(a, it, value, err);
		count(a, it->strategy, plan_knob_name(it->knob), result_name(err, false));
		record(a, it, value, result_name(err, false));
		return err;
	}
	return item_equal(a, it, target(it)) ? 0 : 1;
}

/* An idle group has no shares: the kernel reads 3 and refuses writes until idle is 0 again. */
static bool shares_moot(const struct plan *plan, const struct plan_entry *e)
{
	const struct plan_entry *idle;

	if (e->knob != PLAN_KNOB_SHARES)
		return false;
	idle = plan_find(plan, e->cgroup, PLAN_KNOB_IDLE);
	return idle && idle->v.idle;
}

static int collect(struct actuator *a, const struct plan *plan, struct item **ret, size_t *nr)
{
	size_t cap = (plan ? plan->nr : 0) + a->nj, n = 0;
	struct item *items = calloc(cap ? cap : 1, sizeof(*items));

	if (!items)
		return -ENOMEM;
	for (size_t i = 0; plan && i < plan->nr; i++) {
		const struct plan_entry *e = &plan->entries[i];

		if (shares_moot(plan, e)) {
			count(a, e->strategy, plan_knob_name(e->knob), "skipped");
			continue;
		}
		items[n] = (struct item){ .cgroup = e->cgroup,
					  .knob = e->knob,
					  .strategy = e->strategy,
					  .why = e->why,
					  .want = e->v };
		if (prepare(a, &items[n]) > 0)
			n++;
	}
	/* journaled knobs no plan entry owns any more go back to their originals */
	for (size_t i = 0; i < a->nj; i++) {
		const struct jent *j = &a->j[i];

		if (plan && plan_find(plan, j->cgroup, j->knob))
			continue;
		items[n] = (struct item){ .cgroup = j->cgroup,
					  .knob = j->knob,
					  .strategy = RESTORE_WHO,
					  .why = "not planned: original",
					  .orig = &j->orig };
		if (prepare(a, &items[n]) > 0)
			n++;
	}
	*ret = items;
	*nr = n;
	return 0;
}

/* Journal what is about to change for the first time; persisted before any write. */
static int journal_items(struct actuator *a, const struct item *items, size_t n)
{
	bool added = false;
	int err;

	for (size_t i = 0; i < n; i++) {
		if (items[i].orig || jfind(a, items[i].cgroup, items[i].knob))
			continue;
		err = jadd(a, items[i].cgroup, items[i].knob, &items[i].cur);
		if (err)
			return err;
		added = true;
	}
	return added ? journal_save(a) : 0;
}

/* Drop journal entries that are back at their original, or whose cgroup is gone. */
static int journal_prune(struct actuator *a, const struct plan *plan)
{
	bool removed = false;
	struct cur_value c;

	for (size_t i = a->nj; i-- > 0;) {
		struct jent *j = &a->j[i];
		int err;

		if (plan && plan_find(plan, j->cgroup, j->knob))
			continue;
		err = read_cur(a, j->cgroup, j->knob, &c);
		if (!err &&
		    (j->knob == PLAN_KNOB_SHARES ? c.w.value == j->orig.w.value :
						   plan_value_equal(j->knob, &c.v, &j->orig.v)))
			err = -ENOENT;
		if (err == -ENOENT || err == -ENODEV) {
			jdel(a, i);
			removed = true;
		}
	}
	return removed ? journal_save(a) : 0;
}

/*
 * Restore items point into a->j: room for every possible new entry is made before they are
 * built, so that journal_items() never moves the array under them.
 */
static int run_pass(struct actuator *a, const struct plan *plan)
{
	struct item *items;
	size_t n;
	int err;

	if (plan && a->capj < a->nj + plan->nr) {
		void *p = realloc(a->j, (a->nj + plan->nr) * sizeof(*a->j));

		if (!p)
			return -ENOMEM;
		a->j = p;
		a->capj = a->nj + plan->nr;
	}
	err = collect(a, plan, &items, &n);
	if (err)
		return err;
	if (a->dry_run) {
		dry_log(a, items, n);
		free(items);
		return 0;
	}
	err = journal_items(a, items, n);
	if (!err) {
		qsort(items, n, sizeof(*items), cmp_items);
		phase_loosen(a, items, n);
		phase_exact(a, items, n);
		err = journal_prune(a, plan);
	}
	free(items);
	return err;
}

int actuator__apply(struct actuator *a, const struct plan *plan, uint64_t wall_ns)
{
	a->now_ns = wall_ns;
	said_next_pass(a);
	return run_pass(a, plan);
}

int actuator__restore(struct actuator *a)
{
	struct plan empty;
	bool dry = a->dry_run;
	int err;

	if (!a->nj)
		return 0;
	plan_init(&empty);
	a->dry_run = false; /* a dry run journals nothing; whatever is journaled is real */
	err = run_pass(a, &empty);
	a->dry_run = dry;
	if (!err && a->nj) {
		log_warn("journal entries could not be restored; kept for the next start",
			 "path=%s entries=%zu", a->path, a->nj);
		err = -EIO;
	}
	return err;
}

size_t actuator__nr_journal(const struct actuator *a)
{
	return a->nj;
}

void actuator__set_dry_run(struct actuator *a, bool dry_run)
{
	a->dry_run = dry_run;
}

void actuator__set_formula(struct actuator *a, enum cg_weight_formula formula)
{
	a->formula = formula;
}

int actuator__new(struct cgroupfs *cg, const struct actuator_opts *opts, struct actuator **ret)
{
	struct actuator *a;
	int err;

	a = calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	a->cg = cg;
	a->dry_run = opts->dry_run;
	a->formula = opts->formula;
	if (snprintf(a->dir, sizeof(a->dir), "%s", opts->state_dir) >= (int)sizeof(a->dir) ||
	    snprintf(a->path, sizeof(a->path), "%s/%s", opts->state_dir, JOURNAL_NAME) >=
		    (int)sizeof(a->path)) {
		err = -ENAMETOOLONG;
		goto err;
	}
	if (mkdir(a->dir, 0700) && errno != EEXIST) {
		err = -errno;
		log_err("cannot create state dir", "path=%s err=%d", a->dir, err);
		goto err;
	}
	err = journal_load(a);
	if (err) {
		log_err("cannot read journal", "path=%s err=%d", a->path, err);
		goto err;
	}
	*ret = a;
	return 0;
err:
	actuator__free(a);
	return err;
}

void actuator__free(struct actuator *a)
{
	if (!a)
		return;
	free(a->j);
	free(a);
}
