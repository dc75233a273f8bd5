// SPDX-License-Identifier: GPL-2.0
/*
 * The kubelet PodList (/pods or a pod-list file). Parsed twice, the second time with the first
 * list as @prev and a bound on the items, as a source does on every poll; each list is read
 * through the lookups the snapshot builder uses, and its problems are logged.
 */
#include "fuzz.h"
#include "pod.h"
#include "podsrc.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

static void walk(const struct pod_list *list)
{
	for (size_t i = 0; i < list->nr_pods; i++) {
		const struct pod *pod = &list->pods[i];

		if (pod_list__find(list, pod->uid) != pod)
			__builtin_trap();
		pod__reconciler_qos(pod);
		for (size_t c = 0; c < pod->nr_containers; c++) {
			pod__container(pod, pod->containers[c].name);
			pod__ext_spec(pod, pod->containers[c].name);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_list *first = NULL, *second = NULL;
	struct pod_parse_error perr;

	if (pod_list__parse((const char *)data, size, "fuzz", NULL, &first, &perr))
		return 0;
	walk(first);
	podsrc_log_issues(first);
	/* a bound as the source sets it: the list is all or nothing */
	if (!pod_list__parse_max((const char *)data, size, 4, "fuzz", first, &second, &perr)) {
		if (second->nr_pods + second->nr_skipped > 4)
			__builtin_trap();
		walk(second);
		podsrc_log_issues(second);
	}
	pod_list__put(second);
	pod_list__put(first);
	return 0;
}
