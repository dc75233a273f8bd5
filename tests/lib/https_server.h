/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_HTTPS_SERVER_H
#define KQOS_TESTS_HTTPS_SERVER_H

#include <stdbool.h>

/*
 * A fake kubelet for tests: a python3 http.server on 127.0.0.1 (port picked by the kernel),
 * over TLS with a fresh self-signed certificate (openssl CLI, SAN IP:127.0.0.1) or plain
 * HTTP. Any other GET path P is served (200) from the state file "get" + P with '/' as '_'
 * when it exists (the API server's objects; last_get records P), else 404.
 * It serves GET /pods from files in its state directory, read on every request:
 *   body          the response body (200)
 *   expect_token  when present: "Authorization: Bearer <content>" is required, else 401
 *   mode          "ok" (default), "garbage" (200 with a non-JSON body), "slow" (sleep 5 s
 *                 first), "500"
 * POST (any path; the Eviction and Event APIs) answers by post_mode: "ok" (201 and a Status),
 * "429", "404", "500", "garbage" (201 with a non-JSON body), "slow" (sleep 5 s first); it
 * records "POST <path>\n<body>" of the last one in last_post and appends each path to posts.
 * The server also records:
 *   last_auth     the Authorization header of the last request
 *   requests      the number of requests served
 * The server exits on its own when the test process that started it is gone, so a crashed
 * test leaves nothing behind.
 */
struct https_server;

/* 0 or -errno; on success *ret is ready to serve. */
int https_server__start(bool tls, struct https_server **ret);
/* Kill the server (it "goes away"); the state directory stays. Idempotent. */
void https_server__stop(struct https_server *srv);
/* Stop, remove the state directory, free. NULL-safe. */
void https_server__free(struct https_server *srv);

/* Atomically replace file @name in the state directory (or in any directory via a '/' path). */
int https_server__write(struct https_server *srv, const char *name, const char *content);
/* Copy a file (a fixture) into the state directory as @name. */
int https_server__copy(struct https_server *srv, const char *name, const char *src_path);
/* Content of a state file, malloc'd, or NULL. */
char *https_server__read(struct https_server *srv, const char *name);
int https_server__requests(struct https_server *srv);

const char *https_server__url(const struct https_server *srv); /* http(s)://127.0.0.1:P/pods */
/* http(s)://127.0.0.1:P, the API server's base URL */
const char *https_server__base(const struct https_server *srv);
const char *https_server__ca(const struct https_server *srv); /* the cert PEM, or NULL */
const char *https_server__dir(const struct https_server *srv);

#endif
