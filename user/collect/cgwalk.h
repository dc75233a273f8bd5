/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_COLLECT_CGWALK_H
#define KQOS_COLLECT_CGWALK_H

#include <stdbool.h>
#include <stddef.h>

#include "cgtree.h"

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

/*
 * Walk root (an absolute directory). An empty tree is success with zero pods. -ENOENT /
 * -ENOTDIR for a bad root, -ENOMEM. Unreadable subdirectories are skipped, not fatal.
 */
int cgwalk_scan(const char *root, struct cgwalk_result **ret);
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

#endif
