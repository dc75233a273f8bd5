/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_CGTREE_H
#define KQOS_MODEL_CGTREE_H

#include <stdbool.h>
#include <stddef.h>

/* What a walk of the cgroup tree found (collect/cgwalk.c scans; these are the values). */

#define CGWALK_UID_MAX	 64 /* kubelet uids are 36-char UUIDs; static pods use 32 hex */
#define CGWALK_ID_MAX	 64 /* container ids: 64 hex */
#define CGWALK_MAX_DEPTH 12 /* directories below the root that are searched for pods */

enum cgwalk_qos {
	CGWALK_QOS_GUARANTEED = 0,
	CGWALK_QOS_BURSTABLE,
	CGWALK_QOS_BESTEFFORT,
};

enum cgwalk_driver {
	CGWALK_DRIVER_CGROUPFS = 0,
	CGWALK_DRIVER_SYSTEMD,
};

enum cgwalk_runtime {
	CGWALK_RT_UNKNOWN = 0, /* cgroupfs driver, bare "<64 hex>": containerd or docker */
	CGWALK_RT_CONTAINERD, /* cri-containerd-<id>.scope */
	CGWALK_RT_CRIO, /* crio-<id>.scope, crio-<id> */
	CGWALK_RT_DOCKER, /* docker-<id>.scope */
};

struct cgwalk_container {
	char id[CGWALK_ID_MAX + 1];
	enum cgwalk_runtime runtime;
	char *path; /* relative to the walk root, no leading '/' */
};

struct cgwalk_pod {
	char uid[CGWALK_UID_MAX + 1]; /* with '-' (systemd's '_' undone) */
	enum cgwalk_qos qos;
	enum cgwalk_driver driver;
	char *path; /* relative to the walk root, no leading '/' */
	struct cgwalk_container *containers; /* sorted by id; includes the pause sandbox */
	size_t nr_containers;
};

/* Pods sorted by uid. Owned by the caller: free with cgwalk_result__free(). */
struct cgwalk_result {
	struct cgwalk_pod *pods;
	size_t nr_pods;
};

/* Frees what one pod entry holds, not the entry. */
void cgwalk_pod_release(struct cgwalk_pod *pod);
void cgwalk_result__free(struct cgwalk_result *res);
/* Borrowed lookup by uid, NULL if absent. */
const struct cgwalk_pod *cgwalk_result__find(const struct cgwalk_result *res, const char *uid);
/*
 * The same pods, QoS tiers and cgroup paths (ids and runtimes follow from the names): a
 * rescan that found nothing new changes nothing downstream.
 */
bool cgwalk_result__same(const struct cgwalk_result *a, const struct cgwalk_result *b);

const char *cgwalk_qos_name(enum cgwalk_qos qos); /* "Guaranteed", "Burstable", "BestEffort" */
const char *cgwalk_runtime_name(enum cgwalk_runtime rt);
const char *cgwalk_driver_name(enum cgwalk_driver driver);

#endif
