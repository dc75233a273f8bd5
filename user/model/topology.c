// SPDX-License-Identifier: GPL-2.0
/* Topology and kubelet checkpoint values: pure functions, no file access (collect/ reads). */
#include <errno.h>
#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topology.h"

void topology__free(struct topology *topo)
{
	if (!topo)
		return;
	free(topo->cpus);
	free(topo);
}

const struct topo_cpu *topology__cpu(const struct topology *topo, unsigned int cpu)
{
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		if (topo->cpus[i].cpu == (int)cpu)
			return &topo->cpus[i];
	}
	return NULL;
}

static void cpus_where(const struct topology *topo, size_t off, int id, struct cpumask *ret)
{
	cpumask_zero(ret);
	if (id == TOPO_ID_NONE)
		return;
	for (size_t i = 0; i < topo->nr_cpus; i++) {
		if (*(const int *)((const char *)&topo->cpus[i] + off) == id)
			cpumask_set(ret, (unsigned int)topo->cpus[i].cpu);
	}
}

void topology__node_cpus(const struct topology *topo, int node, struct cpumask *ret)
{
	cpus_where(topo, offsetof(struct topo_cpu, node_id), node, ret);
}

void topology__socket_cpus(const struct topology *topo, int socket, struct cpumask *ret)
{
	cpus_where(topo, offsetof(struct topo_cpu, socket_id), socket, ret);
}

void topology__l3_cpus(const struct topology *topo, int l3, struct cpumask *ret)
{
	cpus_where(topo, offsetof(struct topo_cpu, l3_id), l3, ret);
}

/* ---- kubelet cpu_manager_state ---- */

struct cm_ctx {
	char *err;
	size_t err_len;
};

static int bad_field(struct cm_ctx *c, const char *field, const char *why)
{
	snprintf(c->err, c->err_len, "%s: %s", field, why);
	return -EINVAL;
}

static bool uid_ok(const char *uid)
{
	size_t len = strlen(uid);

	if (len == 0 || len >= sizeof(((struct cpumgr_entry *)0)->pod_uid))
		return false;
	return strspn(uid, "0123456789abcdef-") == len;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct cpumgr_entry *x = a, *y = b;
	int c = strcmp(x->pod_uid, y->pod_uid);

	return c ? c : strcmp(x->container, y->container);
}

static int parse_entries(struct cm_ctx *c, json_t *entries, struct cpumgr_state *st)
{
	const char *uid, *name;
	json_t *pod, *cpus;
	size_t n = 0;

	if (!json_is_object(entries))
		return bad_field(c, "entries", "not an object");
	json_object_foreach(entries, uid, pod) {
		if (!json_is_object(pod))
			return bad_field(c, "entries.<pod>", "not an object");
		n += json_object_size(pod);
	}
	st->entries = calloc(n + 1, sizeof(*st->entries));
	if (!st->entries)
		return -ENOMEM;
	json_object_foreach(entries, uid, pod) {
		if (!uid_ok(uid))
			return bad_field(c, "entries.<pod>", "pod uid not [0-9a-f-]");
		json_object_foreach(pod, name, cpus) {
			struct cpumgr_entry *e = &st->entries[st->nr_entries];

			if (!json_is_string(cpus) ||
			    cpulist_parse(json_string_value(cpus), &e->cpus))
				return bad_field(c, "entries.<pod>.<container>",
						 "not a cpu list string");
			if (name[0] == '\0' || strlen(name) >= sizeof(e->container))
				return bad_field(c, "entries.<pod>.<container>",
						 "bad container name");
			snprintf(e->pod_uid, sizeof(e->pod_uid), "%s", uid);
			snprintf(e->container, sizeof(e->container), "%s", name);
			st->nr_entries++;
		}
	}
	if (st->nr_entries)
		qsort(st->entries, st->nr_entries, sizeof(*st->entries), cmp_entry);
	return 0;
}

static int parse_state(struct cm_ctx *c, json_t *root, struct cpumgr_state *st)
{
	json_t *v;

	if (!json_is_object(root))
		return bad_field(c, "(root)", "not an object");
	v = json_object_get(root, "policyName");
	if (!json_is_string(v) || json_string_length(v) == 0 ||
	    json_string_length(v) >= sizeof(st->policy))
		return bad_field(c, "policyName", "missing or not a short string");
	snprintf(st->policy, sizeof(st->policy), "%s", json_string_value(v));
	v = json_object_get(root, "defaultCpuSet");
	if (!json_is_string(v) || cpulist_parse(json_string_value(v), &st->default_cpus))
		return bad_field(c, "defaultCpuSet", "missing or not a cpu list string");
	v = json_object_get(root, "checksum");
	if (v) {
		if (!json_is_integer(v) || json_integer_value(v) < 0)
			return bad_field(c, "checksum", "not a non-negative integer");
		st->checksum = (uint64_t)json_integer_value(v);
		st->has_checksum = true;
	}
	v = json_object_get(root, "entries");
	if (v && !json_is_null(v))
		return parse_entries(c, v, st);
	return 0;
}

int cpumgr_state_parse(const char *buf, size_t len, struct cpumgr_state **ret, char *err,
		       size_t err_len)
{
	struct cm_ctx c = { err, err_len };
	struct cpumgr_state *st;
	json_error_t jerr;
	json_t *root;
	int e;

	*ret = NULL;
	if (!len)
		return 0;
	root = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &jerr);
	if (!root) {
		snprintf(err, err_len, "line %d: %s", jerr.line, jerr.text);
		return -EINVAL;
	}
	st = calloc(1, sizeof(*st));
	if (st)
		st->refs = 1;
	e = st ? parse_state(&c, root, st) : -ENOMEM;
	json_decref(root);
	if (e) {
		cpumgr_state__put(st);
		return e;
	}
	*ret = st;
	return 0;
}

struct cpumgr_state *cpumgr_state__ref(struct cpumgr_state *st)
{
	if (st)
		st->refs++;
	return st;
}

void cpumgr_state__put(struct cpumgr_state *st)
{
	if (!st || --st->refs)
		return;
	free(st->entries);
	free(st);
}

void cpumgr_state__exclusive_cpus(const struct cpumgr_state *st, struct cpumask *ret)
{
	cpumask_zero(ret);
	for (size_t i = 0; st && i < st->nr_entries; i++)
		cpumask_or(ret, ret, &st->entries[i].cpus);
}
