// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include <jansson.h>

#include "export.h"
#include "export_prom.h"
#include "snapjson.h"
#include "log.h"
#include "sockserv.h"

#ifndef KQOS_VERSION
#define KQOS_VERSION "unknown"
#endif

struct exporter {
	char *textfile_dir;
	uint64_t textfile_interval_ns;
	bool textfile_written;
	uint64_t textfile_last_ns;
	int textfile_last_err; /* log a failure once while it persists */
	struct prom_health health;
	struct sockserv *sock;
	struct snapshot *snap; /* a reference to the last published snapshot */
	struct snap_enforce enforce; /* what enforcement did in that tick */
	uint64_t publish_ns; /* CLOCK_MONOTONIC of its publish */
	uint64_t health_max_age_ns;
	char *json; /* its socket JSON, built on first demand */
	size_t json_len;
};

/* --- socket JSON: the snapshot plus the agent's own status ----------------------------------- */

static void set_new(json_t *o, const char *k, json_t *v)
{
	if (v)
		json_object_set_new(o, k, v);
}

static json_t *agent_json(const struct exporter *e)
{
	json_t *o = json_pack("{s:s, s:i, s:I}", "version", KQOS_VERSION, "pid", (int)getpid(),
			      "textfile_write_errors", (json_int_t)e->health.textfile_write_errors);

	if (o && e->sock) {
		set_new(o, "socket_clients", json_integer(sockserv__nr_clients(e->sock)));
		set_new(o, "socket_dropped",
			json_integer((json_int_t)sockserv__nr_dropped(e->sock)));
	}
	return o;
}

/* Keys the snapshot JSON may gain later win: add ours only where absent. */
static void add_missing(json_t *root, const char *key, json_t *v)
{
	if (json_object_get(root, key))
		json_decref(v);
	else
		set_new(root, key, v);
}

char *exporter__snapshot_json(const struct exporter *e, const struct snapshot *s,
			      const struct snap_enforce *en)
{
	char *text = snapjson_format(s, en, false), *out;
	json_t *root;

	if (!text)
		return NULL;
	root = json_loads(text, 0, NULL);
	free(text);
	if (!root)
		return NULL;
	add_missing(root, "agent", agent_json(e));
	out = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	return out;
}

static const char *sock_json(void *ctx, size_t *ret_len)
{
	struct exporter *e = ctx;

	if (!e->snap)
		return NULL;
	if (!e->json) {
		e->json = exporter__snapshot_json(e, e->snap, &e->enforce);
		if (!e->json)
			return NULL;
		e->json_len = strlen(e->json);
	}
	*ret_len = e->json_len;
	return e->json;
}

static json_t *stage_json(const struct stage_hist *h)
{
	json_t *b = json_array();

	for (int i = 0; b && i < STAGE_BUCKETS; i++)
		json_array_append_new(b, json_integer((json_int_t)h->bucket[i]));
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:o*}", "count", (json_int_t)h->count,
			 "mean_us", h->count ? (double)h->sum_ns / 1e3 / (double)h->count : 0.0,
			 "last_us", h->last_ns / 1e3, "max_us", h->max_ns / 1e3, "p50_us",
			 stage_quantile_us(h, 0.5), "p99_us", stage_quantile_us(h, 0.99), "buckets",
			 b);
}

/* Per stage of the tick; bucket i holds durations up to 2^i us, the last everything above. */
static json_t *stages_json(const struct agent_stages *st)
{
	json_t *o = json_object();

	for (int sg = 0; o && sg < STAGE_NR; sg++)
		set_new(o, stage_name(sg), stage_json(&st->s[sg]));
	return o;
}

static char *sock_status(void *ctx)
{
	struct exporter *e = ctx;
	json_t *o = agent_json(e);
	char *text;

	if (!o)
		return NULL;
	if (e->health.stages)
		set_new(o, "stages", stages_json(e->health.stages));
	if (e->snap) {
		set_new(o, "seq", json_integer((json_int_t)e->snap->seq));
		set_new(o, "time", json_real(e->snap->wall_ns / 1e9));
	}
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/*
 * Answered by the loop itself: a stuck loop does not answer at all (the client times out), a
 * loop whose ticks stopped producing snapshots answers with an old age and ok=false.
 */
static char *sock_health(void *ctx)
{
	struct exporter *e = ctx;
	uint64_t age_ns = e->snap ? mono_ns() - e->publish_ns : 0;
	bool ok = e->snap && age_ns <= e->health_max_age_ns;
	json_t *o = json_pack("{s:b, s:I, s:I}", "ok", ok, "max_age_ms",
			      (json_int_t)(e->health_max_age_ns / 1000000ULL), "pid",
			      (json_int_t)getpid());
	char *text;

	if (!o)
		return NULL;
	if (e->snap) {
		set_new(o, "seq", json_integer((json_int_t)e->snap->seq));
		set_new(o, "age_ms", json_integer((json_int_t)(age_ns / 1000000ULL)));
	}
	if (!ok)
		set_new(o, "reason",
			json_string(e->snap ? "no new snapshot within max_age_ms" :
					      "no snapshot yet"));
	text = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	return text;
}

/* --- textfile ----------------------------------------------------------------------------- */

/* mkdir -p: node_exporter's directory may not exist yet on a fresh host. */
static int make_dir(const char *dir)
{
	char buf[PATH_MAX];
	struct stat st;

	if (snprintf(buf, sizeof(buf), "%s", dir) >= (int)sizeof(buf))
		return -ENAMETOOLONG;
	for (char *p = buf + 1;; p++) {
		char c = *p;

		if (c && c != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = c;
		if (!c)
			break;
	}
	if (stat(dir, &st))
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

static void write_textfile(struct exporter *e, const struct snapshot *s, uint64_t now_ns)
{
	char *text = NULL;
	size_t len = 0;
	int err;

	e->textfile_written = true;
	e->textfile_last_ns = now_ns;
	err = prom_render(s, &e->enforce, &e->health, &text, &len);
	if (!err)
		err = prom_write_textfile(e->textfile_dir, text, len);
	free(text);
	if (err) {
		e->health.textfile_write_errors++;
		if (err != e->textfile_last_err)
			log_warn("cannot write the prometheus textfile", "dir=%s err=%d (%s)",
				 e->textfile_dir, err, strerror(-err));
	} else if (e->textfile_last_err) {
		log_info("prometheus textfile written again", "dir=%s", e->textfile_dir);
	}
	e->textfile_last_err = err;
}

/* --- the object --------------------------------------------------------------------------- */

int exporter__new(const struct export_opts *opts, struct exporter **ret)
{
	struct exporter *e = calloc(1, sizeof(*e));
	int err = 0;

	if (!e)
		return -ENOMEM;
	e->textfile_interval_ns = opts->textfile_interval_ns ? opts->textfile_interval_ns :
							       EXPORT_TEXTFILE_INTERVAL_NS;
	if (opts->textfile_dir && *opts->textfile_dir) {
		e->textfile_dir = strdup(opts->textfile_dir);
		if (!e->textfile_dir) {
			err = -ENOMEM;
			goto err_free;
		}
		err = make_dir(e->textfile_dir);
		if (err) {
			log_err("cannot create the prometheus textfile directory",
				"dir=%s err=%d (%s)", e->textfile_dir, err, strerror(-err));
			goto err_free;
		}
		prom_sweep_temp(e->textfile_dir);
	}
	e->health_max_age_ns = opts->health_max_age_ns ? opts->health_max_age_ns :
							 10ULL * 1000000000ULL;
	if (opts->socket_path && *opts->socket_path) {
		struct sockserv_opts so = { .path = opts->socket_path,
					    .group = opts->socket_group,
					    .json = sock_json,
					    .status = sock_status,
					    .health = sock_health,
					    .ctx = e };

		err = sockserv__new(&so, &e->sock);
		if (err)
			goto err_free;
	}
	log_info("exporter ready", "textfile_dir=%s socket=%s",
		 e->textfile_dir ? e->textfile_dir : "-",
		 opts->socket_path && *opts->socket_path ? opts->socket_path : "-");
	*ret = e;
	return 0;
err_free:
	exporter__free(e);
	return err;
}

void exporter__set_stages(struct exporter *e, const struct agent_stages *st)
{
	e->health.stages = st;
}

void exporter__free(struct exporter *e)
{
	if (!e)
		return;
	free(e->textfile_dir);
	sockserv__free(e->sock);
	snapshot__put(e->snap);
	free(e->json);
	free(e);
}

int exporter__epoll_fd(const struct exporter *e)
{
	return e ? sockserv__epoll_fd(e->sock) : -1;
}

void exporter__dispatch(struct exporter *e, uint64_t now_ns)
{
	if (e)
		sockserv__dispatch(e->sock);
}

void exporter__publish(struct exporter *e, struct snapshot *snap, const struct snap_enforce *en,
		       uint64_t now_ns)
{
	static const struct snap_enforce none;

	if (!e || !snap)
		return;
	snapshot__put(e->snap);
	e->snap = snapshot__ref(snap);
	e->enforce = en ? *en : none;
	e->publish_ns = now_ns;
	free(e->json);
	e->json = NULL;
	if (e->textfile_dir &&
	    (!e->textfile_written || now_ns - e->textfile_last_ns >= e->textfile_interval_ns))
		write_textfile(e, snap, now_ns);
	sockserv__publish(e->sock);
}

uint64_t exporter__textfile_write_errors(const struct exporter *e)
{
	return e ? e->health.textfile_write_errors : 0;
}
