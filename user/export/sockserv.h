/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_EXPORT_SOCKSERV_H
#define KQOS_EXPORT_SOCKSERV_H

#include <stddef.h>
#include <stdint.h>

/*
 * The snapshot socket: a unix stream socket serving newline-delimited requests with one JSON
 * line per answer (docs/export.md). Single-threaded, non-blocking: clients are bounded in number
 * and in queued output, and a client whose queue would overflow is disconnected, so a slow or
 * stuck reader never stalls the agent loop.
 */
#define SOCKSERV_MAX_CLIENTS 32
#define SOCKSERV_MAX_OUT     (16u << 20) /* queued bytes per client */
#define SOCKSERV_MAX_LINE    1024 /* request line length */
#define SOCKSERV_IDLE_NS     (10ULL * 1000000000ULL) /* a full server drops one idle this long */

/*
 * The current snapshot as one JSON text (no newline), borrowed until the next publish; NULL
 * when there is none yet. Called lazily, only when a client asks.
 */
typedef const char *(*sockserv_json_fn)(void *ctx, size_t *ret_len);
/* A small status object (JSON, malloc'd) for the `status` request; NULL on -ENOMEM. */
typedef char *(*sockserv_status_fn)(void *ctx);

struct sockserv_opts {
	const char *path;
	const char *group; /* NULL/"" keeps the creator's group and mode 0600; else 0660 */
	unsigned int max_clients; /* 0 = SOCKSERV_MAX_CLIENTS */
	size_t max_out; /* 0 = SOCKSERV_MAX_OUT */
	uint64_t idle_ns; /* 0 = SOCKSERV_IDLE_NS */
	sockserv_json_fn json;
	sockserv_status_fn status;
	sockserv_status_fn health; /* the `health` request: {"ok":...} (docs/export.md) */
	void *ctx;
};

struct sockserv;

/*
 * Bind and listen at opts->path (its directory is created 0755 when missing). A stale socket
 * file is replaced; a live one (another agent answers) is -EADDRINUSE. 0 or -errno, logged.
 */
int sockserv__new(const struct sockserv_opts *opts, struct sockserv **ret);
/* NULL-safe; disconnects every client and unlinks the socket file. */
void sockserv__free(struct sockserv *s);

/* Nested epoll fd over the listener and the clients: readable when dispatch has work. */
int sockserv__epoll_fd(const struct sockserv *s);
/* Accept, read requests, answer, flush; never blocks. */
void sockserv__dispatch(struct sockserv *s);
/* A new snapshot exists: send it to every watching client (asks the json callback once). */
void sockserv__publish(struct sockserv *s);

unsigned int sockserv__nr_clients(const struct sockserv *s);
/* Clients disconnected because their output queue was full, since start. */
uint64_t sockserv__nr_dropped(const struct sockserv *s);

#endif
