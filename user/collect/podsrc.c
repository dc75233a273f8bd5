// SPDX-License-Identifier: GPL-2.0
/* asprintf */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kube_client.h"
#include "log.h"
#include "pod.h"
#include "podsrc.h"

#define NS_PER_MS	   1000000ULL
#define WHY_LEN		   256
#define STATIC_NAME_MAX	   63
#define STATIC_NAMESPACE   "bare-metal"
#define DEFAULT_KUBELET	   "https://127.0.0.1:10250/pods"
#define DEFAULT_TIMEOUT_MS 3000
#define DEFAULT_KUBE_IVAL  10000
#define DEFAULT_BACKOFF_MS 60000
#define DEFAULT_FILE_IVAL  1000
#define DEFAULT_STAT_IVAL  10000

enum src_state {
	SRC_INIT,
	SRC_OK,
	SRC_STALE,
};

struct kubelet {
	char *url;
	uint32_t timeout_ms;
	struct kube_client *kube;
};

/* What identifies one version of a file without reading it. */
struct file_sig {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
};

struct file {
	char *path;
	bool has_sig;
	struct file_sig sig;
	int sig_err; /* result of parsing the version in sig: 0 or -errno */
	char sig_why[WHY_LEN];
};

struct group_cfg {
	struct podsrc_static_group *groups;
	size_t nr_groups;
	char *root;
};

struct podsrc {
	enum podsrc_kind kind;
	const char *origin; /* URL or path, for log lines; points into the kind's data */
	struct pod_list *list;
	enum src_state state;
	bool log_again; /* a new version failed while already stale: worth one more line */
	unsigned int failures;
	uint64_t next_poll_ns;
	uint32_t interval_ms;
	uint32_t max_backoff_ms;
	uint64_t body_hash; /* of the input behind list: unchanged input, no new list */
	uint64_t max_bytes;
	uint32_t max_pods;
	struct kubelet k;
	struct file f;
	struct group_cfg g;
};

/* ---- common --------------------------------------------------------------------------------- */

static uint64_t fnv1a(uint64_t h, const void *buf, size_t len)
{
	const unsigned char *p = buf;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_INIT 0xcbf29ce484222325ULL

const char *podsrc_kind_name(enum podsrc_kind kind)
{
	switch (kind) {
	case PODSRC_KUBELET:
		return "kubelet";
	case PODSRC_FILE:
		return "file";
	case PODSRC_STATIC:
		return "static";
	}
	return "unknown";
}

enum podsrc_kind podsrc__kind(const struct podsrc *src)
{
	return src->kind;
}

struct pod_list *podsrc__list(const struct podsrc *src)
{
	return src->list;
}

bool podsrc__is_stale(const struct podsrc *src)
{
	return src->state != SRC_OK;
}

uint64_t podsrc__next_poll_ns(const struct podsrc *src)
{
	return src->next_poll_ns;
}

/* 1 s (or the interval when shorter), doubling per consecutive failure, capped. */
static uint64_t backoff_ms(const struct podsrc *src)
{
	uint64_t base = src->interval_ms < 1000 ? src->interval_ms : 1000;
	unsigned int shift = src->failures > 20 ? 20 : src->failures - 1;
	uint64_t d = base << shift;

	return d < src->max_backoff_ms ? d : src->max_backoff_ms;
}

static void note_failure(struct podsrc *src, uint64_t now_ns, int err, const char *why)
{
	uint64_t delay;

	src->failures++;
	delay = backoff_ms(src);
	src->next_poll_ns = now_ns + delay * NS_PER_MS;
	if (src->state != SRC_STALE || src->log_again)
		log_warn(src->list ? "pod source stale, keeping the last pod list" :
				     "pod source unavailable, no pod list yet",
			 "source=%s origin=\"%s\" err=%d reason=\"%s\" retry_ms=%llu pods=%zu",
			 podsrc_kind_name(src->kind), src->origin, err, why,
			 (unsigned long long)delay, src->list ? src->list->nr_pods : 0);
	else
		log_dbg("pod source still failing", "source=%s reason=\"%s\" retry_ms=%llu",
			podsrc_kind_name(src->kind), why, (unsigned long long)delay);
	src->state = SRC_STALE;
	src->log_again = false;
}

static void note_success(struct podsrc *src, uint64_t now_ns)
{
	src->next_poll_ns = now_ns + (uint64_t)src->interval_ms * NS_PER_MS;
	if (src->state != SRC_OK)
		log_info(src->state == SRC_INIT ? "pod source ready" : "pod source recovered",
			 "source=%s origin=\"%s\" pods=%zu skipped=%zu failures=%u",
			 podsrc_kind_name(src->kind), src->origin, src->list->nr_pods,
			 src->list->nr_skipped, src->failures);
	src->failures = 0;
	src->state = SRC_OK;
}

void podsrc_log_issues(const struct pod_list *list)
{
	for (size_t i = 0; i < list->nr_news; i++)
		log_msg(list->news[i].repeated ? LOG_DEBUG : LOG_WARN, list->news[i].msg, "%s",
			list->news[i].detail);
}

/* Parse @buf unless it is what the current list came from. 1 = new list, 0 = same. */
static int adopt_body(struct podsrc *src, const char *buf, size_t len, char *why)
{
	struct pod_parse_error perr = { 0 };
	struct pod_list *list = NULL;
	uint64_t h = fnv1a(fnv1a(FNV_INIT, &len, sizeof(len)), buf, len);
	int err;

	if (src->list && h == src->body_hash)
		return 0;
	err = pod_list__parse_max(buf, len, src->max_pods, src->origin, src->list, &list, &perr);
	if (err == -E2BIG) {
		snprintf(why, WHY_LEN, "pod list too long: %s (pods.maxPods)", perr.text);
		return err;
	}
	if (err) {
		snprintf(why, WHY_LEN, "line %d column %d: %s", perr.line, perr.column, perr.text);
		return err;
	}
	podsrc_log_issues(list);
	pod_list__put(src->list);
	src->list = list;
	src->body_hash = h;
	return 1;
}

/* ---- kubelet -------------------------------------------------------------------------------- */

static void too_big_why(const struct podsrc *src, char *why)
{
	snprintf(why, WHY_LEN, "pod list larger than %llu bytes (pods.maxBytes)",
		 (unsigned long long)src->max_bytes);
}

static int kubelet_fetch(struct podsrc *src, char *why)
{
	struct kube_resp r;
	int err;

	/* the whole URL is the client's base */
	err = kube_client__get(src->k.kube, "", src->k.timeout_ms, &r);
	if (err == -EFBIG)
		too_big_why(src, why);
	else if (err)
		snprintf(why, WHY_LEN, "%s", r.err);
	else
		err = adopt_body(src, r.body ? r.body : "", r.len, why);
	free(r.body);
	return err;
}

/* ---- file ----------------------------------------------------------------------------------- */

static bool sig_equal(const struct file_sig *a, const struct file_sig *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime.tv_sec == b->mtime.tv_sec && a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* The whole file, NUL-terminated; past @max bytes -EFBIG. */
static int read_all(const char *path, uint64_t max, char **ret_buf, size_t *ret_len)
{
	size_t len = 0, cap = 0, want;
	char *buf = NULL, *p;
	ssize_t n;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	do {
		if (len + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			p = realloc(buf, cap);
			if (!p) {
				err = -ENOMEM;
				break;
			}
			buf = p;
		}
		/* one byte past the bound tells a file of max bytes from a longer one */
		want = cap - 1 - len < max + 1 - len ? cap - 1 - len : max + 1 - len;
		n = read(fd, buf + len, want);
		if (n < 0 && errno != EINTR)
			err = -errno;
		else if (n > 0)
			len += (size_t)n;
		if (len > max)
			err = -EFBIG;
	} while (!err && n);
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	buf[len] = '\0';
	*ret_buf = buf;
	*ret_len = len;
	return 0;
}

static int file_fetch(struct podsrc *src, char *why)
{
	struct file *f = &src->f;
	struct file_sig sig;
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int err;

	if (stat(f->path, &st)) {
		err = -errno;
		f->has_sig = false;
		snprintf(why, WHY_LEN, "stat: %s", strerror(-err));
		return err;
	}
	sig = (struct file_sig){ st.st_dev, st.st_ino, st.st_size, st.st_mtim };
	if (f->has_sig && sig_equal(&sig, &f->sig)) {
		/* same version as last time: its verdict stands, without reading it again */
		if (f->sig_err)
			snprintf(why, WHY_LEN, "%s", f->sig_why);
		return f->sig_err;
	}
	/* never read what would be rejected; the size is checked again while reading */
	err = (uint64_t)st.st_size > src->max_bytes ? -EFBIG :
						      read_all(f->path, src->max_bytes, &buf, &len);
	if (err == -EFBIG)
		too_big_why(src, why);
	else if (err)
		snprintf(why, WHY_LEN, "read: %s", strerror(-err));
	else
		err = adopt_body(src, buf ? buf : "", len, why);
	free(buf);
	f->has_sig = true;
	f->sig = sig;
	f->sig_err = err < 0 ? err : 0;
	snprintf(f->sig_why, sizeof(f->sig_why), "%s", err < 0 ? why : "");
	if (err < 0)
		src->log_again = true;
	return err;
}

/* ---- static groups -------------------------------------------------------------------------- */

void pod_static_uid(const char *name, char *buf)
{
	static const char prefix[] = "kqos-static/";
	uint64_t h1 = fnv1a(fnv1a(FNV_INIT, prefix, sizeof(prefix) - 1), name, strlen(name));
	/* second half: same input, different offset basis, so the halves are independent */
	uint64_t h2 = fnv1a(fnv1a(FNV_INIT ^ 0x9e3779b97f4a7c15ULL, prefix, sizeof(prefix) - 1),
			    name, strlen(name));

	h1 = (h1 & ~0xf000ULL) | 0x8000ULL; /* version 8 */
	h2 = (h2 & ~(3ULL << 62)) | (2ULL << 62); /* RFC 9562 variant */
	snprintf(buf, 37, "%08llx-%04llx-%04llx-%04llx-%012llx", (unsigned long long)(h1 >> 32),
		 (unsigned long long)((h1 >> 16) & 0xffff), (unsigned long long)(h1 & 0xffff),
		 (unsigned long long)(h2 >> 48), (unsigned long long)(h2 & 0xffffffffffffULL));
}

static bool static_name_is_valid(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > STATIC_NAME_MAX)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == n;
}

/* No ".." component: a pattern may not climb out of the hierarchy before glob even runs. */
static bool pattern_is_safe(const char *p)
{
	size_t n = p ? strlen(p) : 0;

	if (!n || n >= PATH_MAX)
		return false;
	for (const char *s = p; (s = strstr(s, "..")); s += 2) {
		bool start = s == p || s[-1] == '/';
		bool end = s[2] == '\0' || s[2] == '/';

		if (start && end)
			return false;
	}
	return true;
}

static enum pod_k8s_qos k8s_qos_for_class(enum pod_qos qos)
{
	switch (qos) {
	case POD_QOS_LSE:
	case POD_QOS_LSR:
		return POD_K8S_QOS_GUARANTEED;
	case POD_QOS_BE:
		return POD_K8S_QOS_BESTEFFORT;
	default:
		return POD_K8S_QOS_BURSTABLE;
	}
}

static int validate_groups(const struct podsrc_static_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const char *name = g[i].name ? g[i].name : "";

		if (!static_name_is_valid(name)) {
			log_err("bad bare-metal group name",
				"index=%zu want=\"[A-Za-z0-9._-]{1,63}\"", i);
			return -EINVAL;
		}
		for (size_t j = 0; j < i; j++) {
			if (!strcmp(g[j].name, name)) {
				log_err("duplicate bare-metal group name", "group=%s", name);
				return -EINVAL;
			}
		}
		if (pod_qos_from_name(g[i].qos_class) == POD_QOS_NONE) {
			log_err("bad bare-metal group qosClass",
				"group=%s want=LSE|LSR|LS|BE|SYSTEM", name);
			return -EINVAL;
		}
		if (!pattern_is_safe(g[i].cgroup)) {
			log_err("bad bare-metal group cgroup",
				"group=%s want=\"path or glob, no ..\"", name);
			return -EINVAL;
		}
	}
	return 0;
}

/* Matches as paths relative to @root_real ("/" for the root itself); symlink escapes dropped. */
static int expand_one(const char *root_real, const char *pattern, struct pod *pod)
{
	size_t rlen = strlen(root_real);
	char *full = NULL;
	glob_t gl;
	int err = 0, rc;

	while (*pattern == '/')
		pattern++;
	if (asprintf(&full, "%s/%s", root_real, pattern) < 0)
		return -ENOMEM;
	rc = glob(full, GLOB_NOESCAPE | GLOB_ONLYDIR, NULL, &gl);
	free(full);
	if (rc == GLOB_NOMATCH)
		return 0;
	if (rc) {
		globfree(&gl);
		return rc == GLOB_NOSPACE ? -ENOMEM : -EIO;
	}
	pod->cgroups = calloc(gl.gl_pathc + 1, sizeof(*pod->cgroups));
	if (!pod->cgroups) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < gl.gl_pathc; i++) {
		char real[PATH_MAX];
		struct stat st;

		if (!realpath(gl.gl_pathv[i], real) || stat(real, &st) || !S_ISDIR(st.st_mode))
			continue;
		if (strncmp(real, root_real, rlen) || (real[rlen] != '/' && real[rlen] != '\0'))
			continue;
		pod->cgroups[pod->nr_cgroups] = strdup(real[rlen] ? real + rlen : "/");
		if (!pod->cgroups[pod->nr_cgroups]) {
			err = -ENOMEM;
			goto out;
		}
		pod->nr_cgroups++;
	}
out:
	globfree(&gl);
	return err;
}

static int build_static_pod(const struct podsrc_static_group *g, const char *root_real,
			    struct pod *pod)
{
	char uid[37];

	pod_static_uid(g->name, uid);
	pod->uid = strdup(uid);
	pod->name = strdup(g->name);
	pod->namespace = strdup(STATIC_NAMESPACE);
	if (!pod->uid || !pod->name || !pod->namespace)
		return -ENOMEM;
	pod->phase = POD_PHASE_RUNNING;
	pod->is_active = true;
	pod->is_static = true;
	pod->qos_raw = pod_qos_from_name(g->qos_class);
	pod->qos = pod->qos_raw;
	pod->k8s_qos = k8s_qos_for_class(pod->qos);
	pod->prio_raw = POD_PRIO_NONE;
	pod->prio = pod_prio_from_qos(pod->qos);
	pod->wait_target_ns = g->wait_target_ns;
	return expand_one(root_real, g->cgroup, pod);
}

int pod_static_expand(const struct podsrc_static_group *groups, size_t nr_groups,
		      const char *cgroup_root, struct pod_list **ret_list)
{
	struct pod_list *list = NULL;
	char root_real[PATH_MAX];
	int err;

	err = validate_groups(groups, nr_groups);
	if (err)
		return err;
	/* not logged: the source reports it once per state change */
	if (!cgroup_root || !realpath(cgroup_root, root_real))
		return cgroup_root ? -errno : -EINVAL;
	list = pod_list__new();
	if (!list)
		return -ENOMEM;
	list->pods = calloc(nr_groups + 1, sizeof(*list->pods));
	if (!list->pods) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nr_groups; i++) {
		err = build_static_pod(&groups[i], root_real, &list->pods[i]);
		list->nr_pods++;
		if (err)
			goto out;
	}
	*ret_list = list;
	list = NULL;
out:
	pod_list__put(list);
	return err;
}

static uint64_t list_hash(const struct pod_list *list)
{
	uint64_t h = FNV_INIT;

	for (size_t i = 0; i < list->nr_pods; i++) {
		const struct pod *p = &list->pods[i];

		h = fnv1a(h, p->uid, strlen(p->uid) + 1);
		for (size_t j = 0; j < p->nr_cgroups; j++)
			h = fnv1a(h, p->cgroups[j], strlen(p->cgroups[j]) + 1);
		h = fnv1a(h, "", 1);
	}
	return h;
}

static int static_fetch(struct podsrc *src, char *why)
{
	struct pod_list *list = NULL;
	uint64_t h;
	int err;

	err = pod_static_expand(src->g.groups, src->g.nr_groups, src->g.root, &list);
	if (err) {
		snprintf(why, WHY_LEN, "expanding groups: %s", strerror(-err));
		return err;
	}
	h = list_hash(list);
	if (src->list && h == src->body_hash) {
		pod_list__put(list);
		return 0;
	}
	podsrc_log_issues(list);
	pod_list__put(src->list);
	src->list = list;
	src->body_hash = h;
	return 1;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

void podsrc__poll_now(struct podsrc *src)
{
	/* only the static groups see new cgroups; the kubelet and the file keep their cadence */
	if (src && src->kind == PODSRC_STATIC)
		src->next_poll_ns = 0;
}

int podsrc__poll(struct podsrc *src, uint64_t now_ns)
{
	char why[WHY_LEN] = "";
	int ret;

	if (!src || now_ns < src->next_poll_ns)
		return 0;
	switch (src->kind) {
	case PODSRC_KUBELET:
		ret = kubelet_fetch(src, why);
		break;
	case PODSRC_FILE:
		ret = file_fetch(src, why);
		break;
	default:
		ret = static_fetch(src, why);
		break;
	}
	if (ret < 0) {
		note_failure(src, now_ns, ret, why);
		return 0;
	}
	note_success(src, now_ns);
	return ret;
}

static char *dup_opt(const char *s, bool *oom)
{
	char *d;

	if (!s || !*s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static struct podsrc *src_alloc(enum podsrc_kind kind, uint32_t interval_ms, uint32_t def_ms)
{
	struct podsrc *src = calloc(1, sizeof(*src));

	if (!src)
		return NULL;
	src->kind = kind;
	src->state = SRC_INIT;
	src->interval_ms = interval_ms ? interval_ms : def_ms;
	src->max_backoff_ms = src->interval_ms;
	return src;
}

int podsrc_kubelet__new(const struct podsrc_kubelet_opts *opts, struct podsrc **ret_src)
{
	struct podsrc *src;
	bool oom = false;
	int err;

	src = src_alloc(PODSRC_KUBELET, opts->interval_ms, DEFAULT_KUBE_IVAL);
	if (!src)
		return -ENOMEM;
	src->max_backoff_ms = opts->max_backoff_ms ? opts->max_backoff_ms : DEFAULT_BACKOFF_MS;
	src->k.url = dup_opt(opts->url ? opts->url : DEFAULT_KUBELET, &oom);
	src->k.timeout_ms = opts->timeout_ms ? opts->timeout_ms : DEFAULT_TIMEOUT_MS;
	src->max_bytes = opts->max_bytes ? opts->max_bytes : PODSRC_MAX_BYTES;
	src->max_pods = opts->max_pods ? opts->max_pods : PODSRC_MAX_PODS;
	src->origin = src->k.url;
	if (oom || !src->k.url) {
		err = -ENOMEM;
		goto err_free;
	}
	if (strncmp(src->k.url, "https://", 8) && strncmp(src->k.url, "http://", 7)) {
		log_err("kubelet url must be http:// or https://", "url=\"%s\"", src->k.url);
		err = -EINVAL;
		goto err_free;
	}
	/* the kubelet is on this node: an https_proxy inherited from the pod env must not apply */
	err = kube_client__new(&(struct kube_client_opts){ .base_url = src->k.url,
							   .token_path = opts->token_path,
							   .ca_path = opts->ca_path,
							   .insecure_skip_verify =
								   opts->insecure_skip_verify,
							   .no_proxy = true,
							   .accept_encoding = true,
							   .max_body_bytes = src->max_bytes },
			       &src->k.kube);
	if (err)
		goto err_free;
	*ret_src = src;
	return 0;
err_free:
	podsrc__free(src);
	return err;
}

int podsrc_file__new(const struct podsrc_file_opts *opts, struct podsrc **ret_src)
{
	struct podsrc *src;

	if (!opts->path || !*opts->path) {
		log_err("pod list file source needs a path", NULL);
		return -EINVAL;
	}
	src = src_alloc(PODSRC_FILE, opts->interval_ms, DEFAULT_FILE_IVAL);
	if (!src)
		return -ENOMEM;
	src->max_bytes = opts->max_bytes ? opts->max_bytes : PODSRC_MAX_BYTES;
	src->max_pods = opts->max_pods ? opts->max_pods : PODSRC_MAX_PODS;
	src->f.path = strdup(opts->path);
	if (!src->f.path) {
		podsrc__free(src);
		return -ENOMEM;
	}
	src->origin = src->f.path;
	*ret_src = src;
	return 0;
}

int podsrc_static__new(const struct podsrc_static_opts *opts, struct podsrc **ret_src)
{
	struct podsrc *src;
	bool oom = false;
	int err;

	err = validate_groups(opts->groups, opts->nr_groups);
	if (err)
		return err;
	src = src_alloc(PODSRC_STATIC, opts->interval_ms, DEFAULT_STAT_IVAL);
	if (!src)
		return -ENOMEM;
	src->g.root = dup_opt(opts->cgroup_root, &oom);
	src->g.groups = calloc(opts->nr_groups + 1, sizeof(*src->g.groups));
	src->origin = src->g.root ? src->g.root : "";
	if (!src->g.groups || oom || !src->g.root) {
		err = oom || src->g.root ? -ENOMEM : -EINVAL;
		goto err_free;
	}
	for (size_t i = 0; i < opts->nr_groups; i++) {
		struct podsrc_static_group *g = &src->g.groups[i];

		g->name = dup_opt(opts->groups[i].name, &oom);
		g->cgroup = dup_opt(opts->groups[i].cgroup, &oom);
		g->qos_class = dup_opt(opts->groups[i].qos_class, &oom);
		g->wait_target_ns = opts->groups[i].wait_target_ns;
		src->g.nr_groups++;
		if (oom) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	*ret_src = src;
	return 0;
err_free:
	podsrc__free(src);
	return err;
}

void podsrc__free(struct podsrc *src)
{
	if (!src)
		return;
	pod_list__put(src->list);
	free(src->k.url);
	kube_client__free(src->k.kube);
	free(src->f.path);
	for (size_t i = 0; i < src->g.nr_groups; i++) {
		free((char *)src->g.groups[i].name);
		free((char *)src->g.groups[i].cgroup);
		free((char *)src->g.groups[i].qos_class);
	}
	free(src->g.groups);
	free(src->g.root);
	free(src);
}
