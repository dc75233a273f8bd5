/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_KUBE_KUBE_CLIENT_H
#define KQOS_KUBE_KUBE_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The one HTTP(S) client kqos talks to Kubernetes with (libcurl): the API server for the
 * NodeSLO source and the evictor, the kubelet for the pod list. One blocking request at a
 * time, bounded by the timeout the caller gives it, on the caller's thread. It logs nothing:
 * each call says what went wrong in a string the caller logs.
 */

#define KUBE_SA_DIR  "/var/run/secrets/kubernetes.io/serviceaccount"
#define KUBE_ERR_LEN 256

struct kube_client_opts {
	const char *base_url; /* "https://host:port", or a whole URL with requests for "" */
	const char *token_path; /* bearer token, re-read for every request; NULL or "": none */
	const char *ca_path; /* PEM bundle; NULL or "": libcurl's default CAs */
	bool insecure_skip_verify; /* no certificate or host name check */
	bool no_proxy; /* ignore *_proxy from the environment (the kubelet is local) */
	bool accept_encoding; /* offer every encoding libcurl decodes (large pod lists) */
	uint64_t max_body_bytes; /* a longer body fails with -EFBIG */
};

/* What one request brought back. */
struct kube_resp {
	long code; /* the HTTP status; 0 when no answer came */
	char *body; /* on 0: NUL-terminated, NULL when empty, the caller frees; else NULL */
	size_t len;
	char err[KUBE_ERR_LEN]; /* on failure: "GET <url>: <why>", never the token */
};

struct kube_client;

/*
 * Copies @o's strings. 0, -EINVAL (no base URL or body bound), -ENOMEM, or -ELIBACC when
 * libcurl could not be loaded (-ELIBBAD: it lacks a function).
 */
int kube_client__new(const struct kube_client_opts *o, struct kube_client **ret);
/* NULL-safe. */
void kube_client__free(struct kube_client *c);

/*
 * GET or POST (@json as an application/json body) base_url + @path, within @timeout_ms (0:
 * -ETIMEDOUT, nothing sent). 0 on a 2xx answer. An answer of another status fills ret->code and returns -ENOENT (404),
 * -EACCES (401, 403) or -EIO; no answer leaves ret->code 0 and returns -ETIMEDOUT, -EFBIG
 * (the body bound), -EIO (transport, TLS), -ENOMEM, -EINVAL (a bad option or token) or the
 * token file's -errno. ret->err says why on every failure.
 */
int kube_client__get(struct kube_client *c, const char *path, uint32_t timeout_ms,
		     struct kube_resp *ret);
int kube_client__post(struct kube_client *c, const char *path, const char *json,
		      uint32_t timeout_ms, struct kube_resp *ret);

/*
 * In a pod: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an IPv6 host in
 * brackets). 0, or -ENOENT when either variable is unset or empty.
 */
int kube_in_cluster_url(char *buf, size_t size);

#endif
