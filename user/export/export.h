/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_EXPORT_EXPORT_H
#define KQOS_EXPORT_EXPORT_H

#include <stdint.h>

#include "snapshot.h"

/*
 * What people see of the agent: the Prometheus textfile (export_prom.c) and the snapshot socket
 * (sockserv.c) behind one object the agent loop drives. Protocol and metrics: docs/export.md.
 */

#define EXPORT_TEXTFILE_INTERVAL_NS (10ULL * 1000000000ULL)
#define EXPORT_SOCKET_DEFAULT	    "/run/kqos/kqos.sock"

struct export_opts {
	const char *textfile_dir; /* NULL/"" = no textfile */
	uint64_t textfile_interval_ns; /* default 10 s (0 = default) */
	const char *socket_path; /* NULL/"" = no socket */
	const char *socket_group; /* NULL/"" = keep root's group; else chown to that group */
	/*
	 * The `health` request answers ok while the last snapshot is at most this old (0 = 10 s):
	 * the agent sets a few tick intervals, so a loop that stopped ticking or a collector
	 * that stopped reading turns the health check red.
	 */
	uint64_t health_max_age_ns;
};

struct exporter;
struct agent_stages;

/*
 * 0 or -errno (logged). A textfile directory that does not exist is created (mode 0755, with
 * its parents); one that cannot be created is -errno here, so kqosd refuses to start instead
 * of failing every write.
 */
int exporter__new(const struct export_opts *opts, struct exporter **ret);
/* NULL-safe; closes the clients and removes the socket file. */
void exporter__free(struct exporter *e);

/*
 * An epoll fd (nested epoll over the listening socket and the clients), -1 when no socket.
 * The agent adds it to its own epoll with EPOLLIN and calls exporter__dispatch when ready.
 */
int exporter__epoll_fd(const struct exporter *e);
void exporter__dispatch(struct exporter *e, uint64_t now_ns);

/*
 * After every tick: keep a reference to @snap and a copy of the enforcement state published
 * beside it (@en; NULL: nothing enforced) for clients (drop the previous ones), write the
 * textfile when textfile_interval_ns has passed since the last write. Never blocks.
 */
void exporter__publish(struct exporter *e, struct snapshot *snap, const struct snap_enforce *en,
		       uint64_t now_ns);

/*
 * The socket's JSON for @s (malloc'd, one line without newline; NULL on -ENOMEM): the snapshot
 * JSON of docs/snapshot.md plus an "agent" object (version, pid, exporter health; docs/export.md).
 */
char *exporter__snapshot_json(const struct exporter *e, const struct snapshot *s,
			      const struct snap_enforce *en);
/* Failed textfile writes since start. */
/* The agent's own timers, shown by the status request and the textfile; @st outlives @e. */
void exporter__set_stages(struct exporter *e, const struct agent_stages *st);
uint64_t exporter__textfile_write_errors(const struct exporter *e);

#endif
