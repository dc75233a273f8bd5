/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TOP_TOP_H
#define KQOS_TOP_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/*
 * kqos-top: the model (one snapshot JSON from the socket -> header and a tree of rows,
 * top_model.c), the socket client (top_conn.c), the curses view (top_view.c) and main
 * (top_main.c). Columns and keys: docs/kqos-top.md.
 */

enum top_col {
	COL_NAME,
	COL_CLASS,
	COL_PQ, /* priority+QoS class */
	COL_CPU,
	COL_RQ_P99,
	COL_THR,
	COL_CPI,
	COL_LLC,
	COL_MBPS,
	COL_CPUSET,
	COL_RDT,
	NR_COLS,
};

struct top_row {
	int depth; /* 0 pod or cgroup, 1 container */
	char key[192]; /* stable identity across snapshots: uid, uid/container, cgroup path */
	char name[160]; /* "namespace/pod", container name, or cgroup path */
	char cls[8];
	char pq[16]; /* "koord-mid/LS"; "" for an invalid pair or a cgroup outside pods */
	bool has[NR_COLS];
	double v[NR_COLS];
	char cpuset[64];
	char rdt[64];
	struct top_row *kids;
	size_t nr_kids;
};

#define TOP_RECENT 3
#define TOP_LINE   512 /* a header or table line */

struct top_header {
	unsigned long long seq;
	double time;
	int cpus;
	bool has_cpu_used;
	double cpu_used;
	char source[32];
	bool stale;
	size_t nr_pods;
	double ls_cores, be_cores; /* LSE+LSR+LS and BE class CPU */
	char classes[160]; /* "LSR 2p 0.10  LS 1p 1.50 ..." */
	char allowance[192]; /* BE cpus and quota, enforcement mode */
	char resctrl[256];
	char recent[TOP_RECENT][192];
	int nr_recent;
};

struct top_model {
	struct top_header hdr;
	struct top_row *rows;
	size_t nr_rows;
};

/* Parse one socket JSON line. 0, -EINVAL (not a snapshot; *ret untouched) or -ENOMEM. */
int top_model__parse(const char *json, struct top_model **ret);
void top_model__free(struct top_model *m);

/* Sort rows and their children by @col (absent values last either way); names break ties. */
void top_model__sort(struct top_model *m, enum top_col col, bool descending);

/* Case-insensitive: does the row or (for a pod) one of its children match @filter? */
bool top_row__matches(const struct top_row *r, const char *filter);

const char *top_col_name(enum top_col col);
int top_col_width(enum top_col col);
/* One cell as text ("-" when the metric is absent on this host). */
void top_cell(const struct top_row *r, enum top_col col, char *buf, size_t len);
/* The header lines (without the table), up to @max; returns how many. */
int top_header_lines(const struct top_header *h, char lines[][TOP_LINE], int max);
/* One table line for @r (@tree: the name prefix drawn before the name). */
void top_format_row(const struct top_row *r, const char *tree, char *buf, size_t len);
void top_format_title(char *buf, size_t len);

/* Batch mode: header and the whole table (children under their parents, @filter applied). */
void top_print_batch(FILE *f, const struct top_model *m, const char *filter);
/* The `status` answer @line as text: the agent, then its time per tick stage. -EPROTO: not JSON. */
int top_status_print(FILE *f, const char *line);

/* The socket client: connect, request one snapshot line. */
struct top_conn;
int top_conn__open(const char *path, struct top_conn **ret);
void top_conn__free(struct top_conn *c);
int top_conn__fd(const struct top_conn *c);
/* Send "snapshot\n". */
int top_conn__request(struct top_conn *c);
/*
 * Read what is available; 1 and *ret_line (malloc'd, no newline) when a whole line arrived,
 * 0 when more is needed, -errno (-EPIPE on EOF) when the connection is gone.
 */
int top_conn__read(struct top_conn *c, char **ret_line);
/* Request and wait up to @timeout_ms for the answer line. */
int top_conn__get(struct top_conn *c, int timeout_ms, char **ret_line);
/* The same for any request line (@req without its newline): "health", "status". */
int top_conn__call(struct top_conn *c, const char *req, int timeout_ms, char **ret_line);

struct top_view_opts {
	double interval_s;
	const char *filter;
};
/* The curses loop; returns EXIT_SUCCESS on `q`, EXIT_FAILURE when the agent went away. */
int top_view_run(struct top_conn *c, const struct top_view_opts *o);

#endif
