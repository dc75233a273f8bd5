// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "pod.h"
#include "units.h"

#define LABEL_QOS	   "koordinator.sh/qosClass"
#define LABEL_PRIO	   "koordinator.sh/priority-class"
#define ANN_RES_STATUS	   "scheduling.koordinator.sh/resource-status"
#define ANN_EXT_SPEC	   "node.koordinator.sh/extended-resource-spec"
#define ANN_RESCTRL	   "node.koordinator.sh/resctrl"
#define ANN_WAIT_TARGET	   "kqos.sh/wait-target"
#define ANN_EVICT_POLICY   "koordinator.sh/eviction-policy"
#define ANN_EVICT_PRIO	   "koordinator.sh/eviction-priority"
#define LABEL_EVICT_ON	   "koordinator.sh/eviction-enabled"
#define LABEL_KPRIO	   "koordinator.sh/priority"
#define ANN_CPU_BURST	   "koordinator.sh/cpuBurst"
#define WAIT_TARGET_MAX_NS (10ULL * 1000000000ULL) /* a wait of seconds is no target */
#define NAME_MAX_LEN	   253 /* DNS-1123 subdomain */
#define QTY_MAX_DIGITS	   19 /* significant digits: keeps the mantissa below 2^64 */
#define QTY_MAX_EXPONENT   40

/* ---- names and small validators ------------------------------------------------------------- */

static const char *const qos_names[] = {
	[POD_QOS_NONE] = "", [POD_QOS_LSE] = "LSE", [POD_QOS_LSR] = "LSR",
	[POD_QOS_LS] = "LS", [POD_QOS_BE] = "BE",   [POD_QOS_SYSTEM] = "SYSTEM",
};

static const char *const prio_names[] = {
	[POD_PRIO_NONE] = "",		[POD_PRIO_PROD] = "koord-prod",
	[POD_PRIO_MID] = "koord-mid",	[POD_PRIO_BATCH] = "koord-batch",
	[POD_PRIO_FREE] = "koord-free",
};

static const char *const k8s_qos_names[] = {
	[POD_K8S_QOS_BESTEFFORT] = "BestEffort",
	[POD_K8S_QOS_BURSTABLE] = "Burstable",
	[POD_K8S_QOS_GUARANTEED] = "Guaranteed",
};

static const char *const phase_names[] = {
	[POD_PHASE_UNKNOWN] = "Unknown", [POD_PHASE_PENDING] = "Pending",
	[POD_PHASE_RUNNING] = "Running", [POD_PHASE_SUCCEEDED] = "Succeeded",
	[POD_PHASE_FAILED] = "Failed",
};

static const char *const runtime_names[] = {
	[POD_RUNTIME_NONE] = "",
	[POD_RUNTIME_CONTAINERD] = "containerd",
	[POD_RUNTIME_CRIO] = "cri-o",
	[POD_RUNTIME_DOCKER] = "docker",
};

#define NAME_OF(tbl, v) ((unsigned int)(v) < sizeof(tbl) / sizeof(tbl[0]) ? tbl[v] : "")

const char *pod_qos_name(enum pod_qos qos)
{
	return NAME_OF(qos_names, qos);
}

const char *pod_prio_name(enum pod_prio prio)
{
	return NAME_OF(prio_names, prio);
}

const char *pod_k8s_qos_name(enum pod_k8s_qos qos)
{
	return NAME_OF(k8s_qos_names, qos);
}

const char *pod_phase_name(enum pod_phase phase)
{
	return NAME_OF(phase_names, phase);
}

const char *pod_runtime_name(enum pod_runtime runtime)
{
	return NAME_OF(runtime_names, runtime);
}

enum pod_qos pod_qos_from_name(const char *s)
{
	/* Exact match, as GetPodQoSClassByName: "be" or "" is no class at all. */
	for (unsigned int i = POD_QOS_LSE; s && i <= POD_QOS_SYSTEM; i++)
		if (!strcmp(s, qos_names[i]))
			return i;
	return POD_QOS_NONE;
}

enum pod_qos pod_qos_from_k8s(enum pod_k8s_qos k8s)
{
	switch (k8s) {
	case POD_K8S_QOS_GUARANTEED:
		return POD_QOS_LSR;
	case POD_K8S_QOS_BURSTABLE:
		return POD_QOS_LS;
	default:
		return POD_QOS_BE;
	}
}

enum pod_prio pod_prio_from_name(const char *s)
{
	for (unsigned int i = POD_PRIO_PROD; s && i <= POD_PRIO_FREE; i++)
		if (!strcmp(s, prio_names[i]))
			return i;
	return POD_PRIO_NONE;
}

enum pod_prio pod_prio_from_value(int64_t p)
{
	if (p >= 9000 && p <= 9999)
		return POD_PRIO_PROD;
	if (p >= 7000 && p <= 7999)
		return POD_PRIO_MID;
	if (p >= 5000 && p <= 5999)
		return POD_PRIO_BATCH;
	if (p >= 3000 && p <= 3999)
		return POD_PRIO_FREE;
	return POD_PRIO_NONE;
}

enum pod_prio pod_prio_from_qos(enum pod_qos qos)
{
	if (qos == POD_QOS_BE)
		return POD_PRIO_BATCH;
	if (qos == POD_QOS_NONE)
		return POD_PRIO_NONE;
	return POD_PRIO_PROD;
}

/* Row: priority (NONE unused), column: QoS (NONE unused); NULL marks an invalid pair. */
static const char *const pq_names[POD_PRIO_FREE + 1][POD_QOS_SYSTEM + 1] = {
	[POD_PRIO_PROD] = { [POD_QOS_LSE] = "koord-prod/LSE",
			    [POD_QOS_LSR] = "koord-prod/LSR",
			    [POD_QOS_LS] = "koord-prod/LS" },
	[POD_PRIO_MID] = { [POD_QOS_LS] = "koord-mid/LS", [POD_QOS_BE] = "koord-mid/BE" },
	[POD_PRIO_BATCH] = { [POD_QOS_LS] = "koord-batch/LS", [POD_QOS_BE] = "koord-batch/BE" },
	[POD_PRIO_FREE] = { [POD_QOS_LS] = "koord-free/LS", [POD_QOS_BE] = "koord-free/BE" },
};

struct pod_pq pod_pq_of(enum pod_prio prio_raw, enum pod_qos qos_raw)
{
	struct pod_pq pq = { .prio = prio_raw, .qos = qos_raw };

	/* SYSTEM stands alone, whatever the priority */
	if (qos_raw == POD_QOS_SYSTEM) {
		pq.prio = POD_PRIO_NONE;
		pq.is_valid = true;
		return pq;
	}
	if ((unsigned int)pq.prio > POD_PRIO_FREE || pq.prio == POD_PRIO_NONE)
		pq.prio = POD_PRIO_PROD;
	if ((unsigned int)pq.qos > POD_QOS_SYSTEM || pq.qos == POD_QOS_NONE)
		pq.qos = POD_QOS_LS;
	pq.is_valid = pq_names[pq.prio][pq.qos] != NULL;
	return pq;
}

struct pod_pq pod__pq(const struct pod *pod)
{
	return pod_pq_of(pod->is_static ? pod->prio : pod->prio_raw, pod->qos_raw);
}

const char *pod_pq_name(struct pod_pq pq)
{
	if (!pq.is_valid)
		return "";
	if (pq.qos == POD_QOS_SYSTEM)
		return "SYSTEM";
	return pq_names[pq.prio][pq.qos];
}

bool pod__is_mid_ls(const struct pod *pod)
{
	struct pod_pq pq;

	if (!pod)
		return false;
	pq = pod__pq(pod);
	return pq.is_valid && pq.prio == POD_PRIO_MID && pq.qos == POD_QOS_LS;
}

bool pod_uid_is_valid(const char *uid)
{
	size_t n = uid ? strlen(uid) : 0;

	if (!n || n > POD_UID_MAX)
		return false;
	return strspn(uid, "0123456789abcdefABCDEF-") == n;
}

bool pod_ctr_id_is_valid(const char *id)
{
	size_t n = id ? strlen(id) : 0;

	if (!n || n > POD_CTR_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)id[i]))
			return false;
	return true;
}

/* Object names (DNS subdomains, container names): also what appears in our log lines. */
static bool name_is_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > NAME_MAX_LEN)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '-' && s[i] != '.' && s[i] != '_')
			return false;
	return true;
}

/* Linux cpu-list syntax: "N" or "N-M" items separated by ','; "" is an empty set. */
static bool cpuset_is_valid(const char *s)
{
	const char *p = s;

	if (strlen(s) > POD_CPUSET_MAX)
		return false;
	while (*p) {
		unsigned long a, b;
		char *end;

		if (!isdigit((unsigned char)*p))
			return false;
		a = strtoul(p, &end, 10);
		b = a;
		p = end;
		if (*p == '-') {
			if (!isdigit((unsigned char)p[1]))
				return false;
			b = strtoul(p + 1, &end, 10);
			p = end;
		}
		if (a > b || b > 65535)
			return false;
		if (*p == ',' && p[1])
			p++;
		else if (*p)
			return false;
	}
	return true;
}

/* ---- quantities ----------------------------------------------------------------------------- */

struct qty_suffix {
	const char *s;
	int dexp;
	int bexp;
};

static const struct qty_suffix qty_suffixes[] = {
	{ "", 0, 0 },	 { "n", -9, 0 },  { "u", -6, 0 },  { "m", -3, 0 },
	{ "k", 3, 0 },	 { "M", 6, 0 },	  { "G", 9, 0 },   { "T", 12, 0 },
	{ "P", 15, 0 },	 { "E", 18, 0 },  { "Ki", 0, 10 }, { "Mi", 0, 20 },
	{ "Gi", 0, 30 }, { "Ti", 0, 40 }, { "Pi", 0, 50 }, { "Ei", 0, 60 },
};

static int qty_suffix_parse(const char *p, int *dexp, int *bexp)
{
	const char *q = *p ? p + 1 : p;

	if (*q == '+' || *q == '-')
		q++;
	if ((*p == 'e' || *p == 'E') && isdigit((unsigned char)*q)) {
		/* decimal exponent: "1e3", "5E-2"; "E" and "Ei" are exa and exbi */
		long v;
		char *end;

		errno = 0;
		v = strtol(p + 1, &end, 10);
		if (*end)
			return -EINVAL;
		if (errno || v > QTY_MAX_EXPONENT || v < -QTY_MAX_EXPONENT)
			return -ERANGE;
		*dexp += (int)v;
		return 0;
	}
	for (size_t i = 0; i < sizeof(qty_suffixes) / sizeof(qty_suffixes[0]); i++) {
		if (!strcmp(p, qty_suffixes[i].s)) {
			*dexp += qty_suffixes[i].dexp;
			*bexp = qty_suffixes[i].bexp;
			return 0;
		}
	}
	return -EINVAL;
}

int pod_quantity_parse(const char *s, unsigned int scale, int64_t *ret)
{
	unsigned __int128 v = 0;
	int dexp = 0, bexp = 0, sig = 0, digits = 0, err;
	bool neg = false;
	const char *p = s;

	if (!s || scale > 18)
		return -EINVAL;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	for (bool frac = false;; p++) {
		if (*p == '.' && !frac) {
			frac = true;
			continue;
		}
		if (!isdigit((unsigned char)*p))
			break;
		digits++;
		if (v || *p != '0')
			sig++;
		if (sig > QTY_MAX_DIGITS)
			return -ERANGE;
		v = v * 10 + (unsigned int)(*p - '0');
		if (frac)
			dexp--;
	}
	if (!digits)
		return -EINVAL;
	err = qty_suffix_parse(p, &dexp, &bexp);
	if (err)
		return err;
	if (neg && v)
		return -ERANGE;

	v <<= bexp; /* < 2^64 * 2^60: no overflow in 128 bits */
	dexp += (int)scale;
	for (; dexp > 0 && v; dexp--) {
		v *= 10;
		if (v > INT64_MAX)
			return -ERANGE;
	}
	if (dexp < 0 && v) {
		unsigned __int128 div = 1;

		if (dexp < -38) {
			v = 1; /* far below one unit: rounds up, as Quantity does */
		} else {
			while (dexp++ < 0)
				div *= 10;
			v = (v + div - 1) / div;
		}
	}
	if (v > INT64_MAX)
		return -ERANGE;
	*ret = (int64_t)v;
	return 0;
}

/* ---- resource lists ------------------------------------------------------------------------- */

struct res_key {
	const char *name;
	size_t off;
	unsigned int scale;
};

/* Current names first: a deprecated alias only fills a field the current name left unset. */
static const struct res_key res_keys[] = {
	{ "cpu", offsetof(struct pod_res, cpu_milli), 3 },
	{ "memory", offsetof(struct pod_res, memory_bytes), 0 },
	{ "kubernetes.io/batch-cpu", offsetof(struct pod_res, batch_cpu_milli), 0 },
	{ "kubernetes.io/batch-memory", offsetof(struct pod_res, batch_memory_bytes), 0 },
	{ "kubernetes.io/mid-cpu", offsetof(struct pod_res, mid_cpu_milli), 0 },
	{ "kubernetes.io/mid-memory", offsetof(struct pod_res, mid_memory_bytes), 0 },
	{ "koordinator.sh/batch-cpu", offsetof(struct pod_res, batch_cpu_milli), 0 },
	{ "koordinator.sh/batch-memory", offsetof(struct pod_res, batch_memory_bytes), 0 },
};

#define RES_FIELD(res, off) ((int64_t *)((char *)(res) + (off)))

void pod_res_init(struct pod_res *res)
{
	for (size_t i = 0; i < sizeof(res_keys) / sizeof(res_keys[0]); i++)
		*RES_FIELD(res, res_keys[i].off) = POD_RES_UNSET;
}

/*
 * A string member as C text; NULL when not a string, or when it holds a NUL (the list is loaded
 * with JSON_ALLOW_NUL), which would cut it short: "LSR\u0000x" is not the class LSR.
 */
static const char *str_value(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && strlen(s) == json_string_length(v) ? s : NULL;
}

/* Quantities are strings in Kubernetes JSON; plain integers are accepted for hand-written files. */
static int json_quantity(json_t *v, unsigned int scale, int64_t *ret)
{
	if (json_is_string(v))
		return str_value(v) ? pod_quantity_parse(str_value(v), scale, ret) : -EINVAL;
	if (json_is_integer(v)) {
		char buf[32];

		snprintf(buf, sizeof(buf), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return pod_quantity_parse(buf, scale, ret);
	}
	return -EINVAL;
}

/*
 * Parse the known names of a ResourceList object; unknown names (ephemeral-storage, GPUs) are
 * ignored. A bad quantity leaves its field unset; the first bad name goes to *ret_bad and the
 * result is -EINVAL, so that callers decide between "skip the field" and "reject the whole".
 */
static int parse_res(json_t *obj, struct pod_res *res, const char **ret_bad)
{
	int err = 0;

	pod_res_init(res);
	if (!obj || json_is_null(obj))
		return 0;
	if (!json_is_object(obj)) {
		*ret_bad = "(not an object)";
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(res_keys) / sizeof(res_keys[0]); i++) {
		int64_t *f = RES_FIELD(res, res_keys[i].off);
		json_t *v = json_object_get(obj, res_keys[i].name);
		int64_t q;

		if (!v || *f != POD_RES_UNSET)
			continue;
		if (json_quantity(v, res_keys[i].scale, &q)) {
			if (!err)
				*ret_bad = res_keys[i].name;
			err = -EINVAL;
			continue;
		}
		*f = q;
	}
	return err;
}

/* ---- JSON helpers --------------------------------------------------------------------------- */

/* Go's encoding/json matches field names exactly first, then case-insensitively. */
static json_t *ci_get(json_t *obj, const char *key)
{
	const char *k;
	json_t *v;

	if (!json_is_object(obj))
		return NULL;
	v = json_object_get(obj, key);
	if (v)
		return v;
	json_object_foreach(obj, k, v) {
		if (!strcasecmp(k, key))
			return v;
	}
	return NULL;
}

/* Optional string member: absent/null -> 0 and *ret NULL; present but not a string -> -EINVAL. */
static int opt_str(json_t *obj, const char *key, const char **ret)
{
	json_t *v = json_object_get(obj, key);

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	*ret = str_value(v);
	return *ret ? 0 : -EINVAL;
}

/* Optional object or array member: absent/null -> NULL; wrong type -> -EINVAL. */
static int opt_typed(json_t *obj, const char *key, json_type type, json_t **ret)
{
	json_t *v = json_object_get(obj, key);

	*ret = NULL;
	if (!v || json_is_null(v))
		return 0;
	if (json_typeof(v) != type)
		return -EINVAL;
	*ret = v;
	return 0;
}

/* Copy text for a log value inside "": no quotes, backslashes or control characters. */
static void scrub(char *dst, size_t size, const char *src)
{
	size_t i;

	for (i = 0; src && src[i] && i + 1 < size; i++) {
		unsigned char c = src[i];

		dst[i] = (c == '"' || c == '\\' || c < 0x20 || c == 0x7f) ? '\'' : c;
	}
	if (size)
		dst[i] = '\0';
}

/* ---- per-pod parsing ------------------------------------------------------------------------ */

struct pctx {
	const char *origin;
	size_t idx;
	const char *ns;
	const char *name;
	struct pod_list *list; /* collects this parse's issues */
	const struct pod_list *prev; /* issues already reported, or NULL */
};

static bool has_issue(const struct pod_list *list, const char *key)
{
	for (size_t i = 0; list && i < list->nr_issues; i++)
		if (!strcmp(list->issues[i], key))
			return true;
	return false;
}

static void add_issue(struct pod_list *list, const char *key)
{
	char **v, *k;

	if (has_issue(list, key))
		return;
	v = realloc(list->issues, (list->nr_issues + 1) * sizeof(*v));
	if (!v)
		return;
	list->issues = v;
	k = strdup(key);
	if (k)
		list->issues[list->nr_issues++] = k;
}

/*
 * One warning per problem while it persists: kubelet's body changes with every status
 * update, and a malformed annotation written by a user would otherwise repeat each poll. The
 * parse only records; the pod source logs them (podsrc_log_issues).
 */
static void pod_log(const struct pctx *c, const char *msg, const char *field, const char *why)
{
	char f[192], key[768], line[1024];
	struct pod_issue *v;

	scrub(f, sizeof(f), field);
	snprintf(key, sizeof(key), "%s pod=%s/%s field=\"%s\" err=\"%s\"", msg, c->ns ? c->ns : "?",
		 c->name ? c->name : "?", f, why);
	add_issue(c->list, key);
	snprintf(line, sizeof(line), "origin=\"%s\" item=%zu pod=%s/%s field=\"%s\" err=\"%s\"",
		 c->origin, c->idx, c->ns ? c->ns : "?", c->name ? c->name : "?", f, why);
	v = realloc(c->list->news, (c->list->nr_news + 1) * sizeof(*v));
	if (!v)
		return;
	c->list->news = v;
	v[c->list->nr_news].msg = msg;
	v[c->list->nr_news].repeated = has_issue(c->prev, key);
	v[c->list->nr_news].detail = strdup(line);
	if (v[c->list->nr_news].detail)
		c->list->nr_news++;
}

static int bad_pod(const struct pctx *c, const char *field, const char *why)
{
	pod_log(c, "skipping malformed pod", field, why);
	return -EINVAL;
}

static void free_strv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void pod_fini(struct pod *pod)
{
	if (!pod)
		return;
	free(pod->uid);
	free(pod->name);
	free(pod->namespace);
	for (size_t i = 0; i < pod->nr_containers; i++) {
		free(pod->containers[i].name);
		free(pod->containers[i].id);
	}
	free(pod->containers);
	free(pod->res_status.cpuset);
	free(pod->res_status.numa);
	for (size_t i = 0; i < pod->ext_spec.nr_containers; i++)
		free(pod->ext_spec.containers[i].name);
	free(pod->ext_spec.containers);
	free(pod->resctrl.llc_per_cache);
	free(pod->resctrl.mb_per_cache);
	free_strv(pod->cgroups, pod->nr_cgroups);
	memset(pod, 0, sizeof(*pod));
}

/* "containerd://<id>" -> runtime + id; "" means not started. */
static int parse_container_id(const char *s, struct pod_container *ctr)
{
	static const struct {
		const char *prefix;
		enum pod_runtime rt;
	} rts[] = {
		{ "containerd://", POD_RUNTIME_CONTAINERD },
		{ "cri-o://", POD_RUNTIME_CRIO },
		{ "docker://", POD_RUNTIME_DOCKER },
	};

	if (!*s)
		return 0;
	for (size_t i = 0; i < sizeof(rts) / sizeof(rts[0]); i++) {
		size_t n = strlen(rts[i].prefix);

		if (strncmp(s, rts[i].prefix, n))
			continue;
		if (!pod_ctr_id_is_valid(s + n))
			return -EINVAL;
		ctr->id = strdup(s + n);
		if (!ctr->id)
			return -ENOMEM;
		ctr->runtime = rts[i].rt;
		return 0;
	}
	return -EINVAL;
}

/* Whether any name (current or deprecated) for the field at @off is in @obj. */
static bool res_named(json_t *obj, size_t off)
{
	for (size_t i = 0; i < sizeof(res_keys) / sizeof(res_keys[0]); i++)
		if (res_keys[i].off == off && json_object_get(obj, res_keys[i].name))
			return true;
	return false;
}

/*
 * The API server defaults each absent request to its limit; hand-written lists may not have
 * done so. A request that is present but malformed stays unset: it was not absent.
 */
static void default_requests(struct pod_res *req, const struct pod_res *lim, json_t *req_obj)
{
	for (size_t i = 0; i < sizeof(res_keys) / sizeof(res_keys[0]); i++) {
		int64_t *r = RES_FIELD(req, res_keys[i].off);
		const int64_t *l = RES_FIELD((struct pod_res *)lim, res_keys[i].off);

		if (*r == POD_RES_UNSET && !res_named(req_obj, res_keys[i].off))
			*r = *l;
	}
}

static int parse_resources(const struct pctx *c, json_t *ctr, const char *cname,
			   struct pod_res *req, struct pod_res *lim, bool quiet)
{
	json_t *res = json_object_get(ctr, "resources");
	const char *bad = NULL;
	char field[160];

	pod_res_init(req);
	pod_res_init(lim);
	if (res && !json_is_null(res) && !json_is_object(res)) {
		if (quiet)
			return -EINVAL;
		snprintf(field, sizeof(field), "spec.containers[%s].resources", cname);
		return bad_pod(c, field, "not an object");
	}
	/* A bad quantity drops that one value: the rest of the pod is still worth having. */
	if (parse_res(json_object_get(res, "requests"), req, &bad) && !quiet) {
		snprintf(field, sizeof(field), "spec.containers[%s].resources.requests.%s", cname,
			 bad);
		pod_log(c, "ignoring malformed quantity", field, "not a valid quantity");
	}
	if (parse_res(json_object_get(res, "limits"), lim, &bad) && !quiet) {
		snprintf(field, sizeof(field), "spec.containers[%s].resources.limits.%s", cname,
			 bad);
		pod_log(c, "ignoring malformed quantity", field, "not a valid quantity");
	}
	default_requests(req, lim, json_object_get(res, "requests"));
	return 0;
}

static int parse_containers(const struct pctx *c, json_t *spec, struct pod *pod)
{
	json_t *arr, *ctr;
	size_t i;

	if (opt_typed(spec, "containers", JSON_ARRAY, &arr))
		return bad_pod(c, "spec.containers", "not an array");
	if (!arr || !json_array_size(arr))
		return 0;
	pod->containers = calloc(json_array_size(arr), sizeof(*pod->containers));
	if (!pod->containers)
		return -ENOMEM;
	json_array_foreach(arr, i, ctr) {
		struct pod_container *pc = &pod->containers[i];
		const char *name = NULL;
		int err;

		if (!json_is_object(ctr) || opt_str(ctr, "name", &name) || !name_is_valid(name))
			return bad_pod(c, "spec.containers[].name", "missing or invalid");
		for (size_t j = 0; j < i; j++)
			if (!strcmp(pod->containers[j].name, name))
				return bad_pod(c, "spec.containers[].name", "duplicate");
		pc->name = strdup(name);
		pod->nr_containers++;
		if (!pc->name)
			return -ENOMEM;
		err = parse_resources(c, ctr, name, &pc->requests, &pc->limits, false);
		if (err)
			return err;
	}
	return 0;
}

static int parse_statuses(const struct pctx *c, json_t *status, struct pod *pod)
{
	json_t *arr, *st;
	size_t i;

	if (opt_typed(status, "containerStatuses", JSON_ARRAY, &arr))
		return bad_pod(c, "status.containerStatuses", "not an array");
	json_array_foreach(arr, i, st) {
		const char *name = NULL, *cid = NULL;
		struct pod_container *pc;
		char field[160];
		int err;

		if (!json_is_object(st) || opt_str(st, "name", &name) || !name ||
		    opt_str(st, "containerID", &cid))
			return bad_pod(c, "status.containerStatuses[]", "missing name or bad type");
		pc = (struct pod_container *)pod__container(pod, name);
		if (!pc || !cid || pc->id)
			continue;
		err = parse_container_id(cid, pc);
		if (err == -ENOMEM)
			return err;
		if (err) {
			/* never becomes a path; the container stays, without an id */
			snprintf(field, sizeof(field), "status.containerStatuses[%s].containerID",
				 name);
			pod_log(c, "ignoring malformed container id", field,
				"want <containerd|cri-o|docker>://[0-9a-zA-Z]+");
		}
	}
	return 0;
}

/* kubelet's GetPodQOS (pkg/apis/core/helper/qos): only cpu and memory count; zero is unset. */
static enum pod_k8s_qos compute_k8s_qos(const struct pod_res *req, const struct pod_res *lim,
					size_t n)
{
	int64_t rsum[2] = { 0, 0 }, lsum[2] = { 0, 0 };
	bool has_r[2] = { false, false }, has_l[2] = { false, false };
	bool guaranteed = true;

	for (size_t i = 0; i < n; i++) {
		int64_t r[2] = { req[i].cpu_milli, req[i].memory_bytes };
		int64_t l[2] = { lim[i].cpu_milli, lim[i].memory_bytes };

		for (int k = 0; k < 2; k++) {
			/* sums saturate: absurd quantities must not overflow */
			if (r[k] > 0) {
				has_r[k] = true;
				if (__builtin_add_overflow(rsum[k], r[k], &rsum[k]))
					rsum[k] = INT64_MAX;
			}
			if (l[k] > 0) {
				has_l[k] = true;
				if (__builtin_add_overflow(lsum[k], l[k], &lsum[k]))
					lsum[k] = INT64_MAX;
			}
		}
		if (l[0] <= 0 || l[1] <= 0)
			guaranteed = false;
	}
	if (!has_r[0] && !has_r[1] && !has_l[0] && !has_l[1])
		return POD_K8S_QOS_BESTEFFORT;
	for (int k = 0; k < 2 && guaranteed; k++)
		if (has_r[k] != has_l[k] || rsum[k] != lsum[k])
			guaranteed = false;
	return guaranteed ? POD_K8S_QOS_GUARANTEED : POD_K8S_QOS_BURSTABLE;
}

static int resolve_k8s_qos(const struct pctx *c, json_t *spec, json_t *status, struct pod *pod)
{
	static const char *const keys[] = { "containers", "initContainers" };
	struct pod_res *req = NULL, *lim = NULL;
	const char *q = NULL;
	size_t n = 0, cap = 0;
	int err = 0;

	if (opt_str(status, "qosClass", &q))
		return bad_pod(c, "status.qosClass", "not a string");
	for (unsigned int i = 0; q && i < sizeof(k8s_qos_names) / sizeof(k8s_qos_names[0]); i++) {
		if (!strcmp(q, k8s_qos_names[i])) {
			pod->k8s_qos = i;
			return 0;
		}
	}
	/* No status yet: compute it from every container, init containers included. */
	for (int k = 0; k < 2; k++) {
		json_t *arr = json_object_get(spec, keys[k]);

		cap += json_is_array(arr) ? json_array_size(arr) : 0;
	}
	req = calloc(cap + 1, sizeof(*req));
	lim = calloc(cap + 1, sizeof(*lim));
	if (!req || !lim) {
		err = -ENOMEM;
		goto out;
	}
	for (int k = 0; k < 2; k++) {
		json_t *arr = json_object_get(spec, keys[k]), *ctr;
		size_t i;

		if (!json_is_array(arr))
			continue;
		json_array_foreach(arr, i, ctr) {
			if (!json_is_object(ctr))
				continue;
			/* containers were logged already; init containers only count for QoS */
			if (parse_resources(c, ctr, "", &req[n], &lim[n], true))
				continue;
			n++;
		}
	}
	pod->k8s_qos = compute_k8s_qos(req, lim, n);
out:
	free(req);
	free(lim);
	return err;
}

/* ---- annotations ---------------------------------------------------------------------------- */

typedef int (*ann_parse_fn)(json_t *doc, struct pod *pod, char *why, size_t whylen);

static int parse_int_in(json_t *v, long long lo, long long hi, long long *ret)
{
	if (!json_is_integer(v))
		return -EINVAL;
	*ret = json_integer_value(v);
	return (*ret < lo || *ret > hi) ? -EINVAL : 0;
}

static int res_status_parse(json_t *doc, struct pod *pod, char *why, size_t whylen)
{
	struct pod_resource_status *rs = &pod->res_status;
	json_t *cpuset = ci_get(doc, "cpuset"), *numa = ci_get(doc, "numaNodeResources"), *e;
	size_t i;

	if (cpuset && !json_is_null(cpuset)) {
		if (!str_value(cpuset) || !cpuset_is_valid(str_value(cpuset))) {
			snprintf(why, whylen, "cpuset: want a cpu list like 4-7,52-55");
			return -EINVAL;
		}
	}
	rs->cpuset = strdup(json_is_string(cpuset) ? json_string_value(cpuset) : "");
	if (!rs->cpuset)
		return -ENOMEM;
	if (!numa || json_is_null(numa))
		return 0;
	if (!json_is_array(numa) || json_array_size(numa) > POD_NUMA_MAX) {
		snprintf(why, whylen, "numaNodeResources: want an array of at most %d",
			 POD_NUMA_MAX);
		return -EINVAL;
	}
	rs->numa = calloc(json_array_size(numa) + 1, sizeof(*rs->numa));
	if (!rs->numa)
		return -ENOMEM;
	json_array_foreach(numa, i, e) {
		struct pod_numa_res *nr = &rs->numa[i];
		const char *bad = "";
		long long node;

		if (parse_int_in(ci_get(e, "node"), 0, INT32_MAX, &node)) {
			snprintf(why, whylen, "numaNodeResources[%zu].node: want an integer >= 0",
				 i);
			return -EINVAL;
		}
		nr->node = (int32_t)node;
		if (parse_res(ci_get(e, "resources"), &nr->resources, &bad)) {
			snprintf(why, whylen, "numaNodeResources[%zu].resources.%s: bad quantity",
				 i, bad);
			return -EINVAL;
		}
		rs->nr_numa++;
	}
	return 0;
}

static int ext_spec_parse(json_t *doc, struct pod *pod, char *why, size_t whylen)
{
	struct pod_ext_spec *es = &pod->ext_spec;
	json_t *ctrs = ci_get(doc, "containers"), *v;
	const char *name;

	if (!ctrs || json_is_null(ctrs))
		return 0;
	if (!json_is_object(ctrs)) {
		snprintf(why, whylen, "containers: want an object");
		return -EINVAL;
	}
	es->containers = calloc(json_object_size(ctrs) + 1, sizeof(*es->containers));
	if (!es->containers)
		return -ENOMEM;
	json_object_foreach(ctrs, name, v) {
		struct pod_ext_spec_ctr *ec = &es->containers[es->nr_containers];
		const char *bad = "";

		if (!name_is_valid(name) || !json_is_object(v)) {
			snprintf(why, whylen, "containers: want {\"<name>\":{requests,limits}}");
			return -EINVAL;
		}
		ec->name = strdup(name);
		if (!ec->name)
			return -ENOMEM;
		es->nr_containers++;
		if (parse_res(ci_get(v, "requests"), &ec->requests, &bad)) {
			snprintf(why, whylen, "containers.%s.requests.%s: bad quantity", name, bad);
			return -EINVAL;
		}
		if (parse_res(ci_get(v, "limits"), &ec->limits, &bad)) {
			snprintf(why, whylen, "containers.%s.limits.%s: bad quantity", name, bad);
			return -EINVAL;
		}
	}
	return 0;
}

static int parse_range(json_t *v, struct pod_llc_range *r)
{
	long long a, b;

	if (!json_is_array(v) || json_array_size(v) != 2 ||
	    parse_int_in(json_array_get(v, 0), 0, 100, &a) ||
	    parse_int_in(json_array_get(v, 1), 0, 100, &b) || a >= b)
		return -EINVAL;
	r->start_pct = (uint8_t)a;
	r->end_pct = (uint8_t)b;
	return 0;
}

static int parse_percent(json_t *v, struct pod_mb_pct *m)
{
	long long p;

	if (parse_int_in(v, 1, 100, &p))
		return -EINVAL;
	m->pct = (uint8_t)p;
	return 0;
}

static int per_cache_len(json_t *arr, size_t *ret)
{
	*ret = 0;
	if (!arr || json_is_null(arr))
		return 0;
	if (!json_is_array(arr) || json_array_size(arr) > POD_RESCTRL_MAX)
		return -EINVAL;
	*ret = json_array_size(arr);
	return 0;
}

static int ann_rdt_llc_parse(json_t *llc, struct pod_resctrl *rc, char *why, size_t whylen)
{
	json_t *sch = ci_get(llc, "schemata"), *per = ci_get(llc, "schemataPerCache"), *e;
	json_t *range = ci_get(sch, "range");
	long long id;
	size_t i, n;

	if (!json_is_object(llc) || (sch && !json_is_null(sch) && !json_is_object(sch))) {
		snprintf(why, whylen, "llc: want {schemata,schemataPerCache}");
		return -EINVAL;
	}
	if (range && !json_is_null(range)) {
		if (parse_range(range, &rc->llc)) {
			snprintf(why, whylen,
				 "llc.schemata.range: want [start,end], 0<=start<end<=100");
			return -EINVAL;
		}
		rc->llc.cache_id = -1;
		rc->has_llc = true;
	}
	if (per_cache_len(per, &n)) {
		snprintf(why, whylen, "llc.schemataPerCache: want an array of at most %d",
			 POD_RESCTRL_MAX);
		return -EINVAL;
	}
	rc->llc_per_cache = calloc(n + 1, sizeof(*rc->llc_per_cache));
	if (!rc->llc_per_cache)
		return -ENOMEM;
	json_array_foreach(per, i, e) {
		struct pod_llc_range *r = &rc->llc_per_cache[i];

		if (parse_int_in(ci_get(e, "cacheID"), 0, INT32_MAX, &id) ||
		    parse_range(ci_get(e, "range"), r)) {
			snprintf(why, whylen,
				 "llc.schemataPerCache[%zu]: want {cacheID>=0,range:[start,end]}",
				 i);
			return -EINVAL;
		}
		r->cache_id = (int32_t)id;
		rc->nr_llc_per_cache++;
	}
	return 0;
}

static int ann_rdt_mb_parse(json_t *mb, struct pod_resctrl *rc, char *why, size_t whylen)
{
	json_t *sch = ci_get(mb, "schemata"), *per = ci_get(mb, "schemataPerCache"), *e;
	json_t *pct = ci_get(sch, "percent");
	long long id;
	size_t i, n;

	if (!json_is_object(mb) || (sch && !json_is_null(sch) && !json_is_object(sch))) {
		snprintf(why, whylen, "mb: want {schemata,schemataPerCache}");
		return -EINVAL;
	}
	if (pct && !json_is_null(pct)) {
		if (parse_percent(pct, &rc->mb)) {
			snprintf(why, whylen, "mb.schemata.percent: want 1..100");
			return -EINVAL;
		}
		rc->mb.cache_id = -1;
		rc->has_mb = true;
	}
	if (per_cache_len(per, &n)) {
		snprintf(why, whylen, "mb.schemataPerCache: want an array of at most %d",
			 POD_RESCTRL_MAX);
		return -EINVAL;
	}
	rc->mb_per_cache = calloc(n + 1, sizeof(*rc->mb_per_cache));
	if (!rc->mb_per_cache)
		return -ENOMEM;
	json_array_foreach(per, i, e) {
		struct pod_mb_pct *m = &rc->mb_per_cache[i];

		if (parse_int_in(ci_get(e, "cacheID"), 0, INT32_MAX, &id) ||
		    parse_percent(ci_get(e, "percent"), m)) {
			snprintf(why, whylen, "mb.schemataPerCache[%zu]: want {cacheID>=0,percent}",
				 i);
			return -EINVAL;
		}
		m->cache_id = (int32_t)id;
		rc->nr_mb_per_cache++;
	}
	return 0;
}

static int ann_rdt_parse(json_t *doc, struct pod *pod, char *why, size_t whylen)
{
	json_t *llc = ci_get(doc, "llc"), *mb = ci_get(doc, "mb");
	int err;

	if (llc && !json_is_null(llc)) {
		err = ann_rdt_llc_parse(llc, &pod->resctrl, why, whylen);
		if (err)
			return err;
	}
	if (mb && !json_is_null(mb))
		return ann_rdt_mb_parse(mb, &pod->resctrl, why, whylen);
	return 0;
}

static void res_status_clear(struct pod *pod)
{
	free(pod->res_status.cpuset);
	free(pod->res_status.numa);
	memset(&pod->res_status, 0, sizeof(pod->res_status));
}

static void ext_spec_clear(struct pod *pod)
{
	for (size_t i = 0; i < pod->ext_spec.nr_containers; i++)
		free(pod->ext_spec.containers[i].name);
	free(pod->ext_spec.containers);
	memset(&pod->ext_spec, 0, sizeof(pod->ext_spec));
}

static void ann_rdt_clear(struct pod *pod)
{
	free(pod->resctrl.llc_per_cache);
	free(pod->resctrl.mb_per_cache);
	memset(&pod->resctrl, 0, sizeof(pod->resctrl));
}

static const char *const burst_policies[] = { "none", "cpuBurstOnly", "cfsQuotaBurstOnly", "auto",
					      NULL };

int pod_burst_policy_parse(const char *s, enum pod_burst_policy *ret)
{
	for (int i = 0; burst_policies[i]; i++) {
		if (!strcmp(s, burst_policies[i])) {
			*ret = (enum pod_burst_policy)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *pod_burst_policy_name(enum pod_burst_policy p)
{
	return (unsigned int)p <= POD_BURST_AUTO ? burst_policies[p] : "?";
}

/* One optional int64 field of a CPUBurstConfig; a wrong type fails like Go's decoder. */
static int burst_field(json_t *doc, const char *key, long long lo, int64_t *ret, char *why,
		       size_t whylen)
{
	json_t *v = ci_get(doc, key);
	long long n;

	if (!v || json_is_null(v))
		return 0;
	if (parse_int_in(v, lo, INT64_MAX, &n)) {
		snprintf(why, whylen, "%s: want an integer >= %lld", key, lo);
		return -EINVAL;
	}
	*ret = n;
	return 0;
}

static int ann_burst_parse(json_t *doc, struct pod *pod, char *why, size_t whylen)
{
	struct pod_cpu_burst *b = &pod->cpu_burst;
	json_t *p = ci_get(doc, "policy");
	enum pod_burst_policy pol;

	b->policy = b->cpu_burst_pct = b->cfs_quota_burst_pct = POD_BURST_UNSET;
	b->cfs_quota_burst_period_s = POD_BURST_UNSET;
	if (p && !json_is_null(p) && !json_is_string(p)) {
		snprintf(why, whylen, "policy: want a string");
		return -EINVAL;
	}
	/* "" is omitempty's unset; an unknown name enables neither burst, as in koordlet */
	if (p && json_is_string(p) && *json_string_value(p))
		b->policy = pod_burst_policy_parse(json_string_value(p), &pol) ? POD_BURST_NONE :
										 pol;
	if (burst_field(doc, "cpuBurstPercent", 0, &b->cpu_burst_pct, why, whylen) ||
	    burst_field(doc, "cfsQuotaBurstPercent", 0, &b->cfs_quota_burst_pct, why, whylen) ||
	    burst_field(doc, "cfsQuotaBurstPeriodSeconds", -1, &b->cfs_quota_burst_period_s, why,
			whylen))
		return -EINVAL;
	return 0;
}

static void ann_burst_clear(struct pod *pod)
{
	memset(&pod->cpu_burst, 0, sizeof(pod->cpu_burst));
}

struct ann_desc {
	const char *key;
	ann_parse_fn parse;
	void (*clear)(struct pod *pod);
	size_t state_off;
};

static const struct ann_desc anns[] = {
	{ ANN_RES_STATUS, res_status_parse, res_status_clear,
	  offsetof(struct pod, res_status.state) },
	{ ANN_EXT_SPEC, ext_spec_parse, ext_spec_clear, offsetof(struct pod, ext_spec.state) },
	{ ANN_RESCTRL, ann_rdt_parse, ann_rdt_clear, offsetof(struct pod, resctrl.state) },
	{ ANN_CPU_BURST, ann_burst_parse, ann_burst_clear, offsetof(struct pod, cpu_burst.state) },
};

/* One annotation value: 0, -EINVAL with the reason in @why, or -ENOMEM. */
static int parse_annotation(const struct ann_desc *a, json_t *v, struct pod *pod, char *why,
			    size_t whylen)
{
	char tmp[128];
	json_error_t jerr;
	json_t *doc;
	int err;

	if (!json_is_string(v)) {
		snprintf(why, whylen, "not a string");
		return -EINVAL;
	}
	/* all of its bytes: a NUL inside is an error here, not the end of the text */
	doc = json_loadb(json_string_value(v), json_string_length(v), 0, &jerr);
	if (!doc) {
		scrub(tmp, sizeof(tmp), jerr.text);
		snprintf(why, whylen, "json column %d: %s", jerr.column, tmp);
		return -EINVAL;
	}
	if (json_is_object(doc)) {
		err = a->parse(doc, pod, why, whylen);
	} else {
		snprintf(why, whylen, "not a JSON object");
		err = -EINVAL;
	}
	json_decref(doc);
	return err;
}

/* A bad annotation never costs the pod: it is cleared, marked invalid and logged once. */
static int parse_annotations(const struct pctx *c, json_t *annotations, struct pod *pod)
{
	for (size_t i = 0; i < sizeof(anns) / sizeof(anns[0]); i++) {
		const struct ann_desc *a = &anns[i];
		enum pod_ann *state = (enum pod_ann *)((char *)pod + a->state_off);
		json_t *v = json_object_get(annotations, a->key);
		char why[320] = "", tmp[128];
		int err;

		if (!v)
			continue;
		err = parse_annotation(a, v, pod, why, sizeof(why));
		if (err == -ENOMEM)
			return err;
		if (!err) {
			*state = POD_ANN_OK;
			continue;
		}
		a->clear(pod);
		*state = POD_ANN_INVALID;
		scrub(tmp, sizeof(tmp), why);
		pod_log(c, "ignoring malformed pod annotation", a->key, tmp);
	}
	return 0;
}

/* kqos.sh/wait-target: a duration ("2ms"), not JSON like koordinator's. */
static void parse_wait_target(const struct pctx *c, json_t *annotations, struct pod *pod)
{
	json_t *v = json_object_get(annotations, ANN_WAIT_TARGET);
	__u64 ns;

	if (!v)
		return;
	if (!json_is_string(v) || parse_duration(json_string_value(v), &ns) || !ns ||
	    ns > WAIT_TARGET_MAX_NS) {
		pod_log(c, "ignoring malformed pod annotation", ANN_WAIT_TARGET,
			"not a duration in (0, 10s], e.g. \"2ms\"");
		return;
	}
	pod->wait_target_ns = ns;
}

/* ---- eviction ------------------------------------------------------------------------------ */

static const char *const evictor_names[POD_EVICT_NR] = { "BECPUEvict", "CPUEvict", "BEMemoryEvict",
							 "MemoryEvict" };

const char *pod_evictor_name(enum pod_evictor s)
{
	return (unsigned int)s < POD_EVICT_NR ? evictor_names[s] : "?";
}

bool pod__evict_allowed(const struct pod *pod, enum pod_evictor s)
{
	if (pod->evict.policy == POD_ANN_ABSENT)
		return true;
	return pod->evict.policy == POD_ANN_OK && (pod->evict.allowed & (1u << s));
}

int32_t pod__priority_value(const struct pod *pod)
{
	/* apis/extension GetPodPriorityValueWithDefault: 0 counts as unset */
	static const int32_t defaults[] = { [POD_PRIO_NONE] = 0,
					    [POD_PRIO_PROD] = 9500,
					    [POD_PRIO_MID] = 7500,
					    [POD_PRIO_BATCH] = 5500,
					    [POD_PRIO_FREE] = 3500 };

	if (pod->has_priority && pod->priority)
		return pod->priority;
	return (unsigned int)pod->prio <= POD_PRIO_FREE ? defaults[pod->prio] : 0;
}

/* A JSON list of strategy names; names kqos does not know allow nothing (as in koordinator). */
static void parse_evict_policy(const struct pctx *c, const char *text, struct pod_evict *ev)
{
	json_t *root = json_loads(text, JSON_DECODE_ANY, NULL), *v;
	size_t i;

	ev->policy = POD_ANN_INVALID;
	if (!json_is_array(root)) {
		pod_log(c, "pod never evicted: malformed annotation", ANN_EVICT_POLICY,
			"not a JSON list of strategy names");
		json_decref(root);
		return;
	}
	json_array_foreach(root, i, v) {
		for (unsigned int s = 0; json_is_string(v) && s < POD_EVICT_NR; s++)
			if (!strcmp(json_string_value(v), evictor_names[s]))
				ev->allowed |= 1u << s;
	}
	ev->policy = POD_ANN_OK;
	json_decref(root);
}

static void parse_eviction(const struct pctx *c, json_t *labels, json_t *annotations,
			   struct pod *pod)
{
	const char *pol = json_string_value(json_object_get(annotations, ANN_EVICT_POLICY));
	const char *prio = json_string_value(json_object_get(annotations, ANN_EVICT_PRIO));
	const char *en = json_string_value(json_object_get(labels, LABEL_EVICT_ON));
	const char *lp = json_string_value(json_object_get(labels, LABEL_KPRIO));
	long long v;
	char *end;

	if (pol)
		parse_evict_policy(c, pol, &pod->evict);
	if (prio) {
		errno = 0;
		v = strtoll(prio, &end, 10);
		if (errno || end == prio || *end || v < INT32_MIN || v > INT32_MAX)
			pod_log(c, "ignoring malformed pod annotation", ANN_EVICT_PRIO,
				"not an int32; 0 is used");
		else
			pod->evict.priority = (int32_t)v;
	}
	pod->evict.enabled = en && !strcmp(en, "true");
	if (lp) {
		errno = 0;
		v = strtoll(lp, &end, 10);
		if (!errno && end != lp && !*end) {
			pod->evict.has_label_priority = true;
			pod->evict.label_priority = v;
		}
	}
}

/* ---- classes -------------------------------------------------------------------------------- */

static void resolve_classes(const struct pctx *c, json_t *labels, struct pod *pod)
{
	struct pod_pq pq;
	char pair[64];

	json_t *q = json_object_get(labels, LABEL_QOS);
	json_t *p = json_object_get(labels, LABEL_PRIO);

	pod->qos_raw = pod_qos_from_name(str_value(q));
	pod->qos = pod->qos_raw != POD_QOS_NONE ? pod->qos_raw : pod_qos_from_k8s(pod->k8s_qos);
	/* A present priority label decides alone, even when its value is unknown. */
	if (p)
		pod->prio_raw = pod_prio_from_name(str_value(p));
	else if (pod->has_priority)
		pod->prio_raw = pod_prio_from_value(pod->priority);
	else
		pod->prio_raw = POD_PRIO_NONE;
	pod->prio = pod->prio_raw != POD_PRIO_NONE ? pod->prio_raw : pod_prio_from_qos(pod->qos);
	/* an invalid pair is named once (while it persists): strategies then go by QoS alone */
	pq = pod__pq(pod);
	if (!pq.is_valid) {
		snprintf(pair, sizeof(pair), "%s/%s", pod_prio_name(pq.prio), pod_qos_name(pq.qos));
		pod_log(c, "invalid priority+QoS class", "priority-class/qosClass", pair);
	}
}

static enum pod_phase phase_from_name(const char *s)
{
	for (unsigned int i = POD_PHASE_PENDING; s && i <= POD_PHASE_FAILED; i++)
		if (!strcmp(s, phase_names[i]))
			return i;
	return POD_PHASE_UNKNOWN;
}

static int strings_only(json_t *obj)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v) {
		if (!json_is_string(v))
			return -EINVAL;
	}
	return 0;
}

static int parse_identity(struct pctx *c, json_t *meta, struct pod *pod)
{
	const char *name, *ns, *uid;

	if (!json_is_object(meta))
		return bad_pod(c, "metadata", "missing");
	if (opt_str(meta, "name", &name) || !name_is_valid(name))
		return bad_pod(c, "metadata.name", "missing or not a DNS name");
	if (opt_str(meta, "namespace", &ns) || (ns && !name_is_valid(ns)))
		return bad_pod(c, "metadata.namespace", "not a DNS name");
	c->name = name;
	c->ns = ns ? ns : "default";
	if (opt_str(meta, "uid", &uid) || !pod_uid_is_valid(uid))
		return bad_pod(c, "metadata.uid", "missing or not [0-9a-fA-F-]{1,64}");
	pod->uid = strdup(uid);
	pod->name = strdup(name);
	pod->namespace = strdup(c->ns);
	if (!pod->uid || !pod->name || !pod->namespace)
		return -ENOMEM;
	return 0;
}

static int parse_priority(const struct pctx *c, json_t *spec, struct pod *pod)
{
	json_t *v = json_object_get(spec, "priority");
	long long p;

	if (!v || json_is_null(v))
		return 0;
	if (parse_int_in(v, INT32_MIN, INT32_MAX, &p))
		return bad_pod(c, "spec.priority", "not an int32");
	pod->has_priority = true;
	pod->priority = (int32_t)p;
	return 0;
}

static int parse_pod(struct pctx *c, json_t *item, struct pod *pod)
{
	json_t *meta, *spec, *status, *labels, *annotations;
	const char *phase;
	int err;

	if (!json_is_object(item))
		return bad_pod(c, "items[]", "not an object");
	meta = json_object_get(item, "metadata");
	err = parse_identity(c, meta, pod);
	if (err)
		return err;
	if (opt_typed(meta, "labels", JSON_OBJECT, &labels) || strings_only(labels))
		return bad_pod(c, "metadata.labels", "want an object of strings");
	if (opt_typed(meta, "annotations", JSON_OBJECT, &annotations) || strings_only(annotations))
		return bad_pod(c, "metadata.annotations", "want an object of strings");
	if (opt_typed(item, "spec", JSON_OBJECT, &spec))
		return bad_pod(c, "spec", "not an object");
	if (opt_typed(item, "status", JSON_OBJECT, &status))
		return bad_pod(c, "status", "not an object");
	if (opt_str(status, "phase", &phase))
		return bad_pod(c, "status.phase", "not a string");
	pod->phase = phase_from_name(phase);
	pod->is_active = pod->phase != POD_PHASE_SUCCEEDED && pod->phase != POD_PHASE_FAILED;

	err = parse_priority(c, spec, pod);
	if (!err)
		err = parse_containers(c, spec, pod);
	if (!err)
		err = parse_statuses(c, status, pod);
	if (!err)
		err = resolve_k8s_qos(c, spec, status, pod);
	if (!err)
		err = parse_annotations(c, annotations, pod);
	if (err)
		return err;
	parse_wait_target(c, annotations, pod);
	parse_eviction(c, labels, annotations, pod);
	resolve_classes(c, labels, pod);
	return 0;
}

/* ---- the list ------------------------------------------------------------------------------- */

struct pod_list *pod_list__new(void)
{
	struct pod_list *list = calloc(1, sizeof(*list));

	if (list)
		list->refs = 1;
	return list;
}

struct pod_list *pod_list__ref(struct pod_list *list)
{
	if (list)
		list->refs++;
	return list;
}

void pod_list__put(struct pod_list *list)
{
	if (!list || --list->refs)
		return;
	for (size_t i = 0; i < list->nr_pods; i++)
		pod_fini(&list->pods[i]);
	free(list->pods);
	for (size_t i = 0; i < list->nr_issues; i++)
		free(list->issues[i]);
	free(list->issues);
	for (size_t i = 0; i < list->nr_news; i++)
		free(list->news[i].detail);
	free(list->news);
	free(list);
}

const struct pod *pod_list__find(const struct pod_list *list, const char *uid)
{
	for (size_t i = 0; list && uid && i < list->nr_pods; i++)
		if (!strcmp(list->pods[i].uid, uid))
			return &list->pods[i];
	return NULL;
}

const struct pod_container *pod__container(const struct pod *pod, const char *name)
{
	for (size_t i = 0; pod && name && i < pod->nr_containers; i++)
		if (!strcmp(pod->containers[i].name, name))
			return &pod->containers[i];
	return NULL;
}

const struct pod_ext_spec_ctr *pod__ext_spec(const struct pod *pod, const char *container)
{
	if (!pod || !container || pod->ext_spec.state != POD_ANN_OK)
		return NULL;
	for (size_t i = 0; i < pod->ext_spec.nr_containers; i++)
		if (!strcmp(pod->ext_spec.containers[i].name, container))
			return &pod->ext_spec.containers[i];
	return NULL;
}

static void res_fill(struct pod_res *dst, const struct pod_res *spec, const struct pod_res *ext)
{
	*dst = *spec;
	if (!ext)
		return;
#define FILL(f) (dst->f = dst->f == POD_RES_UNSET ? ext->f : dst->f)
	FILL(cpu_milli);
	FILL(memory_bytes);
	FILL(batch_cpu_milli);
	FILL(batch_memory_bytes);
	FILL(mid_cpu_milli);
	FILL(mid_memory_bytes);
#undef FILL
}

void pod__ctr_res(const struct pod *pod, const struct pod_container *c, struct pod_res *ret_req,
		  struct pod_res *ret_lim)
{
	const struct pod_ext_spec_ctr *ext = pod__ext_spec(pod, c->name);

	res_fill(ret_req, &c->requests, ext ? &ext->requests : NULL);
	res_fill(ret_lim, &c->limits, ext ? &ext->limits : NULL);
}

int64_t pod__ext_cpu_request(const struct pod *pod)
{
	struct pod_res req, lim;
	int64_t sum = 0;

	for (size_t i = 0; i < pod->nr_containers; i++) {
		pod__ctr_res(pod, &pod->containers[i], &req, &lim);
		sum += req.batch_cpu_milli > 0 ? req.batch_cpu_milli : 0;
		sum += req.mid_cpu_milli > 0 ? req.mid_cpu_milli : 0;
	}
	return sum;
}

bool pod__ctr_tier(const struct pod *pod, const struct pod_container *c, enum pod_tier tier,
		   struct pod_tier_res *ret)
{
	struct pod_res req, lim;
	bool mid = tier == POD_TIER_MID;

	pod__ctr_res(pod, c, &req, &lim);
	ret->req_cpu_milli = mid ? req.mid_cpu_milli : req.batch_cpu_milli;
	ret->lim_cpu_milli = mid ? lim.mid_cpu_milli : lim.batch_cpu_milli;
	ret->req_memory_bytes = mid ? req.mid_memory_bytes : req.batch_memory_bytes;
	ret->lim_memory_bytes = mid ? lim.mid_memory_bytes : lim.batch_memory_bytes;
	return ret->req_cpu_milli != POD_RES_UNSET || ret->lim_cpu_milli != POD_RES_UNSET ||
	       ret->req_memory_bytes != POD_RES_UNSET || ret->lim_memory_bytes != POD_RES_UNSET;
}

/* Σ of the positive values into *sum; *all stays true while every value is positive. */
static void add_positive(int64_t v, int64_t *sum, bool *all)
{
	*all = *all && v > 0;
	*sum += v > 0 ? v : 0;
}

bool pod__tier_sum(const struct pod *pod, enum pod_tier tier, struct pod_tier_res *ret)
{
	bool any = false, lim_all = true, mem_all = true, dummy = true;
	struct pod_tier_res c;

	*ret = (struct pod_tier_res){ 0 };
	for (size_t i = 0; i < pod->nr_containers; i++) {
		any = pod__ctr_tier(pod, &pod->containers[i], tier, &c) || any;
		add_positive(c.req_cpu_milli, &ret->req_cpu_milli, &dummy);
		add_positive(c.req_memory_bytes, &ret->req_memory_bytes, &dummy);
		add_positive(c.lim_cpu_milli, &ret->lim_cpu_milli, &lim_all);
		add_positive(c.lim_memory_bytes, &ret->lim_memory_bytes, &mem_all);
	}
	if (!lim_all)
		ret->lim_cpu_milli = POD_RES_UNSET;
	if (!mem_all)
		ret->lim_memory_bytes = POD_RES_UNSET;
	return any;
}

enum pod_qos pod__reconciler_qos(const struct pod *pod)
{
	if (pod->qos_raw == POD_QOS_NONE && pod->res_status.state == POD_ANN_OK &&
	    pod->res_status.cpuset && pod->res_status.cpuset[0])
		return POD_QOS_LSR;
	return pod->qos_raw;
}

static void set_error(struct pod_parse_error *e, int line, int column, const char *text)
{
	if (!e)
		return;
	e->line = line > 0 ? line : 0;
	e->column = column > 0 ? column : 0;
	scrub(e->text, sizeof(e->text), text);
}

static int parse_items(json_t *items, const char *origin, const struct pod_list *prev,
		       struct pod_list *list)
{
	json_t *item;
	size_t i;
	int err;

	list->pods = calloc(json_array_size(items) + 1, sizeof(*list->pods));
	if (!list->pods)
		return -ENOMEM;
	json_array_foreach(items, i, item) {
		struct pctx c = { .origin = origin, .idx = i, .list = list, .prev = prev };
		struct pod *pod = &list->pods[list->nr_pods];

		err = parse_pod(&c, item, pod);
		if (!err && pod_list__find(list, pod->uid))
			err = bad_pod(&c, "metadata.uid", "duplicate");
		if (err) {
			pod_fini(pod);
			if (err == -ENOMEM)
				return err;
			list->nr_skipped++;
			continue;
		}
		list->nr_pods++;
	}
	return 0;
}

int pod_list__parse(const char *buf, size_t len, const char *origin, const struct pod_list *prev,
		    struct pod_list **ret_list, struct pod_parse_error *ret_err)
{
	return pod_list__parse_max(buf, len, 0, origin, prev, ret_list, ret_err);
}

int pod_list__parse_max(const char *buf, size_t len, size_t max_pods, const char *origin,
			const struct pod_list *prev, struct pod_list **ret_list,
			struct pod_parse_error *ret_err)
{
	char msg[96];
	struct pod_list *list = NULL;
	const char *kind = NULL;
	json_error_t jerr;
	json_t *doc, *items = NULL;
	int err;

	/*
	 * Kubernetes does not restrict annotation values, so "\u0000" in one pod's annotation must
	 * cost that annotation only, not the whole list; str_value() rejects such strings.
	 */
	doc = json_loadb(buf, len, JSON_ALLOW_NUL, &jerr);
	if (!doc) {
		set_error(ret_err, jerr.line, jerr.column, jerr.text);
		return -EINVAL;
	}
	if (!json_is_object(doc) || opt_str(doc, "kind", &kind) ||
	    (kind && strcmp(kind, "PodList")) || opt_typed(doc, "items", JSON_ARRAY, &items)) {
		set_error(ret_err, 0, 0,
			  "not a PodList: want {\"kind\":\"PodList\",\"items\":[...]}");
		err = -EINVAL;
		goto out;
	}
	if (max_pods && json_array_size(items) > max_pods) {
		snprintf(msg, sizeof(msg), "%zu items, more than the limit of %zu",
			 json_array_size(items), max_pods);
		set_error(ret_err, 0, 0, msg);
		err = -E2BIG;
		goto out;
	}
	list = pod_list__new();
	if (!list) {
		err = -ENOMEM;
		goto out;
	}
	err = parse_items(items, origin ? origin : "-", prev, list);
	if (err)
		goto out;
	*ret_list = list;
	list = NULL;
out:
	pod_list__put(list);
	json_decref(doc);
	return err;
}
