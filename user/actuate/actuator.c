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
#include "journal.h"
#include "knob.h"
#include "log.h"

#define RESTORE_WHO "restore"

/* One knob to change in this pass. */
struct item {
	const char *cgroup;
	enum plan_knob knob;
	const char *strategy;
	const char *why;
	struct plan_value want; /* plan items */
	const struct knob_value *orig; /* restore items: write this raw value back */
	struct knob_value cur;
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
	bool dry_run;
	enum cg_weight_formula formula;
	struct journal jr;
	bool jr_dirty; /* entries forgotten in this pass, not saved yet */
	const struct plan *reserve; /* borrowed: knobs journaled ahead for reactions */
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

static int read_cur(struct actuator *a, const char *cg, enum plan_knob knob, struct knob_value *c)
{
	memset(c, 0, sizeof(*c));
	return knob_ops(knob) ? knob_ops(knob)->read(a->cg, cg, c) : -EINVAL;
}

static struct knob_target target_of(const struct actuator *a, const struct item *it,
				    const struct plan_value *v)
{
	return (struct knob_target){
		.v = v, .orig = it->orig, .cur = &it->cur, .formula = a->formula
	};
}

static bool item_equal(const struct actuator *a, const struct item *it,
		       const struct plan_value *want)
{
	struct knob_target t = target_of(a, it, want);

	return knob_ops(it->knob)->holds(&it->cur, &t);
}

/* @v: a phase-1 step (orig ignored) or the target (NULL). */
static int write_value(struct actuator *a, const struct item *it, const struct plan_value *v)
{
	struct knob_target t = target_of(a, it, v ? v : &it->want);

	if (v)
		t.orig = NULL;
	return knob_ops(it->knob)->write(a->cg, it->cgroup, &t);
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

/* The value as logged and recorded: the plan's text, or the journal's for an original. */
static void value_text(const struct item *it, const struct plan_value *t, char *buf, size_t size)
{
	/* a restored weight or shares is shown as the number the file gets back */
	if (it->orig && it->knob == PLAN_KNOB_SHARES)
		snprintf(buf, size, "%llu", (unsigned long long)it->orig->w.value);
	else if (it->orig)
		knob_ops(it->knob)->format(it->orig, buf, size);
	else
		plan_value_format(it->knob, t, buf, size);
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

	value_text(it, t, value, sizeof(value));
	if (item_equal(a, it, t)) {
		it->result = 1; /* phase 1 already reached the target */
		res = "ok";
	} else {
		it->result = write_value(a, it, NULL);
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
		value_text(it, &it->want, value, sizeof(value));
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

static bool idle_planned(const struct plan *plan, const char *cgroup)
{
	const struct plan_entry *idle = plan ? plan_find(plan, cgroup, PLAN_KNOB_IDLE) : NULL;

	return idle && idle->v.idle;
}

/* An idle group has no shares: the kernel reads 3 and refuses writes until idle is 0 again. */
static bool shares_moot(const struct plan *plan, const struct plan_entry *e)
{
	return e->knob == PLAN_KNOB_SHARES && idle_planned(plan, e->cgroup);
}

/*
 * A planned knob whose cgroup is gone has nothing left to restore; its entry goes now, not when
 * the plan lets go of it, so that a new cgroup of that path gets its own original journaled
 * instead of the old one's. Called before any item points into the journal.
 */
static void forget(struct actuator *a, const char *cgroup, enum plan_knob knob)
{
	struct journal_entry *j = journal_find(&a->jr, cgroup, knob);

	if (!j)
		return;
	journal_del(&a->jr, (size_t)(j - a->jr.e));
	a->jr_dirty = true;
}

static int collect(struct actuator *a, const struct plan *plan, struct item **ret, size_t *nr)
{
	size_t cap = (plan ? plan->nr : 0) + a->jr.n, n = 0;
	struct item *items = calloc(cap ? cap : 1, sizeof(*items));
	int err;

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
		err = prepare(a, &items[n]);
		if (err > 0)
			n++;
		else if (err == -ENOENT || err == -ENODEV)
			forget(a, e->cgroup, e->knob);
	}
	/* journaled knobs no plan entry owns any more go back to their originals */
	for (size_t i = 0; i < a->jr.n; i++) {
		const struct journal_entry *j = &a->jr.e[i];

		if (plan && plan_find(plan, j->cgroup, j->knob))
			continue;
		/* shares kept for an idle group: they come back when idle goes */
		if (j->knob == PLAN_KNOB_SHARES && idle_planned(plan, j->cgroup))
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

/*
 * Entering cpu.idle throws cpu.shares away: the kernel gives an idle group the idle weight and
 * one that leaves idle the default 1024, whatever it had. So the shares are journaled with the
 * idle knob, before idle is first written, and come back after it when restored.
 */
static int journal_shares_of_idle(struct actuator *a, const char *cgroup, bool *added)
{
	struct knob_value c;

	if (journal_find(&a->jr, cgroup, PLAN_KNOB_SHARES) ||
	    read_cur(a, cgroup, PLAN_KNOB_SHARES, &c))
		return 0;
	*added = true;
	return journal_add(&a->jr, cgroup, PLAN_KNOB_SHARES, &c);
}

/* Journal what is about to change for the first time; persisted before any write. */
/*
 * Knobs a reaction may write between ticks get their originals journaled at the tick, so the
 * reaction itself never waits for the journal's fsync. Their values are left alone here.
 */
static int journal_reserved(struct actuator *a, bool *added)
{
	const struct plan *r = a->reserve;
	struct knob_value c;
	int err;

	for (size_t i = 0; r && i < r->nr; i++) {
		const struct plan_entry *e = &r->entries[i];

		if (journal_find(&a->jr, e->cgroup, e->knob) || read_cur(a, e->cgroup, e->knob, &c))
			continue;
		err = journal_add(&a->jr, e->cgroup, e->knob, &c);
		if (!err && e->knob == PLAN_KNOB_IDLE)
			err = journal_shares_of_idle(a, e->cgroup, added);
		if (err)
			return err;
		*added = true;
	}
	return 0;
}

/*
 * An original that is not on disk is not journaled: when the save fails, the entries added here
 * go again, so that the next pass tries to save them before it writes, and a crash in between
 * loses nothing.
 */
static int journal_items(struct actuator *a, const struct item *items, size_t n)
{
	size_t had = a->jr.n;
	bool added = false;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		if (items[i].orig || journal_find(&a->jr, items[i].cgroup, items[i].knob))
			continue;
		err = journal_add(&a->jr, items[i].cgroup, items[i].knob, &items[i].cur);
		if (!err && items[i].knob == PLAN_KNOB_IDLE)
			err = journal_shares_of_idle(a, items[i].cgroup, &added);
		added = true;
	}
	if (!err)
		err = journal_reserved(a, &added);
	if (!err && added)
		err = journal_save(&a->jr);
	if (err)
		a->jr.n = had;
	return err;
}

/*
 * Items held back because their originals could not be journaled are counted, not written.
 * Restores go ahead: their originals are on disk already. Returns how many items are left.
 */
static size_t hold_unjournaled(struct actuator *a, struct item *items, size_t n)
{
	size_t left = 0;

	for (size_t i = 0; i < n; i++) {
		if (items[i].orig)
			items[left++] = items[i];
		else
			count(a, items[i].strategy, plan_knob_name(items[i].knob), "no_journal");
	}
	return left;
}

/* Drop journal entries that are back at their original, or whose cgroup is gone. */
static int journal_prune(struct actuator *a, const struct plan *plan)
{
	bool removed = false;
	struct knob_value c;
	int err;

	for (size_t i = a->jr.n; i-- > 0;) {
		struct journal_entry *j = &a->jr.e[i];
		struct knob_target back = { .v = &j->orig.v, .orig = &j->orig };

		if (plan && plan_find(plan, j->cgroup, j->knob))
			continue;
		if (a->reserve && plan_find(a->reserve, j->cgroup, j->knob))
			continue;
		if (j->knob == PLAN_KNOB_SHARES && idle_planned(plan, j->cgroup))
			continue;
		err = read_cur(a, j->cgroup, j->knob, &c);
		if (!err && knob_ops(j->knob)->holds(&c, &back))
			err = -ENOENT;
		if (err == -ENOENT || err == -ENODEV) {
			journal_del(&a->jr, i);
			removed = true;
		}
	}
	if (!removed && !a->jr_dirty)
		return 0;
	err = journal_save(&a->jr);
	a->jr_dirty = err != 0;
	return err;
}

/*
 * Restore items point into the journal: room for every possible new entry is made before they are
 * built, so that journal_items() never moves the array under them.
 */
static int run_pass(struct actuator *a, const struct plan *plan)
{
	struct item *items;
	size_t n;
	int err;

	/* twice: an idle entry brings its cgroup's shares along */
	err = journal_reserve(&a->jr,
			      2 * ((plan ? plan->nr : 0) + (a->reserve ? a->reserve->nr : 0)));
	if (!err)
		err = collect(a, plan, &items, &n);
	if (err)
		return err;
	if (a->dry_run) {
		dry_log(a, items, n);
		free(items);
		return 0;
	}
	/* the journal said why, once; the next pass tries again */
	if (journal_items(a, items, n))
		n = hold_unjournaled(a, items, n);
	qsort(items, n, sizeof(*items), cmp_items);
	phase_loosen(a, items, n);
	phase_exact(a, items, n);
	err = journal_prune(a, plan);
	free(items);
	return err;
}

void actuator__set_reserve(struct actuator *a, const struct plan *reserve)
{
	a->reserve = reserve;
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

	if (!a->jr.n)
		return 0;
	plan_init(&empty);
	a->dry_run = false; /* a dry run journals nothing; whatever is journaled is real */
	a->reserve = NULL; /* everything goes back: nothing is kept for a reaction */
	err = run_pass(a, &empty);
	a->dry_run = dry;
	if (!err && a->jr.n) {
		log_warn("journal entries could not be restored; kept for the next start",
			 "path=%s entries=%zu", a->jr.path, a->jr.n);
		err = -EIO;
	}
	return err;
}

size_t actuator__nr_journal(const struct actuator *a)
{
	return a->jr.n;
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
	err = journal_open(&a->jr, opts->state_dir);
	if (err)
		goto err;
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
	journal_close(&a->jr);
	free(a);
}
