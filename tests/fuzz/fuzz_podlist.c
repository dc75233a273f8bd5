// SPDX-License-Identifier: GPL-2.0
/*
 * The kubelet PodList (/pods or a pod-list file). Parsed twice, the second time with the first
 * list as @prev, as a source does on every poll, and then read through the lookups the
 * snapshot builder uses.
 */
#include "fuzz.h"
#include "pod.h"

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
	if (!pod_list__parse((const char *)data, size, "fuzz", first, &second, &perr))
		walk(second);
	pod_list__free(second);
	pod_list__free(first);
	return 0;
}
