// SPDX-License-Identifier: GPL-2.0
/* NodeSLO and Node from the API server: in-cluster client, pure parsers, the overlay. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cpulist.h"
#include "kube_client.h"
#include "log.h"
#include "nodeslo.h"
#include "pod.h"
#include "slo.h"
#include "units.h"

#define NODESLO_PATH	"/apis/slo.koordinator.sh/v1alpha1/nodeslos/"
#define NODE_PATH	"/api/v1/nodes/"
#define ANN_RATIO	"node.koordinator.sh/cpu-normalization-ratio"
#define ANN_RESERVATION "node.koordinator.sh/reservation"
#define BODY_MAX	(4u << 20) /* a NodeSLO or a Node is a few KiB */
#define WHY_LEN		256
#define DEF_INTERVAL_MS 10000
#define DEF_TIMEOUT_MS	3000
#define NS_PER_MS	1000000ULL

/* --- options ------------------------------------------------------------------------------- */

static int opt_fail(char *err, size_t len, const char *key, const char *what)
{
	snprintf(err, len, "nodeSLO.%s: %s", key, what);
	return -EINVAL;
}

static int opt_str(json_t *o, const char *key, char *dst, size_t size, char *err, size_t len)
{
	json_t *j = json_object_get(o, key);

	if (!j)
		return 0;
	if (!json_is_string(j) || strlen(json_string_value(j)) >= size)
		return opt_fail(err, len, key, "not a string or too long");
	snprintf(dst, size, "%s", json_string_value(j));
	return 0;
}

static int opt_ms(json_t *o, const char *key, uint64_t min_ns, uint32_t *dst, char *err, size_t len)
{
	json_t *j = json_object_get(o, key);
	__u64 ns;

	if (!j)
		return 0;
	if (!json_is_string(j) || parse_duration(json_string_value(j), &ns) || ns < min_ns ||
	    ns > 3600000000000ULL)
		return opt_fail(err, len, key, "not a duration in [min, 1h] such as \"10s\"");
	*dst = (uint32_t)(ns / NS_PER_MS);
	return 0;
}

static int parse_apiserver(json_t *a, struct nodeslo_opts *o, char *err, size_t len)
{
	static const char *const known[] = { "url",	 "nodeName", "tokenFile",	   "caFile",
					     "interval", "timeout",  "insecureSkipVerify", NULL };
	const char *key;
	json_t *v;
	int r;

	json_object_foreach(a, key, v) {
		bool ok = false;

		for (int i = 0; known[i]; i++)
			ok = ok || !strcmp(key, known[i]);
		if (!ok)
			return opt_fail(err, len, "apiserver", "unknown key");
	}
	v = json_object_get(a, "insecureSkipVerify");
	if (v && !json_is_boolean(v))
		return opt_fail(err, len, "apiserver.insecureSkipVerify", "not a boolean");
	o->insecure = v && json_is_true(v);
	if ((r = opt_str(a, "url", o->url, sizeof(o->url), err, len)) ||
	    (r = opt_str(a, "nodeName", o->node_name, sizeof(o->node_name), err, len)) ||
	    (r = opt_str(a, "tokenFile", o->token_path, sizeof(o->token_path), err, len)) ||
	    (r = opt_str(a, "caFile", o->ca_path, sizeof(o->ca_path), err, len)) ||
	    (r = opt_ms(a, "interval", 100 * NS_PER_MS, &o->interval_ms, err, len)))
		return r;
	return opt_ms(a, "timeout", 10 * NS_PER_MS, &o->timeout_ms, err, len);
}

int nodeslo_opts_parse(const char *node_slo_json, struct nodeslo_opts *ret, char *err,
		       size_t err_len)
{
	struct nodeslo_opts o;
	json_t *root = NULL, *src, *a;
	int r = 0;

	/* compared with memcmp on reload: no stray padding bytes */
	memset(&o, 0, sizeof(o));
	o.interval_ms = DEF_INTERVAL_MS;
	o.timeout_ms = DEF_TIMEOUT_MS;
	snprintf(o.token_path, sizeof(o.token_path), "%s/token", KUBE_SA_DIR);
	snprintf(o.ca_path, sizeof(o.ca_path), "%s/ca.crt", KUBE_SA_DIR);
	if (node_slo_json && *node_slo_json)
		root = json_loads(node_slo_json, 0, NULL);
	src = root ? json_object_get(root, "source") : NULL;
	a = root ? json_object_get(root, "apiserver") : NULL;
	if (src && (!json_is_string(src) || (strcmp(json_string_value(src), "file") &&
					     strcmp(json_string_value(src), "apiserver"))))
		r = opt_fail(err, err_len, "source", "not one of file, apiserver");
	if (!r && a && !json_is_object(a))
		r = opt_fail(err, err_len, "apiserver", "not an object");
	if (!r && a)
		r = parse_apiserver(a, &o, err, err_len);
	o.apiserver = !r && src && !strcmp(json_string_value(src), "apiserver");
	json_decref(root);
	if (!r)
		*ret = o;
	return r;
}

/* --- pure parsers -------------------------------------------------------------------------- */

static json_t *load(const char *buf, size_t len, char *why, size_t why_len)
{
	json_error_t jerr;
	json_t *root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);

	if (root && json_is_object(root))
		return root;
	snprintf(why, why_len, "not a JSON object (%s, line %d)", root ? "wrong type" : jerr.text,
		 jerr.line);
	json_decref(root);
	return NULL;
}

static bool kind_is(json_t *root, const char *kind)
{
	json_t *k = json_object_get(root, "kind");

	/* kind is optional in what the API returns for a GET of one object, but never other */
	return !k || (json_is_string(k) && !strcmp(json_string_value(k), kind));
}

static const char *name_of(json_t *root)
{
	return json_string_value(json_object_get(json_object_get(root, "metadata"), "name"));
}

int nodeslo_parse(const char *buf, size_t len, const char *node, char **ret_spec, char *why,
		  size_t why_len)
{
	json_t *root = load(buf, len, why, why_len), *spec;
	struct slo_config cfg;
	char msg[192];
	char *text = NULL;
	int err = -EINVAL;

	if (!root)
		return -EINVAL;
	spec = json_object_get(root, "spec");
	if (!kind_is(root, "NodeSLO") || !name_of(root) || strcmp(name_of(root), node)) {
		snprintf(why, why_len, "not the NodeSLO of node %s", node);
		goto out;
	}
	if (!json_is_object(spec)) {
		snprintf(why, why_len, "spec: not an object");
		goto out;
	}
	text = json_dumps(spec, JSON_COMPACT | JSON_SORT_KEYS);
	if (!text) {
		err = -ENOMEM;
		snprintf(why, why_len, "out of memory");
		goto out;
	}
	/* the file's nodeSLO parser and checks: a spec the enforcer would refuse is bad here */
	if (slo_config_parse(text, NULL, &cfg, msg, sizeof(msg))) {
		snprintf(why, why_len, "%s", msg);
		free(text);
		goto out;
	}
	*ret_spec = text;
	err = 0;
out:
	json_decref(root);
	return err;
}

static void node_reservation(json_t *ann, struct nodeslo_node *n)
{
	json_t *r = json_object_get(ann, ANN_RESERVATION), *doc, *cpus, *cpu;
	struct cpumask m;
	int64_t milli;

	if (!json_is_string(r))
		return;
	doc = json_loads(json_string_value(r), 0, NULL);
	cpus = json_object_get(doc, "reservedCPUs");
	if (json_is_string(cpus) && *json_string_value(cpus) &&
	    strlen(json_string_value(cpus)) < sizeof(n->reserved_cpus) &&
	    !cpulist_parse(json_string_value(cpus), &m)) {
		n->has_reserved_cpus = true;
		snprintf(n->reserved_cpus, sizeof(n->reserved_cpus), "%s", json_string_value(cpus));
	}
	cpu = json_object_get(json_object_get(doc, "resources"), "cpu");
	if (json_is_string(cpu) && !pod_quantity_parse(json_string_value(cpu), 3, &milli) &&
	    milli > n->reserved_milli)
		n->reserved_milli = milli;
	json_decref(doc);
}

/* kubelet's reserved CPU: capacity - allocatable, as koordlet's calculator takes it. */
static void node_kubelet_reserved(json_t *status, struct nodeslo_node *n)
{
	const char *cap =
		json_string_value(json_object_get(json_object_get(status, "capacity"), "cpu"));
	const char *alloc =
		json_string_value(json_object_get(json_object_get(status, "allocatable"), "cpu"));
	int64_t c, a;

	if (cap && alloc && !pod_quantity_parse(cap, 3, &c) && !pod_quantity_parse(alloc, 3, &a) &&
	    c - a > n->reserved_milli)
		n->reserved_milli = c - a;
}

int nodeslo_node_parse(const char *buf, size_t len, struct nodeslo_node *ret, char *why,
		       size_t why_len)
{
	json_t *root = load(buf, len, why, why_len), *ann, *ratio;
	struct nodeslo_node n;
	char *end;
	double r;

	/* compared with memcmp for changes: no stray padding bytes */
	memset(&n, 0, sizeof(n));
	n.reserved_milli = -1;
	if (!root)
		return -EINVAL;
	if (!kind_is(root, "Node") || !name_of(root)) {
		snprintf(why, why_len, "not a Node");
		json_decref(root);
		return -EINVAL;
	}
	ann = json_object_get(json_object_get(root, "metadata"), "annotations");
	ratio = json_object_get(ann, ANN_RATIO);
	if (json_is_string(ratio)) {
		r = strtod(json_string_value(ratio), &end);
		/* the range cpuNormalizationRatio takes; koordlet ignores what it cannot parse */
		if (end != json_string_value(ratio) && !*end && r >= 1.0 && r <= 100.0) {
			n.has_ratio = true;
			n.cpu_normalization_ratio = r;
		}
	}
	node_reservation(ann, &n);
	node_kubelet_reserved(json_object_get(root, "status"), &n);
	json_decref(root);
	*ret = n;
	return 0;
}

int nodeslo_overlay(const char *strategies_json, const struct nodeslo_node *node, char **ret)
{
	json_t *root = strategies_json && *strategies_json ? json_loads(strategies_json, 0, NULL) :
							     json_object();
	json_int_t file_milli = 0;
	int err = -ENOMEM;

	if (!root || !json_is_object(root)) {
		json_decref(root);
		return -EINVAL;
	}
	if (json_is_integer(json_object_get(root, "nodeReservedMilliCpu")))
		file_milli = json_integer_value(json_object_get(root, "nodeReservedMilliCpu"));
	if (node->has_ratio && json_object_set_new(root, "cpuNormalizationRatio",
						   json_real(node->cpu_normalization_ratio)))
		goto out;
	if (node->has_reserved_cpus &&
	    json_object_set_new(root, "reservedCpus", json_string(node->reserved_cpus)))
		goto out;
	if (node->reserved_milli > file_milli &&
	    json_object_set_new(root, "nodeReservedMilliCpu", json_integer(node->reserved_milli)))
		goto out;
	*ret = json_dumps(root, JSON_COMPACT | JSON_SORT_KEYS);
	err = *ret ? 0 : -ENOMEM;
out:
	json_decref(root);
	return err;
}

/* --- the client ---------------------------------------------------------------------------- */

enum src_state { ST_INIT = 0, ST_OK, ST_STALE };

struct nodeslo {
	struct nodeslo_opts o;
	char base[300]; /* https://host:port */
	char *spec; /* last good */
	struct nodeslo_node node;
	bool has_node;
	enum src_state state;
	char last_why[WHY_LEN]; /* what the stale line said, so a new reason is said again */
	uint64_t next_ns, updates, failures;
	struct kube_client *kube;
};

/* GET @path into @r (the caller frees r->body); on failure @why says why. */
static int get(struct nodeslo *s, const char *path, struct kube_resp *r, char *why)
{
	int err = kube_client__get(s->kube, path, s->o.timeout_ms, r);

	if (err)
		snprintf(why, WHY_LEN, "%s", r->err);
	return err;
}

static void note_failure(struct nodeslo *s, int err, const char *why)
{
	s->failures++;
	/* once per state change, and again only when the reason changes */
	if (s->state != ST_STALE || strcmp(s->last_why, why))
		log_warn(s->spec ? "NodeSLO source stale, keeping the last good spec" :
				   "NodeSLO unavailable, the file's nodeSLO stays in force",
			 "node=%s err=%d reason=\"%s\"", s->o.node_name, err, why);
	snprintf(s->last_why, sizeof(s->last_why), "%s", why);
	s->state = ST_STALE;
}

/* The Node is optional: without get on nodes the NodeSLO still applies. */
static bool fetch_node(struct nodeslo *s, char *why)
{
	char path[NODESLO_NAME_MAX + 32];
	struct kube_resp r;
	struct nodeslo_node n;
	bool changed = false;

	snprintf(path, sizeof(path), NODE_PATH "%s", s->o.node_name);
	if (!get(s, path, &r, why) && !nodeslo_node_parse(r.body, r.len, &n, why, WHY_LEN)) {
		changed = !s->has_node || memcmp(&n, &s->node, sizeof(n));
		s->node = n;
		s->has_node = true;
	} else {
		log_dbg("node object not read, its annotations keep their last values",
			"node=%s reason=\"%s\"", s->o.node_name, why);
	}
	free(r.body);
	return changed;
}

int nodeslo__poll(struct nodeslo *s, uint64_t now_ns)
{
	char path[NODESLO_NAME_MAX + 64], why[WHY_LEN] = "";
	struct kube_resp r;
	char *spec = NULL;
	bool changed;
	int err;

	if (now_ns < s->next_ns)
		return 0;
	s->next_ns = now_ns + (uint64_t)s->o.interval_ms * NS_PER_MS;
	snprintf(path, sizeof(path), NODESLO_PATH "%s", s->o.node_name);
	err = get(s, path, &r, why);
	if (!err)
		err = nodeslo_parse(r.body, r.len, s->o.node_name, &spec, why, sizeof(why));
	free(r.body);
	if (err) {
		note_failure(s, err, why);
		return 0;
	}
	changed = !s->spec || strcmp(s->spec, spec);
	if (s->state != ST_OK)
		log_info(s->state == ST_INIT ? "NodeSLO source ready" : "NodeSLO source recovered",
			 "node=%s failures=%llu", s->o.node_name, (unsigned long long)s->failures);
	s->state = ST_OK;
	free(s->spec);
	s->spec = spec;
	changed = fetch_node(s, why) || changed;
	if (changed)
		s->updates++;
	return changed;
}

static int node_name_default(char *buf, size_t size)
{
	const char *env = getenv("NODE_NAME");

	if (env && *env) {
		snprintf(buf, size, "%s", env);
		return 0;
	}
	/* koordlet's fallback too: the node is named after the host when not told */
	if (gethostname(buf, size))
		return -errno;
	buf[size - 1] = '\0';
	return *buf ? 0 : -EINVAL;
}

int nodeslo__new(const struct nodeslo_opts *o, struct nodeslo **ret)
{
	struct nodeslo *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return -ENOMEM;
	s->o = *o;
	err = *s->o.node_name ? 0 : node_name_default(s->o.node_name, sizeof(s->o.node_name));
	if (err) {
		log_err("NodeSLO source: no node name (NODE_NAME or the hostname)", "err=%d", err);
		goto fail;
	}
	if (*s->o.url)
		snprintf(s->base, sizeof(s->base), "%.*s", (int)strcspn(s->o.url, "?#"), s->o.url);
	else
		err = kube_in_cluster_url(s->base, sizeof(s->base)) ? -EINVAL : 0;
	if (err) {
		log_err("NodeSLO source: no API server (nodeSLO.apiserver.url or "
			"KUBERNETES_SERVICE_HOST/PORT)",
			NULL);
		goto fail;
	}
	/* "https://h:p/" and "https://h:p" name the same server */
	if (s->base[0] && s->base[strlen(s->base) - 1] == '/')
		s->base[strlen(s->base) - 1] = '\0';
	err = kube_client__new(&(struct kube_client_opts){ .base_url = s->base,
							   .token_path = s->o.token_path,
							   .ca_path = s->o.ca_path,
							   .insecure_skip_verify = s->o.insecure,
							   .max_body_bytes = BODY_MAX },
			       &s->kube);
	if (err)
		goto fail;
	log_info("NodeSLO source", "kind=apiserver url=%s node=%s interval_ms=%u", s->base,
		 s->o.node_name, s->o.interval_ms);
	*ret = s;
	return 0;
fail:
	free(s);
	return err;
}

void nodeslo__free(struct nodeslo *s)
{
	if (!s)
		return;
	kube_client__free(s->kube);
	free(s->spec);
	free(s);
}

const char *nodeslo__spec(const struct nodeslo *s)
{
	return s->spec;
}

const struct nodeslo_node *nodeslo__node(const struct nodeslo *s)
{
	return s->has_node ? &s->node : NULL;
}

bool nodeslo__stale(const struct nodeslo *s)
{
	return s->state == ST_STALE;
}

const char *nodeslo__node_name(const struct nodeslo *s)
{
	return s->o.node_name;
}

uint64_t nodeslo__updates(const struct nodeslo *s)
{
	return s->updates;
}

uint64_t nodeslo__failures(const struct nodeslo *s)
{
	return s->failures;
}
