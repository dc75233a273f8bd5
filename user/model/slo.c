// SPDX-License-Identifier: GPL-2.0
/* NodeSLO spec + kqos strategy keys -> struct slo_config, with range checks naming the field. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <jansson.h>

#include "slo.h"
#include "units.h"

void slo_config_init(struct slo_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	for (int i = 0; i < RDT_CLASS_NR; i++)
		cfg->rdt[i] = (struct rdt_class_config){ .cat_end_pct = 100, .mba_pct = 100 };
	cfg->rdt[RDT_CLASS_BE].cat_end_pct = 30;
	cfg->rdt_pod_monitor = true;
	cfg->rdt_adapt = (struct rdt_adapt_config){ .l3_floor_pct = 10,
						    .mb_floor_pct = 10,
						    .step_pct = 10,
						    .quiet_ns = 10000000000ULL,
						    .llc_drop_pct = 10,
						    .cpi_rise_pct = 20,
						    .mpki_rise_pct = 30,
						    .event_hold_ns = 2000000000ULL };
	cfg->suppress_threshold_pct = 65;
	cfg->suppress_min_pct = -1;
	cfg->suppress_policy = SUPPRESS_CPUSET;
	cfg->burst = (struct burst_config){ .cpu_burst_pct = 1000,
					    .cfs_quota_burst_pct = 300,
					    .cfs_quota_burst_period_s = -1,
					    .share_pool_threshold_pct = 50 };
	cfg->be_shares = 2;
	cfg->mid_ls_protected = true;
	cfg->weight_formula = CG_WEIGHT_LINEAR;
	cfg->kubelet_policy = KUBELET_CPU_NONE;
	cfg->system_exclusive = true;
	cfg->unset_cpu_quota = true;
	cfg->cpu_normalization_ratio = 1.0;
	cfg->guard = (struct guard_config){ .target_lse_ns = 200000,
					    .target_lsr_ns = 500000,
					    .target_ls_ns = 1000000,
					    .quiet_ns = 2000000000ULL,
					    .settle_ns = 100000000ULL,
					    .ladder = { GUARD_STEP_IDLE, GUARD_STEP_CPUSET,
							GUARD_STEP_QUOTA },
					    .nr_ladder = 3,
					    .quota_pct = 20,
					    .cpi_rise_pct = 20,
					    .mpki_rise_pct = 30 };
	cfg->evict = (struct evict_config){ .memory_threshold_pct = 70,
					    .memory_lower_pct = -1,
					    .be_sat_upper_pct = -1,
					    .be_sat_lower_pct = -1,
					    .be_usage_threshold_pct = -1,
					    .window_s = -1,
					    .cpu_threshold_pct = -1,
					    .cpu_lower_pct = -1,
					    .cpu_cool_ns = 20000000000ULL,
					    .memory_cool_ns = 4000000000ULL };
}

const char *suppress_policy_name(enum suppress_policy p)
{
	static const char *const names[] = { "cpuset", "cfsQuota", "weight", "idle" };

	return (unsigned int)p < 4 ? names[p] : "?";
}

const char *rdt_class_name(enum rdt_class c)
{
	static const char *const names[] = { "LSR", "LS", "BE" };

	return (unsigned int)c < RDT_CLASS_NR ? names[c] : "?";
}

bool slo_rdt_enabled(const struct slo_config *cfg)
{
	for (int i = 0; i < RDT_CLASS_NR; i++)
		if (cfg->rdt[i].enable)
			return true;
	return false;
}

/* Parsing context: the dotted path of the object being read, for error messages. */
struct pctx {
	char *err;
	size_t err_len;
	const char *path;
};

static int fail(struct pctx *c, const char *key, const char *fmt, const char *detail)
	__attribute__((format(printf, 3, 0)));

static int fail(struct pctx *c, const char *key, const char *fmt, const char *detail)
{
	char what[160];

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(what, sizeof(what), fmt, detail);
#pragma GCC diagnostic pop
	snprintf(c->err, c->err_len, "%s.%s: %s", c->path, key, what);
	return -EINVAL;
}

static int get_int(struct pctx *c, json_t *o, const char *key, long long min, long long max,
		   long long *v)
{
	json_t *j = json_object_get(o, key);
	char detail[96];

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_integer(j))
		return fail(c, key, "%s", "not an integer");
	if (json_integer_value(j) < min || json_integer_value(j) > max) {
		snprintf(detail, sizeof(detail), "%lld out of range [%lld, %lld]",
			 (long long)json_integer_value(j), min, max);
		return fail(c, key, "%s", detail);
	}
	*v = json_integer_value(j);
	return 1;
}

static int get_bool(struct pctx *c, json_t *o, const char *key, bool *v)
{
	json_t *j = json_object_get(o, key);

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_boolean(j))
		return fail(c, key, "%s", "not a boolean");
	*v = json_is_true(j);
	return 1;
}

/* A string among names[] (NULL-terminated); *v = its index. */
static int get_enum(struct pctx *c, json_t *o, const char *key, const char *const *names, int *v)
{
	json_t *j = json_object_get(o, key);
	char detail[160];

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_string(j))
		return fail(c, key, "%s", "not a string");
	for (int i = 0; names[i]; i++) {
		if (!strcmp(json_string_value(j), names[i])) {
			*v = i;
			return 1;
		}
	}
	snprintf(detail, sizeof(detail), "\"%.60s\" is not one of", json_string_value(j));
	for (int i = 0; names[i] && strlen(detail) < sizeof(detail) - 24; i++)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail), " %s", names[i]);
	return fail(c, key, "%s", detail);
}

static int get_cpulist(struct pctx *c, json_t *o, const char *key, struct cpumask *v)
{
	json_t *j = json_object_get(o, key);

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_string(j))
		return fail(c, key, "%s", "not a string");
	if (cpulist_parse(json_string_value(j), v))
		return fail(c, key, "\"%.60s\" is not a cpu list", json_string_value(j));
	return 1;
}

/* kqos objects reject unknown keys: a typo must not silently disable a strategy. */
static int check_keys(struct pctx *c, json_t *o, const char *const *known)
{
	const char *key;
	json_t *v;

	json_object_foreach(o, key, v) {
		bool ok = false;

		for (int i = 0; known[i]; i++)
			ok = ok || !strcmp(key, known[i]);
		if (!ok)
			return fail(c, key, "%s", "unknown key");
	}
	return 0;
}

static int sub_object(struct pctx *c, json_t *o, const char *key, json_t **ret)
{
	json_t *j = json_object_get(o, key);

	*ret = NULL;
	if (!j || json_is_null(j))
		return 0;
	if (!json_is_object(j))
		return fail(c, key, "%s", "not an object");
	*ret = j;
	return 1;
}

/* The eviction fields of resourceUsedThresholdWithBE: wide ranges, the strategies check more. */
static int parse_evict_threshold(struct pctx *c, json_t *o, struct evict_config *ev)
{
	static const struct {
		const char *key;
		size_t off;
	} pcts[] = {
		{ "memoryEvictThresholdPercent",
		  offsetof(struct evict_config, memory_threshold_pct) },
		{ "memoryEvictLowerPercent", offsetof(struct evict_config, memory_lower_pct) },
		{ "cpuEvictBESatisfactionUpperPercent",
		  offsetof(struct evict_config, be_sat_upper_pct) },
		{ "cpuEvictBESatisfactionLowerPercent",
		  offsetof(struct evict_config, be_sat_lower_pct) },
		{ "cpuEvictBEUsageThresholdPercent",
		  offsetof(struct evict_config, be_usage_threshold_pct) },
		{ "cpuEvictThresholdPercent", offsetof(struct evict_config, cpu_threshold_pct) },
		{ "cpuEvictLowerPercent", offsetof(struct evict_config, cpu_lower_pct) },
	};
	static const char *const policies[] = { "evictByRealLimit", "evictByAllocatable", NULL };
	long long v;
	int p, r;

	for (size_t i = 0; i < sizeof(pcts) / sizeof(pcts[0]); i++) {
		if ((r = get_int(c, o, pcts[i].key, 0, 100, &v)) < 0)
			return r;
		if (r)
			*(int *)((char *)ev + pcts[i].off) = (int)v;
	}
	if ((r = get_int(c, o, "cpuEvictTimeWindowSeconds", 0, 3600, &v)) < 0)
		return r;
	if (r)
		ev->window_s = (int)v;
	if ((r = get_enum(c, o, "cpuEvictPolicy", policies, &p)) < 0)
		return r;
	if (r)
		ev->cpu_policy = (enum cpu_evict_policy)p;
	if ((r = get_int(c, o, "evictEnabledPriorityThreshold", INT32_MIN, INT32_MAX, &v)) < 0)
		return r;
	if (r) {
		ev->has_priority_threshold = true;
		ev->priority_threshold = (int32_t)v;
	}
	return 0;
}

/* strategies.eviction: {"features": ["BECPUEvict", "CPUEvict", "BEMemoryEvict", ...]} */
static int parse_eviction(json_t *o, struct evict_config *ev, char *err, size_t err_len)
{
	static const char *const known[] = { "features", NULL };
	static const char *const names[] = { "BECPUEvict", "CPUEvict", "BEMemoryEvict",
					     "MemoryEvict", NULL };
	struct pctx c = { err, err_len, "strategies.eviction" };
	json_t *a = json_object_get(o, "features"), *v;
	size_t i;
	int r;

	if ((r = check_keys(&c, o, known)) < 0)
		return r;
	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a))
		return fail(&c, "features", "%s", "not a list of feature names");
	json_array_foreach(a, i, v) {
		int k;

		for (k = 0; names[k]; k++)
			if (json_is_string(v) && !strcmp(json_string_value(v), names[k]))
				break;
		if (!names[k])
			return fail(&c, "features", "%s",
				    "want BECPUEvict, CPUEvict, BEMemoryEvict or MemoryEvict");
		ev->features |= 1u << k;
	}
	return 0;
}

static int parse_threshold(json_t *o, struct slo_config *cfg, char *err, size_t err_len)
{
	static const char *const policies[] = { "cpuset", "cfsQuota", NULL };
	struct pctx c = { err, err_len, "nodeSLO.resourceUsedThresholdWithBE" };
	long long v;
	int p, r;

	if ((r = get_bool(&c, o, "enable", &cfg->suppress_enable)) < 0)
		return r;
	if ((r = get_int(&c, o, "cpuSuppressThresholdPercent", 0, 100, &v)) < 0)
		return r;
	if (r)
		cfg->suppress_threshold_pct = (int)v;
	if ((r = get_int(&c, o, "cpuSuppressMinPercent", 0, 100, &v)) < 0)
		return r;
	if (r)
		cfg->suppress_min_pct = (int)v;
	if ((r = get_enum(&c, o, "cpuSuppressPolicy", policies, &p)) < 0)
		return r;
	if (r)
		cfg->suppress_policy = (enum suppress_policy)p;
	return parse_evict_threshold(&c, o, &cfg->evict);
}

static int parse_burst(json_t *o, struct burst_config *b, char *err, size_t err_len)
{
	/* the order of enum pod_burst_policy */
	static const char *const policies[] = { "none", "cpuBurstOnly", "cfsQuotaBurstOnly", "auto",
						NULL };
	struct pctx c = { err, err_len, "nodeSLO.cpuBurstStrategy" };
	long long v;
	int p, r;

	if ((r = get_enum(&c, o, "policy", policies, &p)) < 0)
		return r;
	if (r)
		b->policy = p;
	/* the ranges of koordinator's validate tags (apis/slo/v1alpha1/nodeslo_types.go) */
	if ((r = get_int(&c, o, "cpuBurstPercent", 1, 10000, &v)) < 0)
		return r;
	if (r)
		b->cpu_burst_pct = v;
	if ((r = get_int(&c, o, "cfsQuotaBurstPercent", 100, 1000000, &v)) < 0)
		return r;
	if (r)
		b->cfs_quota_burst_pct = v;
	if ((r = get_int(&c, o, "cfsQuotaBurstPeriodSeconds", -1, 1LL << 31, &v)) < 0)
		return r;
	if (r)
		b->cfs_quota_burst_period_s = v;
	if ((r = get_int(&c, o, "sharePoolThresholdPercent", 0, 100, &v)) < 0)
		return r;
	if (r)
		b->share_pool_threshold_pct = v;
	return 0;
}

static int parse_resctrl_qos(json_t *o, const char *cls, struct rdt_class_config *rc, char *err,
			     size_t err_len)
{
	char path[96];
	struct pctx c = { err, err_len, path };
	long long v;
	int r;

	snprintf(path, sizeof(path), "nodeSLO.resourceQOSStrategy.%s.resctrlQOS", cls);
	if ((r = get_bool(&c, o, "enable", &rc->enable)) < 0)
		return r;
	if ((r = get_int(&c, o, "catRangeStartPercent", 0, 100, &v)) < 0)
		return r;
	if (r)
		rc->cat_start_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "catRangeEndPercent", 0, 100, &v)) < 0)
		return r;
	if (r)
		rc->cat_end_pct = (unsigned int)v;
	/* koordinator leaves MB untouched outside 1..100; kqos says so instead */
	if ((r = get_int(&c, o, "mbaPercent", 1, 100, &v)) < 0)
		return r;
	if (r)
		rc->mba_pct = (unsigned int)v;
	if (rc->cat_start_pct >= rc->cat_end_pct) {
		char detail[64];

		snprintf(detail, sizeof(detail), "%u is not below catRangeEndPercent %u",
			 rc->cat_start_pct, rc->cat_end_pct);
		return fail(&c, "catRangeStartPercent", "%s", detail);
	}
	return 0;
}

/* resourceQOSStrategy: only resctrlQOS is read; the other per-class QoS stay koordlet's. */
static int parse_resource_qos(json_t *o, struct slo_config *cfg, char *err, size_t err_len)
{
	static const char *const keys[RDT_CLASS_NR] = { "lsrClass", "lsClass", "beClass" };
	char path[64];
	struct pctx c = { err, err_len, path };
	json_t *cls, *rq;
	int r;

	for (int i = 0; i < RDT_CLASS_NR; i++) {
		snprintf(path, sizeof(path), "nodeSLO.resourceQOSStrategy");
		if ((r = sub_object(&c, o, keys[i], &cls)) <= 0) {
			if (r < 0)
				return r;
			continue;
		}
		snprintf(path, sizeof(path), "nodeSLO.resourceQOSStrategy.%s", keys[i]);
		if ((r = sub_object(&c, cls, "resctrlQOS", &rq)) < 0)
			return r;
		if (r && (r = parse_resctrl_qos(rq, keys[i], &cfg->rdt[i], err, err_len)) < 0)
			return r;
	}
	return 0;
}

/* @text as a JSON object, or NULL with a message naming @what in @err. */
static json_t *load_object(const char *text, const char *what, char *err, size_t err_len)
{
	json_error_t jerr;
	json_t *root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);

	if (root && json_is_object(root))
		return root;
	snprintf(err, err_len, "%s: not a JSON object (%s, line %d)", what,
		 root ? "wrong type" : jerr.text, jerr.line);
	json_decref(root);
	return NULL;
}

static int parse_policy(const char *text, struct slo_config *cfg, char *err, size_t err_len)
{
	struct pctx c = { err, err_len, "nodeSLO" };
	json_t *root, *o;
	int r;

	if (!text || !*text)
		return 0;
	root = load_object(text, "nodeSLO", err, err_len);
	if (!root)
		return -EINVAL;
	r = sub_object(&c, root, "resourceUsedThresholdWithBE", &o);
	if (r > 0)
		r = parse_threshold(o, cfg, err, err_len);
	if (r >= 0 && (r = sub_object(&c, root, "cpuBurstStrategy", &o)) > 0) {
		cfg->burst.configured = true;
		r = parse_burst(o, &cfg->burst, err, err_len);
	}
	if (r >= 0 && (r = sub_object(&c, root, "resourceQOSStrategy", &o)) > 0)
		r = parse_resource_qos(o, cfg, err, err_len);
	json_decref(root);
	return r < 0 ? r : 0;
}

static int parse_suppress(json_t *o, struct slo_config *cfg, char *err, size_t err_len)
{
	static const char *const known[] = { "policy", "beShares", "midLsProtected", NULL };
	static const char *const policies[] = { "cpuset", "cfsQuota", "weight", "idle", NULL };
	struct pctx c = { err, err_len, "strategies.cpuSuppress" };
	long long v;
	int p, r;

	if ((r = check_keys(&c, o, known)) < 0)
		return r;
	if ((r = get_enum(&c, o, "policy", policies, &p)) < 0)
		return r;
	if (r)
		cfg->suppress_policy = (enum suppress_policy)p;
	if ((r = get_int(&c, o, "beShares", 2, 262144, &v)) < 0)
		return r;
	if (r)
		cfg->be_shares = (uint64_t)v;
	if ((r = get_bool(&c, o, "midLsProtected", &cfg->mid_ls_protected)) < 0)
		return r;
	return 0;
}

static const char *const guard_steps[] = { "idle", "weight", "cpuset", "quota", NULL };

const char *guard_step_name(enum guard_step s)
{
	return (unsigned int)s < GUARD_STEP_NR ? guard_steps[s] : "?";
}

static int get_duration(struct pctx *c, json_t *o, const char *key, __u64 min, __u64 max,
			uint64_t *v)
{
	json_t *j = json_object_get(o, key);
	__u64 ns;

	if (!j || json_is_null(j))
		return 0;
	if (!json_is_string(j) || parse_duration(json_string_value(j), &ns))
		return fail(c, key, "%s", "not a duration such as \"500us\" or \"2s\"");
	if (ns < min || ns > max)
		return fail(c, key, "%s", "duration out of range");
	*v = ns;
	return 1;
}

static int parse_guard_targets(json_t *o, struct guard_config *g, char *err, size_t err_len)
{
	static const char *const known[] = { "LSE", "LSR", "LS", NULL };
	struct pctx c = { err, err_len, "strategies.latencyGuard.targets" };
	const __u64 lo = 1000, hi = 10000000000ULL; /* 1 us .. 10 s */
	int r;

	if ((r = check_keys(&c, o, known)) < 0 ||
	    (r = get_duration(&c, o, "LSE", lo, hi, &g->target_lse_ns)) < 0 ||
	    (r = get_duration(&c, o, "LSR", lo, hi, &g->target_lsr_ns)) < 0 ||
	    (r = get_duration(&c, o, "LS", lo, hi, &g->target_ls_ns)) < 0)
		return r;
	return 0;
}

/* Each step once, at least one. */
static int parse_ladder(struct pctx *c, json_t *o, struct guard_config *g)
{
	json_t *a = json_object_get(o, "ladder"), *v;
	unsigned int seen = 0;
	size_t i;

	if (!a || json_is_null(a))
		return 0;
	if (!json_is_array(a) || !json_array_size(a) || json_array_size(a) > GUARD_LADDER_MAX)
		return fail(c, "ladder", "%s", "want 1 to 4 of idle, weight, cpuset, quota");
	g->nr_ladder = 0;
	json_array_foreach(a, i, v) {
		int k = -1;

		for (int s = 0; json_is_string(v) && guard_steps[s]; s++)
			if (!strcmp(json_string_value(v), guard_steps[s]))
				k = s;
		if (k < 0 || (seen & (1U << k)))
			return fail(c, "ladder", "%s", "each of idle, weight, cpuset, quota once");
		seen |= 1U << k;
		g->ladder[g->nr_ladder++] = (enum guard_step)k;
	}
	return 0;
}

static int parse_guard(json_t *o, struct guard_config *g, char *err, size_t err_len)
{
	static const char *const known[] = { "enable",	       "targets",	  "quietWindow",
					     "settle",	       "ladder",	  "quotaPercent",
					     "cpiRisePercent", "mpkiRisePercent", NULL };
	struct pctx c = { err, err_len, "strategies.latencyGuard" };
	long long v;
	json_t *t;
	int r;

	if ((r = check_keys(&c, o, known)) < 0 || (r = get_bool(&c, o, "enable", &g->enable)) < 0 ||
	    (r = get_duration(&c, o, "quietWindow", 100000000ULL, 3600000000000ULL, &g->quiet_ns)) <
		    0 ||
	    (r = get_duration(&c, o, "settle", 1000000ULL, 60000000000ULL, &g->settle_ns)) < 0 ||
	    (r = parse_ladder(&c, o, g)) < 0)
		return r;
	if ((r = get_int(&c, o, "quotaPercent", 1, 100, &v)) < 0)
		return r;
	if (r)
		g->quota_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "cpiRisePercent", 0, 1000, &v)) < 0)
		return r;
	if (r)
		g->cpi_rise_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "mpkiRisePercent", 0, 1000, &v)) < 0)
		return r;
	if (r)
		g->mpki_rise_pct = (unsigned int)v;
	if ((r = sub_object(&c, o, "targets", &t)) > 0)
		r = parse_guard_targets(t, g, err, err_len);
	return r < 0 ? r : 0;
}

static int parse_rdt_adapt(json_t *o, struct rdt_adapt_config *a, char *err, size_t err_len)
{
	static const char *const known[] = { "enable",
					     "l3FloorPercent",
					     "mbFloorPercent",
					     "stepPercent",
					     "quietPeriod",
					     "llcDropPercent",
					     "mbmPeakBytesPerSecond",
					     "cpiRisePercent",
					     "mpkiRisePercent",
					     "eventHold",
					     NULL };
	struct pctx c = { err, err_len, "strategies.resctrlAdapt" };
	long long v;
	int r;

	if ((r = check_keys(&c, o, known)) < 0 || (r = get_bool(&c, o, "enable", &a->enable)) < 0)
		return r;
	if ((r = get_int(&c, o, "l3FloorPercent", 1, 100, &v)) < 0)
		return r;
	if (r)
		a->l3_floor_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "mbFloorPercent", 1, 100, &v)) < 0)
		return r;
	if (r)
		a->mb_floor_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "stepPercent", 1, 50, &v)) < 0)
		return r;
	if (r)
		a->step_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "llcDropPercent", 1, 100, &v)) < 0)
		return r;
	if (r)
		a->llc_drop_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "cpiRisePercent", 0, 1000, &v)) < 0)
		return r;
	if (r)
		a->cpi_rise_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "mpkiRisePercent", 0, 1000, &v)) < 0)
		return r;
	if (r)
		a->mpki_rise_pct = (unsigned int)v;
	if ((r = get_int(&c, o, "mbmPeakBytesPerSecond", 0, INT64_MAX, &v)) < 0)
		return r;
	if (r)
		a->mbm_peak_bps = (uint64_t)v;
	r = get_duration(&c, o, "quietPeriod", 100000000ULL, 3600ULL * 1000000000ULL, &a->quiet_ns);
	if (r < 0)
		return r;
	r = get_duration(&c, o, "eventHold", 0, 3600ULL * 1000000000ULL, &a->event_hold_ns);
	return r < 0 ? r : 0;
}

static int parse_cpuset_rules(json_t *o, struct slo_config *cfg, char *err, size_t err_len)
{
	static const char *const known[] = { "enable", "beCpuManager", "unsetCpuQuota", NULL };
	struct pctx c = { err, err_len, "strategies.cpusetRules" };
	int r;

	if ((r = check_keys(&c, o, known)) < 0 ||
	    (r = get_bool(&c, o, "enable", &cfg->cpuset_rules_enable)) < 0 ||
	    (r = get_bool(&c, o, "beCpuManager", &cfg->be_cpu_manager)) < 0 ||
	    (r = get_bool(&c, o, "unsetCpuQuota", &cfg->unset_cpu_quota)) < 0)
		return r;
	return 0;
}

static int parse_system_qos(json_t *o, struct slo_config *cfg, char *err, size_t err_len)
{
	static const char *const known[] = { "cpuset", "cpusetExclusive", NULL };
	struct pctx c = { err, err_len, "strategies.systemQos" };
	int r;

	if ((r = check_keys(&c, o, known)) < 0 ||
	    (r = get_cpulist(&c, o, "cpuset", &cfg->system_cpus)) < 0)
		return r;
	cfg->has_system_cpus = r > 0 && !cpumask_empty(&cfg->system_cpus);
	if ((r = get_bool(&c, o, "cpusetExclusive", &cfg->system_exclusive)) < 0)
		return r;
	return 0;
}

static int parse_scalars(json_t *o, struct slo_config *cfg, struct pctx *c)
{
	static const char *const formulas[] = { "linear", "log", NULL };
	static const char *const kpolicies[] = { "none", "static", NULL };
	static const char *const recovery[] = { "restore", "adopt", NULL };
	json_t *j;
	long long v;
	int e, r;

	if ((r = get_bool(c, o, "resctrlPodLevel", &cfg->rdt_pod_level)) < 0)
		return r;
	if ((r = get_bool(c, o, "resctrlPodMonitor", &cfg->rdt_pod_monitor)) < 0)
		return r;
	if ((r = get_enum(c, o, "weightFormula", formulas, &e)) < 0)
		return r;
	if (r)
		cfg->weight_formula = (enum cg_weight_formula)e;
	if ((r = get_enum(c, o, "kubeletCpuManagerPolicy", kpolicies, &e)) < 0)
		return r;
	if (r)
		cfg->kubelet_policy = (enum kubelet_cpu_policy)e;
	if ((r = get_enum(c, o, "recovery", recovery, &e)) < 0)
		return r;
	if (r)
		cfg->recovery = (enum slo_recovery)e;
	if ((r = get_cpulist(c, o, "reservedCpus", &cfg->reserved_cpus)) < 0)
		return r;
	if ((r = get_int(c, o, "nodeReservedMilliCpu", 0, 1LL << 40, &v)) < 0)
		return r;
	if (r)
		cfg->node_reserved_milli = (uint64_t)v;
	j = json_object_get(o, "cpuManagerStatePath");
	if (j && (!json_is_string(j) || !*json_string_value(j) ||
		  strlen(json_string_value(j)) >= sizeof(cfg->cpu_manager_state)))
		return fail(c, "cpuManagerStatePath", "%s", "not a path");
	if (j)
		snprintf(cfg->cpu_manager_state, sizeof(cfg->cpu_manager_state), "%s",
			 json_string_value(j));
	j = json_object_get(o, "cpuNormalizationRatio");
	if (j && (!json_is_number(j) || json_number_value(j) < 1.0 ||
		  json_number_value(j) > 100.0 || isnan(json_number_value(j))))
		return fail(c, "cpuNormalizationRatio", "%s", "not a number in [1, 100]");
	if (j)
		cfg->cpu_normalization_ratio = json_number_value(j);
	return 0;
}

/* One tier of extended_resource: {"enable": bool}, nothing else. */
static int parse_tier(json_t *o, const char *path, bool *ret_enable, char *err, size_t err_len)
{
	static const char *const known[] = { "enable", NULL };
	struct pctx c = { err, err_len, path };
	int r;

	if ((r = check_keys(&c, o, known)) < 0 || (r = get_bool(&c, o, "enable", ret_enable)) < 0)
		return r;
	return 0;
}

static int parse_kqos(const char *text, struct slo_config *cfg, char *err, size_t err_len)
{
	static const char *const known[] = {
		"cpuSuppress",
		"weightFormula",
		"kubeletCpuManagerPolicy",
		"reservedCpus",
		"nodeReservedMilliCpu",
		"cpuManagerStatePath",
		"systemQos",
		"cpusetRules",
		"batchResource",
		"midResource",
		"recovery",
		"cpuNormalizationRatio",
		"latencyGuard",
		"eviction",
		"resctrlPodLevel",
		"resctrlAdapt",
		"resctrlPodMonitor",
		NULL,
	};
	struct pctx c = { err, err_len, "strategies" };
	json_t *root, *o;
	int r;

	if (!text || !*text)
		return 0;
	root = load_object(text, "strategies", err, err_len);
	if (!root)
		return -EINVAL;
	if ((r = check_keys(&c, root, known)) < 0 || (r = parse_scalars(root, cfg, &c)) < 0)
		goto out;
	if ((r = sub_object(&c, root, "cpuSuppress", &o)) > 0)
		r = parse_suppress(o, cfg, err, err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "cpusetRules", &o)) > 0)
		r = parse_cpuset_rules(o, cfg, err, err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "systemQos", &o)) > 0)
		r = parse_system_qos(o, cfg, err, err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "resctrlAdapt", &o)) > 0)
		r = parse_rdt_adapt(o, &cfg->rdt_adapt, err, err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "latencyGuard", &o)) > 0)
		r = parse_guard(o, &cfg->guard, err, err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "eviction", &o)) > 0)
		r = parse_eviction(o, &cfg->evict, err, err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "batchResource", &o)) > 0)
		r = parse_tier(o, "strategies.batchResource", &cfg->batch_resource_enable, err,
			       err_len);
	if (r < 0)
		goto out;
	if ((r = sub_object(&c, root, "midResource", &o)) > 0)
		r = parse_tier(o, "strategies.midResource", &cfg->mid_resource_enable, err,
			       err_len);
out:
	json_decref(root);
	return r < 0 ? r : 0;
}

int slo_config_parse(const char *policy_json, const char *kqos_json, struct slo_config *ret,
		     char *err, size_t err_len)
{
	struct slo_config cfg;
	char dummy[8];
	int r;

	if (!err || !err_len) {
		err = dummy;
		err_len = sizeof(dummy);
	}
	err[0] = '\0';
	slo_config_init(&cfg);
	/* nodeSLO first: the kqos suppress policy (weight, idle) overrides koordinator's */
	r = parse_policy(policy_json, &cfg, err, err_len);
	if (!r)
		r = parse_kqos(kqos_json, &cfg, err, err_len);
	if (r)
		return r;
	*ret = cfg;
	return 0;
}
