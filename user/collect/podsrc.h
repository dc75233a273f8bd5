/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_PODSRC_H
#define KQOS_COLLECT_PODSRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pod.h"

/*
 * Pod sources: where the pod list comes from. Each source is polled from the main loop with
 * the current CLOCK_MONOTONIC time; it does its work only when due (interval, or back-off
 * after a failure) and otherwise returns at once. On failure a source keeps its last good
 * list, marks itself stale and logs once per state change (ok -> stale, stale -> ok).
 *
 * The kubelet source blocks for at most its timeout inside podsrc__poll().
 */

/*
 * What one pod list may cost: its text is held whole and parsed into a JSON tree (a few times
 * the text), so the bytes bound the memory and the time of a poll; the items bound the list
 * kept. 5000 pods from the kubelet are about 10 MB. A list past either bound is rejected with
 * a message naming the bound; the source keeps its last good list and goes stale.
 */
#define PODSRC_MAX_BYTES (32u << 20)
#define PODSRC_MAX_PODS	 10000

enum podsrc_kind {
	PODSRC_KUBELET,
	PODSRC_FILE,
	PODSRC_STATIC,
};

struct podsrc;

/* Defaults apply to zero/NULL fields. */
struct podsrc_kubelet_opts {
	const char *url; /* default "https://127.0.0.1:10250/pods" */
	const char *token_path; /* bearer token, re-read on every poll; NULL: no Authorization */
	const char *ca_path; /* PEM bundle for the kubelet's serving cert; NULL: system CAs */
	bool insecure_skip_verify; /* no certificate or host name check (kubelet self-signed) */
	uint32_t timeout_ms; /* whole request, default 3000 */
	uint32_t interval_ms; /* between good polls, default 10000 */
	uint32_t max_backoff_ms; /* cap of the doubling retry delay, default 60000 */
	uint64_t max_bytes; /* a larger body is rejected unread, default PODSRC_MAX_BYTES */
	uint32_t max_pods; /* a list with more items is rejected, default PODSRC_MAX_PODS */
};

struct podsrc_file_opts {
	const char *path; /* PodList JSON in kubelet's shape */
	uint32_t interval_ms; /* stat() period, default 1000 */
	uint64_t max_bytes; /* as for the kubelet */
	uint32_t max_pods;
};

/*
 * A bare-metal group from the config file. @cgroup is a path or a glob(3) pattern relative
 * to the hierarchy root ("/batch", "/batch/job-[0-9]?", "/system.slice/db?*.service");
 * @qos_class one of LSE|LSR|LS|BE|SYSTEM. Each group becomes one pod: uid derived from the
 * name (see pod_static_uid()), namespace "bare-metal", no containers, the matched directories
 * in pod->cgroups.
 */
struct podsrc_static_group {
	const char *name; /* [A-Za-z0-9._-]{1,63}, unique */
	const char *cgroup;
	const char *qos_class;
	uint64_t wait_target_ns; /* 0 = the class default */
};

struct podsrc_static_opts {
	const struct podsrc_static_group *groups; /* copied: need not outlive the call */
	size_t nr_groups;
	const char *cgroup_root; /* hierarchy root globs expand under, e.g. /sys/fs/cgroup/cpu */
	uint32_t interval_ms; /* re-expansion period, default 10000 */
};

/* Constructors return 0 or -errno (-EINVAL on bad options, logged) and fill *ret_src. */
int podsrc_kubelet__new(const struct podsrc_kubelet_opts *opts, struct podsrc **ret_src);
int podsrc_file__new(const struct podsrc_file_opts *opts, struct podsrc **ret_src);
int podsrc_static__new(const struct podsrc_static_opts *opts, struct podsrc **ret_src);
/* NULL-safe. Drops the source's reference to its list. */
void podsrc__free(struct podsrc *src);

/*
 * Fetch when due. Returns 1 when the list changed (podsrc__list() now returns a new list),
 * 0 when nothing changed, failures included (they show in podsrc__is_stale()).
 */
int podsrc__poll(struct podsrc *src, uint64_t now_ns);
/*
 * The last good list, borrowed: valid until a poll returns 1. Take pod_list__ref() to keep
 * it longer. NULL until the first success.
 */
struct pod_list *podsrc__list(const struct podsrc *src);
/* The next podsrc__poll() polls, due or not (cgroups came or went). */
void podsrc__poll_now(struct podsrc *src);
/* True after a failed fetch, until the next good one (also before the first success). */
bool podsrc__is_stale(const struct podsrc *src);
/* When the next poll does work (CLOCK_MONOTONIC ns), for the caller's timer. */
uint64_t podsrc__next_poll_ns(const struct podsrc *src);
enum podsrc_kind podsrc__kind(const struct podsrc *src);
const char *podsrc_kind_name(enum podsrc_kind kind); /* "kubelet", "file", "static" */

/*
 * The stable UID of a bare-metal group: a UUID (version 8, RFC 9562) made of two 64-bit
 * FNV-1a hashes of "kqos-static/<name>", so it survives restarts and config reordering.
 * @buf must hold 37 bytes.
 */
void pod_static_uid(const char *name, char *buf);
/*
 * Build a pod list from groups, expanding each cgroup pattern under @cgroup_root. Groups
 * whose pattern matches nothing become pods with no cgroups. Matches that resolve outside
 * the root (symlinks) are dropped. -EINVAL (logged) for a bad name, duplicate name, bad class
 * or a pattern with a ".." component; -errno (not logged) when the root cannot be resolved.
 */
int pod_static_expand(const struct podsrc_static_group *groups, size_t nr_groups,
		      const char *cgroup_root, struct pod_list **ret_list);

/*
 * Log what a parse of @list found: new problems at warn, those the previous list had too at
 * debug, so a malformed annotation is reported once while it persists.
 */
void podsrc_log_issues(const struct pod_list *list);

#endif
