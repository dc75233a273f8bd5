/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_USER_CGWALK_H
#define KQOS_USER_CGWALK_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Pod source 3: Kubernetes pod and container cgroups found by walking one cgroup hierarchy
 * (cgroupfs__walk_root(): the v2 root, or the v1 cpu controller's mount). Both kubelet cgroup
 * drivers, all three QoS tiers, containerd / CRI-O / docker leaves, and kubelet roots nested
 * anywhere (matched by name pattern, e.g. kind's kubelet.slice/kubelet-kubepods.slice/...).
 * It knows no names or labels: only what the directory names say.
 *
 * Symlinks are never followed and nothing outside the given root is opened. Names that look
 * like a pod or container but fail validation (uid not [0-9a-f-], "pod..", id not hex) are
 * skipped with a debug log line.
 */

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

/*
 * Walk root (an absolute directory). An empty tree is success with zero pods. -ENOENT /
 * -ENOTDIR for a bad root, -ENOMEM. Unreadable subdirectories are skipped, not fatal.
 */
int cgwalk_scan(const char *root, struct cgwalk_result **ret);
void cgwalk_result__free(struct cgwalk_result *res);
/* Borrowed lookup by uid, NULL if absent. */
const struct cgwalk_pod *cgwalk_result__find(const struct cgwalk_result *res, const char *uid);

/*
 * Classify one directory name (pure; exposed for tests and the PLEG-style watchers).
 * cgwalk_match_pod: 1 and the uid/QoS/driver when name is a pod cgroup of a kubepods parent
 * (parent = the name of the directory holding it, needed for the cgroupfs driver), 0 when
 * not a pod, -EINVAL when it looks like a pod but the uid is invalid.
 * cgwalk_match_container: 1 and id/runtime for a container leaf, 0 otherwise (incl. conmon),
 * -EINVAL for a container-looking name with a bad id.
 */
int cgwalk_match_pod(const char *parent, const char *name, char *uid, enum cgwalk_qos *qos,
		     enum cgwalk_driver *driver);
int cgwalk_match_container(const char *name, char *id, enum cgwalk_runtime *runtime);

/* true for [0-9a-f-], 1..CGWALK_UID_MAX chars, not starting or ending with '-'. */
bool cgwalk_uid_is_valid(const char *uid);

const char *cgwalk_qos_name(enum cgwalk_qos qos); /* "Guaranteed", "Burstable", "BestEffort" */
const char *cgwalk_runtime_name(enum cgwalk_runtime rt);
const char *cgwalk_driver_name(enum cgwalk_driver driver);

#endif
