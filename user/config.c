// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "config.h"
#include "nodeslo.h"
#include "pod.h"
#include "podsrc.h"
#include "slo.h"

#define NSEC_PER_SEC 1000000000ULL

enum field_type {
	F_DURATION,
	F_STRING,
	F_STRING0, /* a string that may be empty */
	F_STRLIST, /* array of strings into char[max][size], count at off2 */
	F_OBJLIST, /* array of objects: elements of .size bytes, fields .sub, count at off2 */
	F_JSON, /* any object, kept as compact JSON text (validated by its consumer) */
	F_BOOL,
	F_U32,
	F_INT, /* signed, in [imin, imax] */
	F_ENUM,
	F_OBJECT,
};

/* One JSON key: where it goes in struct kqos_config and what it may hold. */
struct field {
	const char *key;
	enum field_type type;
	size_t off;
	size_t size; /* F_STRING: buffer size */
	unsigned long long min, max; /* F_U32, F_DURATION (ns) */
	long long imin, imax; /* F_INT */
	const char *const *names; /* F_ENUM: NULL-terminated, index = value */
	const struct field *sub; /* F_OBJECT: NULL-terminated by key */
	size_t off2; /* F_STRLIST: offset of the __u32 element count */
};

static const char *const cg_mode_names[] = { "auto", "v1", "v2", NULL };
static const char *const log_level_names[] = { "error", "warn", "info", "debug", NULL };

#define OFF(m) offsetof(struct kqos_config, m)

static const struct field collector_fields[] = {
	{ .key = "maxCgroups",
	  .type = F_U32,
	  .off = OFF(collector.max_cgroups),
	  .min = 16,
	  .max = 1 << 22 },
	{ .key = "counterSlots",
	  .type = F_INT,
	  .off = OFF(collector.counter_slots),
	  .imin = -1,
	  .imax = 1 << 22 },
	{ .key = "reapInterval",
	  .type = F_DURATION,
	  .off = OFF(collector.reap_interval_ns),
	  .min = NSEC_PER_SEC,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "walkInterval",
	  .type = F_DURATION,
	  .off = OFF(collector.walk_interval_ns),
	  .min = NSEC_PER_SEC,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "histInterval",
	  .type = F_DURATION,
	  .off = OFF(collector.hist_interval_ns),
	  .min = 1000000ULL,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "statInterval",
	  .type = F_DURATION,
	  .off = OFF(collector.stat_interval_ns),
	  .min = 1000000ULL,
	  .max = 3600 * NSEC_PER_SEC },
	{ NULL },
};

static const struct field pmu_fields[] = {
	{ .key = "cycles", .type = F_STRING0, .off = OFF(pmu.cycles), .size = PMU_NAME_LEN },
	{ .key = "instructions",
	  .type = F_STRING0,
	  .off = OFF(pmu.instructions),
	  .size = PMU_NAME_LEN },
	{ .key = "llcMisses", .type = F_STRING0, .off = OFF(pmu.llc_misses), .size = PMU_NAME_LEN },
	{ .key = "extra",
	  .type = F_STRLIST,
	  .off = OFF(pmu.extra),
	  .size = PMU_NAME_LEN,
	  .max = KQOS_PMU_MAX,
	  .off2 = OFF(pmu.n_extra) },
	{ NULL },
};

static const char *const pod_source_names[] = { "auto",	  "kubelet", "file", "cgroup",
						"static", "none",    NULL };

#define GOFF(m) offsetof(struct config_group, m)

static const char *const evict_action_names[] = { "none", "kill", "freeze", NULL };

static const struct field group_fields[] = {
	{ .key = "name", .type = F_STRING, .off = GOFF(name), .size = 64 },
	{ .key = "cgroup", .type = F_STRING, .off = GOFF(cgroup), .size = 256 },
	{ .key = "qosClass", .type = F_STRING, .off = GOFF(qos_class), .size = 16 },
	{ .key = "waitTarget",
	  .type = F_DURATION,
	  .off = GOFF(wait_target_ns),
	  .min = 1000,
	  .max = 10 * NSEC_PER_SEC },
	{ .key = "evictAction",
	  .type = F_ENUM,
	  .off = GOFF(evict_action),
	  .names = evict_action_names },
	{ NULL },
};

static const struct field eviction_fields[] = {
	{ .key = "dryRun", .type = F_BOOL, .off = OFF(eviction.dry_run) },
	{ .key = "apiServer", .type = F_STRING0, .off = OFF(eviction.api_server), .size = 512 },
	{ .key = "tokenFile", .type = F_STRING0, .off = OFF(eviction.token_file), .size = PATH_MAX },
	{ .key = "caFile", .type = F_STRING0, .off = OFF(eviction.ca_file), .size = PATH_MAX },
	{ .key = "insecureSkipVerify", .type = F_BOOL, .off = OFF(eviction.insecure_skip_verify) },
	{ .key = "timeout",
	  .type = F_DURATION,
	  .off = OFF(eviction.timeout_ns),
	  .min = 10000000ULL,
	  .max = 60 * NSEC_PER_SEC },
	{ .key = "retry",
	  .type = F_DURATION,
	  .off = OFF(eviction.retry_ns),
	  .min = 100000000ULL,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "killGrace",
	  .type = F_DURATION,
	  .off = OFF(eviction.kill_grace_ns),
	  .min = 0,
	  .max = 600 * NSEC_PER_SEC },
	{ NULL },
};

static const struct field kubelet_fields[] = {
	{ .key = "url", .type = F_STRING, .off = OFF(pods.kubelet.url), .size = 512 },
	{ .key = "tokenFile",
	  .type = F_STRING0,
	  .off = OFF(pods.kubelet.token_file),
	  .size = PATH_MAX },
	{ .key = "caFile", .type = F_STRING0, .off = OFF(pods.kubelet.ca_file), .size = PATH_MAX },
	{ .key = "insecureSkipVerify",
	  .type = F_BOOL,
	  .off = OFF(pods.kubelet.insecure_skip_verify) },
	{ .key = "timeout",
	  .type = F_DURATION,
	  .off = OFF(pods.kubelet.timeout_ns),
	  .min = 100000000ULL,
	  .max = 60 * NSEC_PER_SEC },
	{ .key = "interval",
	  .type = F_DURATION,
	  .off = OFF(pods.kubelet.interval_ns),
	  .min = NSEC_PER_SEC,
	  .max = 3600 * NSEC_PER_SEC },
	{ NULL },
};

static const struct field podfile_fields[] = {
	{ .key = "path", .type = F_STRING, .off = OFF(pods.file.path), .size = PATH_MAX },
	{ .key = "interval",
	  .type = F_DURATION,
	  .off = OFF(pods.file.interval_ns),
	  .min = 10000000ULL,
	  .max = 3600 * NSEC_PER_SEC },
	{ NULL },
};

static const struct field pods_fields[] = {
	{ .key = "source", .type = F_ENUM, .off = OFF(pods.source), .names = pod_source_names },
	{ .key = "kubeletRoot", .type = F_STRING, .off = OFF(pods.kubelet_root), .size = PATH_MAX },
	{ .key = "kubelet", .type = F_OBJECT, .sub = kubelet_fields },
	{ .key = "file", .type = F_OBJECT, .sub = podfile_fields },
	{ .key = "maxBytes",
	  .type = F_U32,
	  .off = OFF(pods.max_bytes),
	  .min = 1 << 16,
	  .max = 1 << 28 },
	{ .key = "maxPods", .type = F_U32, .off = OFF(pods.max_pods), .min = 1, .max = 1000000 },
	{ .key = "groups",
	  .type = F_OBJLIST,
	  .off = OFF(pods.groups),
	  .size = sizeof(struct config_group),
	  .max = CONFIG_MAX_GROUPS,
	  .off2 = OFF(pods.nr_groups),
	  .sub = group_fields },
	{ NULL },
};

static const struct field resctrl_fields[] = {
	{ .key = "root", .type = F_STRING, .off = OFF(resctrl.root), .size = PATH_MAX },
	{ .key = "interval",
	  .type = F_DURATION,
	  .off = OFF(resctrl.interval_ns),
	  .min = 100000000ULL,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "reconcile", .type = F_BOOL, .off = OFF(resctrl.reconcile) },
	{ NULL },
};

static const struct field export_fields[] = {
	{ .key = "textfileDir",
	  .type = F_STRING0,
	  .off = OFF(export.textfile_dir),
	  .size = PATH_MAX },
	{ .key = "textfileInterval",
	  .type = F_DURATION,
	  .off = OFF(export.textfile_interval_ns),
	  .min = NSEC_PER_SEC / 10,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "socket", .type = F_STRING0, .off = OFF(export.socket), .size = PATH_MAX },
	{ .key = "socketGroup", .type = F_STRING0, .off = OFF(export.socket_group), .size = 64 },
	{ NULL },
};

static const struct field top_fields[] = {
	{ .key = "interval",
	  .type = F_DURATION,
	  .off = OFF(interval_ns),
	  .min = 1000000,
	  .max = 3600 * NSEC_PER_SEC },
	{ .key = "cgroupRoot", .type = F_STRING, .off = OFF(cgroup_root), .size = PATH_MAX },
	{ .key = "cgroupMode", .type = F_ENUM, .off = OFF(cgroup_mode), .names = cg_mode_names },
	{ .key = "logLevel", .type = F_ENUM, .off = OFF(log_level), .names = log_level_names },
	{ .key = "dryRun", .type = F_BOOL, .off = OFF(dry_run) },
	{ .key = "nice", .type = F_INT, .off = OFF(nice), .imin = -20, .imax = 19 },
	{ .key = "collector", .type = F_OBJECT, .sub = collector_fields },
	{ .key = "pmu", .type = F_OBJECT, .sub = pmu_fields },
	{ .key = "stateDir", .type = F_STRING, .off = OFF(state_dir), .size = PATH_MAX },
	{ .key = "sysRoot", .type = F_STRING, .off = OFF(sys_root), .size = PATH_MAX },
	{ .key = "procRoot", .type = F_STRING, .off = OFF(proc_root), .size = PATH_MAX },
	{ .key = "resctrl", .type = F_OBJECT, .sub = resctrl_fields },
	{ .key = "export", .type = F_OBJECT, .sub = export_fields },
	{ .key = "pods", .type = F_OBJECT, .sub = pods_fields },
	{ .key = "eviction", .type = F_OBJECT, .sub = eviction_fields },
	{ .key = "nodeSLO", .type = F_JSON, .off = OFF(node_slo_json), .size = CONFIG_JSON_MAX },
	{ .key = "strategies",
	  .type = F_JSON,
	  .off = OFF(strategies_json),
	  .size = CONFIG_JSON_MAX },
	{ NULL },
};

void config_defaults(struct kqos_config *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->interval_ns = NSEC_PER_SEC;
	snprintf(cfg->cgroup_root, sizeof(cfg->cgroup_root), "/sys/fs/cgroup");
	cfg->cgroup_mode = CG_MODE_AUTO;
	cfg->log_level = LOG_INFO;
	cfg->nice = -10;
	cfg->collector.max_cgroups = 16384;
	cfg->collector.reap_interval_ns = 10 * NSEC_PER_SEC;
	cfg->collector.walk_interval_ns = 60 * NSEC_PER_SEC;
	cfg->collector.stat_interval_ns = NSEC_PER_SEC;
	cfg->collector.hist_interval_ns = NSEC_PER_SEC;
	snprintf(cfg->pmu.cycles, sizeof(cfg->pmu.cycles), "cycles");
	snprintf(cfg->pmu.instructions, sizeof(cfg->pmu.instructions), "instructions");
	snprintf(cfg->pmu.llc_misses, sizeof(cfg->pmu.llc_misses), "LLC-LOAD-MISSES");
	snprintf(cfg->state_dir, sizeof(cfg->state_dir), "/var/lib/kqos");
	snprintf(cfg->sys_root, sizeof(cfg->sys_root), "/sys");
	snprintf(cfg->proc_root, sizeof(cfg->proc_root), "/proc");
	snprintf(cfg->resctrl.root, sizeof(cfg->resctrl.root), "/sys/fs/resctrl");
	cfg->resctrl.interval_ns = NSEC_PER_SEC;
	cfg->resctrl.reconcile = true;
	cfg->export.textfile_interval_ns = 10 * NSEC_PER_SEC;
	snprintf(cfg->export.socket, sizeof(cfg->export.socket), "/run/kqos/kqos.sock");
	snprintf(cfg->pods.kubelet_root, sizeof(cfg->pods.kubelet_root), "/var/lib/kubelet");
	snprintf(cfg->cpu_manager_state, sizeof(cfg->cpu_manager_state),
		 "/var/lib/kubelet/cpu_manager_state");
	snprintf(cfg->pods.kubelet.url, sizeof(cfg->pods.kubelet.url),
		 "https://127.0.0.1:10250/pods");
	snprintf(cfg->pods.kubelet.token_file, sizeof(cfg->pods.kubelet.token_file),
		 "/var/run/secrets/kubernetes.io/serviceaccount/token");
	cfg->pods.kubelet.timeout_ns = 3 * NSEC_PER_SEC;
	cfg->pods.kubelet.interval_ns = 10 * NSEC_PER_SEC;
	cfg->pods.file.interval_ns = NSEC_PER_SEC;
	cfg->pods.max_bytes = PODSRC_MAX_BYTES;
	cfg->pods.max_pods = PODSRC_MAX_PODS;
	cfg->eviction.timeout_ns = 2 * NSEC_PER_SEC;
	cfg->eviction.retry_ns = 10 * NSEC_PER_SEC;
	cfg->eviction.kill_grace_ns = 10 * NSEC_PER_SEC;
}

int config_pmu_events(const struct kqos_config *cfg, struct pmu_event_cfg *out)
{
	const char *role_names[] = { cfg->pmu.cycles, cfg->pmu.instructions, cfg->pmu.llc_misses };
	static const __u32 roles[] = { PMU_ROLE_CYCLES, PMU_ROLE_INSTRUCTIONS,
				       PMU_ROLE_LLC_MISSES };
	int n = 0;

	for (int i = 0; i < 3; i++) {
		if (!*role_names[i])
			continue;
		if (n == KQOS_PMU_MAX)
			return -E2BIG;
		snprintf(out[n].name, sizeof(out[n].name), "%s", role_names[i]);
		out[n++].role = roles[i];
	}
	for (__u32 i = 0; i < cfg->pmu.n_extra; i++) {
		if (n == KQOS_PMU_MAX)
			return -E2BIG;
		snprintf(out[n].name, sizeof(out[n].name), "%s", cfg->pmu.extra[i]);
		out[n++].role = PMU_ROLE_OTHER;
	}
	return n;
}

/* --- where a key sits in the text -------------------------------------------------------- */

/* Minimal JSON scanner state, enough to find the line:column of one object key. */
struct scan {
	const char *p;
	int line, col;
};

static void scan_advance(struct scan *s)
{
	if (*s->p == '\n') {
		s->line++;
		s->col = 1;
	} else {
		s->col++;
	}
	s->p++;
}

/* At an opening quote: consume the string and copy up to @n-1 bytes of it into @out. */
static void scan_string(struct scan *s, char *out, size_t n)
{
	size_t len = 0;

	scan_advance(s);
	while (*s->p && *s->p != '"') {
		if (*s->p == '\\' && s->p[1])
			scan_advance(s);
		if (len + 1 < n)
			out[len++] = *s->p;
		scan_advance(s);
	}
	out[len] = '\0';
	if (*s->p)
		scan_advance(s);
}

static void skip_space(struct scan *s)
{
	while (*s->p && isspace((unsigned char)*s->p))
		scan_advance(s);
}

/*
 * Find @path[0..depth-1] (a chain of object keys from the top-level object) in @text and store
 * the position of the last key. Falls back to 1:1 when the text is not what jansson parsed.
 */
static void key_position(const char *text, const char *const *path, int depth, int *line, int *col)
{
	struct scan s = { text, 1, 1 };
	int level = 0, matched = 0;
	char key[256];

	*line = 1;
	*col = 1;
	/* nothing to find (a top-level key that looks like "[i]"): the loop would read path[1] */
	if (depth <= 0)
		return;
	while (*s.p) {
		int kline = s.line, kcol = s.col;

		if (*s.p == '{' || *s.p == '[') {
			level++;
		} else if (*s.p == '}' || *s.p == ']') {
			if (matched >= level)
				matched = level - 1;
			level--;
		} else if (*s.p == '"') {
			scan_string(&s, key, sizeof(key));
			skip_space(&s);
			if (*s.p != ':' || level != matched + 1 || strcmp(key, path[matched]))
				continue;
			if (++matched == depth) {
				*line = kline;
				*col = kcol;
				return;
			}
			continue;
		}
		scan_advance(&s);
	}
}

/* --- the table-driven walk ---------------------------------------------------------------- */

struct parse_ctx {
	const char *file;
	const char *text;
	char *err;
	size_t err_len;
	const char *path[8];
	int depth;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse_ctx *c, const char *fmt, ...)
{
	char what[1600], dotted[256] = "";
	int line, col, n = 0;
	va_list ap;

	int located = c->depth;

	for (int i = 0; i < c->depth; i++) {
		if (c->path[i][0] == '[' && located == c->depth)
			located = i;
		n += snprintf(dotted + n, sizeof(dotted) - n, "%s%s",
			      i && c->path[i][0] != '[' ? "." : "", c->path[i]);
	}
	key_position(c->text, c->path, located, &line, &col);
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(c->err, c->err_len, "%s:%d:%d: key '%s': %s", c->file, line, col, dotted, what);
	return -EINVAL;
}

static const struct field *find_field(const struct field *fields, const char *key)
{
	for (const struct field *f = fields; f->key; f++)
		if (!strcmp(f->key, key))
			return f;
	return NULL;
}

static int set_enum(struct parse_ctx *c, const struct field *f, json_t *v, void *dst)
{
	char choices[128] = "";
	int n = 0;

	for (__u32 i = 0; json_is_string(v) && f->names[i]; i++) {
		if (!strcmp(f->names[i], json_string_value(v))) {
			*(__u32 *)dst = i;
			return 0;
		}
	}
	for (int i = 0; f->names[i]; i++)
		n += snprintf(choices + n, sizeof(choices) - n, "%s%s", i ? "|" : "", f->names[i]);
	return fail(c, "expected one of %s", choices);
}

static int set_duration(struct parse_ctx *c, const struct field *f, json_t *v, void *dst)
{
	__u64 ns;

	/* Range-check the seconds before the cast: converting a huge double is undefined. */
	if (json_is_number(v) && json_number_value(v) >= 0 &&
	    json_number_value(v) <= (double)f->max / 1e9)
		ns = (__u64)(json_number_value(v) * 1e9 + 0.5);
	else if (json_is_number(v) && json_number_value(v) >= 0)
		return fail(c, "duration out of range [%lluns, %lluns]", f->min, f->max);
	else if (!json_is_string(v) || parse_duration(json_string_value(v), &ns))
		return fail(c,
			    "expected a duration such as \"1s\", \"250ms\" or a number of seconds");
	if (ns < f->min || ns > f->max)
		return fail(c, "duration out of range [%lluns, %lluns]", f->min, f->max);
	*(__u64 *)dst = ns;
	return 0;
}

static int set_u32(struct parse_ctx *c, const struct field *f, json_t *v, void *dst)
{
	json_int_t i;

	if (!json_is_integer(v))
		return fail(c, "expected an integer");
	i = json_integer_value(v);
	if (i < (json_int_t)f->min || i > (json_int_t)f->max)
		return fail(c, "%lld out of range [%llu, %llu]", (long long)i, f->min, f->max);
	*(__u32 *)dst = (__u32)i;
	return 0;
}

static int set_int(struct parse_ctx *c, const struct field *f, json_t *v, void *dst)
{
	json_int_t i;

	if (!json_is_integer(v))
		return fail(c, "expected an integer");
	i = json_integer_value(v);
	if (i < f->imin || i > f->imax)
		return fail(c, "%lld out of range [%lld, %lld]", (long long)i, f->imin, f->imax);
	*(int *)dst = (int)i;
	return 0;
}

static int set_string(struct parse_ctx *c, const struct field *f, json_t *v, void *dst)
{
	if (!json_is_string(v))
		return fail(c, "expected a string");
	if (json_string_length(v) >= f->size || !json_string_length(v))
		return fail(c, "string must be 1..%zu bytes", f->size - 1);
	memcpy(dst, json_string_value(v), json_string_length(v) + 1);
	return 0;
}

static int set_strlist(struct parse_ctx *c, const struct field *f, json_t *v, void *base)
{
	char *dst = (char *)base + f->off;
	size_t i;
	json_t *e;

	if (!json_is_array(v) || json_array_size(v) > f->max)
		return fail(c, "expected an array of at most %llu strings", f->max);
	json_array_foreach(v, i, e) {
		if (!json_is_string(e) || !json_string_length(e) ||
		    json_string_length(e) >= f->size)
			return fail(c, "element %zu: expected a string of 1..%zu bytes", i,
				    f->size - 1);
		memcpy(dst + i * f->size, json_string_value(e), json_string_length(e) + 1);
	}
	*(__u32 *)((char *)base + f->off2) = (__u32)json_array_size(v);
	return 0;
}

static int walk_object(struct parse_ctx *c, const struct field *fields, json_t *obj, void *base);

static int set_objlist(struct parse_ctx *c, const struct field *f, json_t *v, void *base)
{
	char idx[24];
	size_t i;
	json_t *e;
	int err;

	if (!json_is_array(v) || json_array_size(v) > f->max)
		return fail(c, "expected an array of at most %llu objects", f->max);
	json_array_foreach(v, i, e) {
		if (!json_is_object(e))
			return fail(c, "element %zu: expected an object", i);
		/* "[i]" path parts name the element in messages; positions stop at the array. */
		snprintf(idx, sizeof(idx), "[%zu]", i);
		c->path[c->depth] = idx;
		c->depth++;
		err = walk_object(c, f->sub, e, (char *)base + f->off + i * f->size);
		if (err)
			return err;
		c->depth--;
	}
	*(__u32 *)((char *)base + f->off2) = (__u32)json_array_size(v);
	return 0;
}

static int set_json(struct parse_ctx *c, const struct field *f, json_t *v, void *dst)
{
	char *text;
	size_t len;

	if (!json_is_object(v))
		return fail(c, "expected an object");
	text = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text)
		return fail(c, "out of memory");
	len = strlen(text);
	if (len >= f->size) {
		free(text);
		return fail(c, "object longer than %zu bytes", f->size - 1);
	}
	memcpy(dst, text, len + 1);
	free(text);
	return 0;
}

static int set_field(struct parse_ctx *c, const struct field *f, json_t *v, void *base)
{
	void *dst = (char *)base + f->off;

	switch (f->type) {
	case F_DURATION:
		return set_duration(c, f, v, dst);
	case F_STRING:
		return set_string(c, f, v, dst);
	case F_STRING0:
		if (json_is_string(v) && !json_string_length(v)) {
			*(char *)dst = '\0';
			return 0;
		}
		return set_string(c, f, v, dst);
	case F_STRLIST:
		return set_strlist(c, f, v, base);
	case F_OBJLIST:
		return set_objlist(c, f, v, base);
	case F_JSON:
		return set_json(c, f, v, dst);
	case F_BOOL:
		if (!json_is_boolean(v))
			return fail(c, "expected true or false");
		*(bool *)dst = json_is_true(v);
		return 0;
	case F_U32:
		return set_u32(c, f, v, dst);
	case F_INT:
		return set_int(c, f, v, dst);
	case F_ENUM:
		return set_enum(c, f, v, dst);
	case F_OBJECT:
		if (!json_is_object(v))
			return fail(c, "expected an object");
		return walk_object(c, f->sub, v, base);
	}
	return fail(c, "internal: unknown field type");
}

static int walk_object(struct parse_ctx *c, const struct field *fields, json_t *obj, void *base)
{
	const char *key;
	json_t *v;
	int err;

	json_object_foreach(obj, key, v) {
		const struct field *f = find_field(fields, key);

		if (c->depth >= (int)(sizeof(c->path) / sizeof(c->path[0])))
			return fail(c, "nested too deep");
		c->path[c->depth++] = key;
		if (!f)
			return fail(c, "unknown key");
		err = set_field(c, f, v, base);
		if (err)
			return err;
		c->depth--;
	}
	return 0;
}

/* Rules that span keys; reported at the enclosing key. */
static int validate(struct parse_ctx *c, struct kqos_config *cfg)
{
	struct pmu_event_cfg ev[KQOS_PMU_MAX];
	struct slo_config slo;
	struct nodeslo_opts nslo;
	char why[1400];
	int n;

	c->path[0] = "pmu";
	c->depth = 1;
	n = config_pmu_events(cfg, ev);
	if (n < 0)
		return fail(c, "at most %d events in all (cycles, instructions, llcMisses, extra)",
			    KQOS_PMU_MAX);
	/* Unknown names fail here, with the file named, rather than at load time. */
	for (int i = 0; i < n; i++)
		if (pmu_encode(ev[i].name, NULL, why, sizeof(why)))
			return fail(c, "%s", why);
	c->path[0] = "nodeSLO";
	c->depth = 1;
	if (slo_config_parse(*cfg->node_slo_json ? cfg->node_slo_json : NULL,
			     *cfg->strategies_json ? cfg->strategies_json : NULL, &slo, why,
			     sizeof(why)))
		return fail(c, "%s", why);
	if (nodeslo_opts_parse(cfg->node_slo_json, &nslo, why, sizeof(why)))
		return fail(c, "%s", why);
	/* One checkpoint for the model and cpuset rules; strategies.cpuManagerStatePath is an alias. */
	if (*slo.cpu_manager_state)
		snprintf(cfg->cpu_manager_state, sizeof(cfg->cpu_manager_state), "%s",
			 slo.cpu_manager_state);
	else if (snprintf(cfg->cpu_manager_state, sizeof(cfg->cpu_manager_state),
			  "%s/cpu_manager_state",
			  cfg->pods.kubelet_root) >= (int)sizeof(cfg->cpu_manager_state))
		return fail(c, "%s", "pods.kubeletRoot: too long");
	c->path[0] = "collector";
	c->path[1] = "counterSlots";
	c->depth = 2;
	if (cfg->collector.counter_slots > (long long)cfg->collector.max_cgroups)
		return fail(c, "%d is more than collector.maxCgroups (%u)",
			    cfg->collector.counter_slots, cfg->collector.max_cgroups);
	c->path[0] = "pods";
	c->path[1] = "groups";
	c->depth = 2;
	for (__u32 i = 0; i < cfg->pods.nr_groups; i++)
		if (pod_qos_from_name(cfg->pods.groups[i].qos_class) == POD_QOS_NONE)
			return fail(c, "group '%s': qosClass '%s' is not LSE|LSR|LS|BE|SYSTEM",
				    cfg->pods.groups[i].name, cfg->pods.groups[i].qos_class);
	c->depth = 0;
	return 0;
}

int config_parse(const char *file, const char *text, struct kqos_config *cfg, char *err,
		 size_t err_len)
{
	struct parse_ctx c = { .file = file, .text = text, .err = err, .err_len = err_len };
	struct kqos_config tmp = *cfg;
	json_error_t jerr;
	json_t *root;
	int ret;

	/* Reject duplicate keys: the second would silently win otherwise. */
	root = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, err_len, "%s:%d:%d: %s", file, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(root)) {
		snprintf(err, err_len, "%s:1:1: the top level must be an object", file);
		ret = -EINVAL;
		goto out;
	}
	ret = walk_object(&c, top_fields, root, &tmp);
	if (!ret)
		ret = validate(&c, &tmp);
	if (!ret)
		*cfg = tmp;
out:
	json_decref(root);
	return ret;
}

int config_load_file(const char *path, struct kqos_config *cfg, char *err, size_t err_len)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f;
	int ret;

	f = fopen(path, "re");
	if (!f) {
		ret = -errno;
		snprintf(err, err_len, "%s: cannot open: %s", path, strerror(-ret));
		return ret;
	}
	text = malloc(1 << 20);
	if (!text) {
		fclose(f);
		return -ENOMEM;
	}
	len = fread(text, 1, (1 << 20) - 1, f);
	if (ferror(f) || !feof(f)) {
		ret = ferror(f) ? -EIO : -EFBIG;
		snprintf(err, err_len, "%s: cannot read: %s", path, strerror(-ret));
		goto out;
	}
	text[len] = '\0';
	ret = config_parse(path, text, cfg, err, err_len);
out:
	free(text);
	fclose(f);
	return ret;
}
