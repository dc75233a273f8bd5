// SPDX-License-Identifier: GPL-2.0
/* The HTTP(S) client for the API server and the kubelet: token, TLS, bounds, status codes. */
#include <ctype.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <curl/curl.h>

#include "kube_client.h"

#define TOKEN_MAX 16384
#define LIBCURL	  "libcurl.so.4" /* its soname (Debian libcurl4) */
#define BODY_MIN  16384 /* the first allocation; doubled as the body grows */

struct kube_client {
	char *base_url;
	char *token_path;
	char *ca_path;
	bool insecure;
	bool no_proxy;
	bool accept_encoding;
	uint64_t max_body_bytes;
	CURL *curl;
};

/*
 * libcurl and its TLS stack are 4.5 MB of resident text and relocations that a node reading
 * its pods from a file never uses: loaded with the first client, and kept (OpenSSL may not be
 * unloaded).
 */
static struct curl_lib {
	int err;
	typeof(curl_global_init) *global_init;
	typeof(curl_global_cleanup) *global_cleanup;
	typeof(curl_easy_init) *easy_init;
	typeof(curl_easy_cleanup) *easy_cleanup;
	typeof(curl_easy_reset) *easy_reset;
	typeof(curl_easy_setopt) *easy_setopt;
	typeof(curl_easy_perform) *easy_perform;
	typeof(curl_easy_getinfo) *easy_getinfo;
	typeof(curl_easy_strerror) *easy_strerror;
	typeof(curl_slist_append) *slist_append;
	typeof(curl_slist_free_all) *slist_free_all;
} cl;
static pthread_once_t cl_once = PTHREAD_ONCE_INIT;

static void curl_load(void)
{
	const struct {
		void **slot;
		const char *name;
	} syms[] = {
		{ (void **)&cl.global_init, "curl_global_init" },
		{ (void **)&cl.global_cleanup, "curl_global_cleanup" },
		{ (void **)&cl.easy_init, "curl_easy_init" },
		{ (void **)&cl.easy_cleanup, "curl_easy_cleanup" },
		{ (void **)&cl.easy_reset, "curl_easy_reset" },
		{ (void **)&cl.easy_setopt, "curl_easy_setopt" },
		{ (void **)&cl.easy_perform, "curl_easy_perform" },
		{ (void **)&cl.easy_getinfo, "curl_easy_getinfo" },
		{ (void **)&cl.easy_strerror, "curl_easy_strerror" },
		{ (void **)&cl.slist_append, "curl_slist_append" },
		{ (void **)&cl.slist_free_all, "curl_slist_free_all" },
	};
	void *dl = dlopen(LIBCURL, RTLD_NOW | RTLD_LOCAL);

	cl.err = dl ? 0 : -ELIBACC;
	for (size_t i = 0; dl && !cl.err && i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(dl, syms[i].name);
		if (!*syms[i].slot)
			cl.err = -ELIBBAD;
	}
}

/* The body as it arrives, bounded by max. */
struct body {
	char *buf;
	size_t len, cap;
	uint64_t max;
	bool is_too_big;
};

static size_t body_write(char *data, size_t size, size_t nmemb, void *arg)
{
	struct body *b = arg;
	size_t n = size * nmemb;
	char *p;

	if (n > b->max - b->len) {
		b->is_too_big = true;
		return 0; /* libcurl turns this into CURLE_WRITE_ERROR */
	}
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : BODY_MIN;

		while (cap < b->len + n + 1)
			cap *= 2;
		p = realloc(b->buf, cap);
		if (!p)
			return 0;
		b->buf = p;
		b->cap = cap;
	}
	memcpy(b->buf + b->len, data, n);
	b->len += n;
	b->buf[b->len] = '\0';
	return n;
}

/* "GET <url>: " and the reason; the URL is cut so that the reason fits. */
__attribute__((format(printf, 4, 5))) static void fail(struct kube_resp *r, const char *method,
						       const char *url, const char *fmt, ...)
{
	int n = snprintf(r->err, sizeof(r->err), "%s %.140s: ", method, url);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->err + n, sizeof(r->err) - n, fmt, ap);
	va_end(ap);
}

/*
 * Projected service-account tokens rotate (about hourly): the file is read for every request.
 * The header line in @hdr; the caller wipes it.
 */
static int token_header(const char *path, char *hdr, size_t size, char *why, size_t why_len)
{
	char buf[TOKEN_MAX + 2]; /* one byte past the bound tells a long token, one for the NUL */
	ssize_t n;
	size_t len;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, why_len, "token %.80s: %s", path, strerror(-err));
		return err;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		err = -errno;
	close(fd);
	if (err) {
		snprintf(why, why_len, "token %.80s: %s", path, strerror(-err));
		return err;
	}
	len = (size_t)n;
	while (len && isspace((unsigned char)buf[len - 1]))
		len--;
	buf[len] = '\0';
	/* a header must not carry CR/LF or controls: a token is printable ASCII or rejected */
	for (size_t i = 0; i < len && !err; i++)
		if (!isgraph((unsigned char)buf[i]))
			err = -EINVAL;
	if (!len || n > TOKEN_MAX || err ||
	    snprintf(hdr, size, "Authorization: Bearer %s", buf) >= (int)size) {
		err = -EINVAL;
		snprintf(why, why_len, "token %.80s: empty, too long or not printable", path);
	}
	explicit_bzero(buf, sizeof(buf));
	return err;
}

static int setopts(struct kube_client *c, const char *url, const char *post, uint32_t timeout_ms,
		   struct body *b, struct curl_slist *hdrs, char *errbuf)
{
	CURL *h = c->curl;
	CURLcode rc = CURLE_OK;

	cl.easy_reset(h);
#define SET(opt, val)                                     \
	do {                                              \
		if (rc == CURLE_OK)                       \
			rc = cl.easy_setopt(h, opt, val); \
	} while (0)
	SET(CURLOPT_URL, url);
	SET(CURLOPT_PROTOCOLS_STR, "http,https");
	if (c->no_proxy)
		SET(CURLOPT_PROXY, "");
	SET(CURLOPT_NOSIGNAL, 1L);
	/* one epoll loop: a slow server may cost this much of a tick, never more */
	SET(CURLOPT_TIMEOUT_MS, (long)timeout_ms);
	SET(CURLOPT_CONNECTTIMEOUT_MS, (long)timeout_ms);
	SET(CURLOPT_FOLLOWLOCATION, 0L);
	if (c->accept_encoding)
		SET(CURLOPT_ACCEPT_ENCODING, "");
	/* a Content-Length past the bound fails before the body: CURLE_FILESIZE_EXCEEDED */
	SET(CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)b->max);
	SET(CURLOPT_WRITEFUNCTION, body_write);
	SET(CURLOPT_WRITEDATA, b);
	SET(CURLOPT_ERRORBUFFER, errbuf);
	SET(CURLOPT_HTTPHEADER, hdrs);
	if (post)
		SET(CURLOPT_POSTFIELDS, post);
	SET(CURLOPT_SSL_VERIFYPEER, c->insecure ? 0L : 1L);
	SET(CURLOPT_SSL_VERIFYHOST, c->insecure ? 0L : 2L);
	if (c->ca_path)
		SET(CURLOPT_CAINFO, c->ca_path);
#undef SET
	return rc == CURLE_OK ? 0 : -EINVAL;
}

static int status_err(long code)
{
	if (code / 100 == 2)
		return 0;
	if (code == 404)
		return -ENOENT;
	return code == 401 || code == 403 ? -EACCES : -EIO;
}

static int request(struct kube_client *c, const char *method, const char *path, const char *post,
		   uint32_t timeout_ms, struct kube_resp *r)
{
	char url[1024], errbuf[CURL_ERROR_SIZE] = "", auth[TOKEN_MAX + 32] = "", why[160];
	struct curl_slist *hdrs = NULL, *tmp;
	struct body b = { .max = c->max_body_bytes };
	CURLcode rc;
	int err = 0;

	memset(r, 0, sizeof(*r));
	if (snprintf(url, sizeof(url), "%s%s", c->base_url, path) >= (int)sizeof(url)) {
		fail(r, method, url, "URL too long");
		return -EINVAL;
	}
	/* libcurl reads 0 as "no timeout" */
	if (!timeout_ms) {
		fail(r, method, url, "no time left for the request");
		return -ETIMEDOUT;
	}
	if (c->token_path) {
		err = token_header(c->token_path, auth, sizeof(auth), why, sizeof(why));
		if (err) {
			fail(r, method, url, "%s", why);
			goto out;
		}
	}
	hdrs = cl.slist_append(NULL, "Accept: application/json");
	tmp = hdrs && post ? cl.slist_append(hdrs, "Content-Type: application/json") : hdrs;
	tmp = tmp && *auth ? cl.slist_append(tmp, auth) : tmp;
	if (!tmp) {
		err = -ENOMEM;
		fail(r, method, url, "out of memory");
		goto out;
	}
	err = setopts(c, url, post, timeout_ms, &b, hdrs, errbuf);
	if (err) {
		fail(r, method, url, "libcurl rejected an option");
		goto out;
	}
	rc = cl.easy_perform(c->curl);
	if (rc == CURLE_FILESIZE_EXCEEDED || b.is_too_big) {
		err = -EFBIG;
		fail(r, method, url, "body larger than %llu bytes",
		     (unsigned long long)c->max_body_bytes);
		goto out;
	}
	if (rc != CURLE_OK) {
		err = rc == CURLE_OPERATION_TIMEDOUT ? -ETIMEDOUT : -EIO;
		fail(r, method, url, "%s", errbuf[0] ? errbuf : cl.easy_strerror(rc));
		goto out;
	}
	cl.easy_getinfo(c->curl, CURLINFO_RESPONSE_CODE, &r->code);
	err = status_err(r->code);
	if (err) {
		fail(r, method, url, "http status %ld", r->code);
		goto out;
	}
	r->body = b.buf;
	r->len = b.len;
	b.buf = NULL;
out:
	/* the slist holds its own copy of the header: wipe both */
	for (tmp = hdrs; tmp; tmp = tmp->next)
		explicit_bzero(tmp->data, strlen(tmp->data));
	cl.slist_free_all(hdrs);
	explicit_bzero(auth, sizeof(auth));
	free(b.buf);
	return err;
}

int kube_client__get(struct kube_client *c, const char *path, uint32_t timeout_ms,
		     struct kube_resp *ret)
{
	return request(c, "GET", path, NULL, timeout_ms, ret);
}

int kube_client__post(struct kube_client *c, const char *path, const char *json,
		      uint32_t timeout_ms, struct kube_resp *ret)
{
	return request(c, "POST", path, json ? json : "", timeout_ms, ret);
}

int kube_in_cluster_url(char *buf, size_t size)
{
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");

	if (!host || !*host || !port || !*port)
		return -ENOENT;
	/* an IPv6 service address needs brackets in a URL */
	snprintf(buf, size, strchr(host, ':') ? "https://[%s]:%s" : "https://%s:%s", host, port);
	return 0;
}

/* NULL and "" are both none. */
static char *dup_opt(const char *s, bool *oom)
{
	char *d = s && *s ? strdup(s) : NULL;

	if (s && *s && !d)
		*oom = true;
	return d;
}

int kube_client__new(const struct kube_client_opts *o, struct kube_client **ret)
{
	struct kube_client *c;
	bool oom = false;
	int err;

	if (!o->base_url || !*o->base_url || !o->max_body_bytes)
		return -EINVAL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->base_url = dup_opt(o->base_url, &oom);
	c->token_path = dup_opt(o->token_path, &oom);
	c->ca_path = dup_opt(o->ca_path, &oom);
	c->insecure = o->insecure_skip_verify;
	c->no_proxy = o->no_proxy;
	c->accept_encoding = o->accept_encoding;
	c->max_body_bytes = o->max_body_bytes;
	if (oom) {
		err = -ENOMEM;
		goto err_free;
	}
	pthread_once(&cl_once, curl_load);
	if (cl.err) {
		err = cl.err;
		goto err_free;
	}
	/* libcurl counts init/cleanup pairs; each client holds one */
	if (cl.global_init(CURL_GLOBAL_DEFAULT)) {
		err = -ENOMEM;
		goto err_free;
	}
	c->curl = cl.easy_init();
	if (!c->curl) {
		cl.global_cleanup();
		err = -ENOMEM;
		goto err_free;
	}
	*ret = c;
	return 0;
err_free:
	kube_client__free(c);
	return err;
}

void kube_client__free(struct kube_client *c)
{
	if (!c)
		return;
	free(c->base_url);
	free(c->token_path);
	free(c->ca_path);
	if (c->curl) {
		cl.easy_cleanup(c->curl);
		cl.global_cleanup();
	}
	free(c);
}
