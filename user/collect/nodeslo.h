/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_NODESLO_H
#define KQOS_COLLECT_NODESLO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The node's NodeSLO from the API server (nodeSLO.source "apiserver"), as koordlet reads it:
 * GET /apis/slo.koordinator.sh/v1alpha1/nodeslos/<node>, and the Node object for the
 * annotations kqos has a feature for (node.koordinator.sh/cpu-normalization-ratio,
 * node.koordinator.sh/reservation) and kubelet's reserved CPU (capacity - allocatable). Polled
 * with the in-cluster config: the service host and port from the environment, the
 * service-account token re-read on every request (projected tokens rotate), the CA file.
 *
 * A missing or bad object keeps the last good spec and marks the source stale; each change of
 * state is logged once. The caller applies a new spec through the enforcer's reconfigure path,
 * exactly as a reload applies the file's nodeSLO.
 */

#define NODESLO_NAME_MAX 253 /* a DNS subdomain */

/* nodeSLO.source and nodeSLO.apiserver.* (docs/config.md), parsed from the nodeSLO text. */
struct nodeslo_opts {
	bool apiserver; /* source "apiserver"; false: "file" (the default) */
	char url[256]; /* "" = https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT */
	char node_name[NODESLO_NAME_MAX + 1]; /* "" = $NODE_NAME, else the hostname */
	char token_path[256];
	char ca_path[256];
	bool insecure;
	uint32_t interval_ms; /* default 10 s */
	uint32_t timeout_ms; /* default 3 s */
};

/*
 * The source keys of a nodeSLO object (JSON text, NULL or "" = defaults). The spec fields
 * beside them are not looked at here. 0, or -EINVAL naming the key in @err.
 */
int nodeslo_opts_parse(const char *node_slo_json, struct nodeslo_opts *ret, char *err,
		       size_t err_len);

/* What kqos takes from the Node object. */
struct nodeslo_node {
	bool has_ratio;
	double cpu_normalization_ratio; /* the annotation, when in [1, 100] */
	bool has_reserved_cpus;
	char reserved_cpus[256]; /* reservation.reservedCPUs, a cpu list */
	int64_t reserved_milli; /* max(capacity - allocatable, reservation.resources.cpu); -1 none */
};

/*
 * A NodeSLO object (JSON bytes) for @node: the compact JSON of its spec in *ret_spec (caller
 * frees), checked by the same parser as the file's nodeSLO. -EINVAL with the reason in @why.
 */
int nodeslo_parse(const char *buf, size_t len, const char *node, char **ret_spec, char *why,
		  size_t why_len);
/* A Node object: its annotations and kubelet's reserved CPU. -EINVAL when not a Node. */
int nodeslo_node_parse(const char *buf, size_t len, struct nodeslo_node *ret, char *why,
		       size_t why_len);
/*
 * The file's "strategies" text (NULL = {}) with the node's values over it:
 * cpuNormalizationRatio, reservedCpus, and nodeReservedMilliCpu raised to the node's reserved
 * CPU (koordinator takes the larger of kubelet's and the annotation's). Caller frees *ret.
 */
int nodeslo_overlay(const char *strategies_json, const struct nodeslo_node *node, char **ret);

struct nodeslo;

/* @o->apiserver must be set. 0, -EINVAL (no node name or URL), -ENOMEM. */
int nodeslo__new(const struct nodeslo_opts *o, struct nodeslo **ret);
/* NULL-safe. */
void nodeslo__free(struct nodeslo *s);

/*
 * Fetch when due (@now_ns CLOCK_MONOTONIC). 1 when the spec or the node's values changed
 * (read them with nodeslo__spec and nodeslo__node), 0 otherwise (not due, unchanged, or
 * failed: the last good values stay and the source is stale).
 */
int nodeslo__poll(struct nodeslo *s, uint64_t now_ns);
/* The last good spec as JSON text, or NULL before the first. */
const char *nodeslo__spec(const struct nodeslo *s);
const struct nodeslo_node *nodeslo__node(const struct nodeslo *s);
bool nodeslo__stale(const struct nodeslo *s);
const char *nodeslo__node_name(const struct nodeslo *s);
uint64_t nodeslo__updates(const struct nodeslo *s); /* specs applied since start */
uint64_t nodeslo__failures(const struct nodeslo *s); /* failed fetches since start */

#endif
