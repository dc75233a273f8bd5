// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "cgtree.h"

const char *cgwalk_qos_name(enum cgwalk_qos qos)
{
	switch (qos) {
	case CGWALK_QOS_GUARANTEED:
		return "Guaranteed";
	case CGWALK_QOS_BURSTABLE:
		return "Burstable";
	case CGWALK_QOS_BESTEFFORT:
		return "BestEffort";
	}
	return "unknown";
}

const char *cgwalk_runtime_name(enum cgwalk_runtime rt)
{
	switch (rt) {
	case CGWALK_RT_UNKNOWN:
		return "unknown";
	case CGWALK_RT_CONTAINERD:
		return "containerd";
	case CGWALK_RT_CRIO:
		return "cri-o";
	case CGWALK_RT_DOCKER:
		return "docker";
	}
	return "unknown";
}

const char *cgwalk_driver_name(enum cgwalk_driver driver)
{
	return driver == CGWALK_DRIVER_SYSTEMD ? "systemd" : "cgroupfs";
}

void cgwalk_pod_release(struct cgwalk_pod *pod)
{
	for (size_t i = 0; i < pod->nr_containers; i++)
		free(pod->containers[i].path);
	free(pod->containers);
	free(pod->path);
}

void cgwalk_result__free(struct cgwalk_result *res)
{
	if (!res)
		return;
	for (size_t i = 0; i < res->nr_pods; i++)
		cgwalk_pod_release(&res->pods[i]);
	free(res->pods);
	free(res);
}

static int cmp_uid(const void *key, const void *elem)
{
	return strcmp(key, ((const struct cgwalk_pod *)elem)->uid);
}

/* cgwalk_scan() sorts by uid and drops duplicates: a scan per pod was quadratic at 1000 pods. */
const struct cgwalk_pod *cgwalk_result__find(const struct cgwalk_result *res, const char *uid)
{
	if (!res->nr_pods)
		return NULL;
	return bsearch(uid, res->pods, res->nr_pods, sizeof(*res->pods), cmp_uid);
}

static bool same_pod(const struct cgwalk_pod *a, const struct cgwalk_pod *b)
{
	if (strcmp(a->uid, b->uid) || a->qos != b->qos || strcmp(a->path, b->path) ||
	    a->nr_containers != b->nr_containers)
		return false;
	for (size_t i = 0; i < a->nr_containers; i++)
		if (strcmp(a->containers[i].path, b->containers[i].path))
			return false;
	return true;
}

bool cgwalk_result__same(const struct cgwalk_result *a, const struct cgwalk_result *b)
{
	if (a->nr_pods != b->nr_pods)
		return false;
	for (size_t i = 0; i < a->nr_pods; i++)
		if (!same_pod(&a->pods[i], &b->pods[i]))
			return false;
	return true;
}
