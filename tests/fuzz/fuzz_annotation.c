// SPDX-License-Identifier: GPL-2.0
/*
 * One pod annotation or class label at a time. A PodList can only carry valid UTF-8 strings,
 * so the value is wrapped into a one-pod list with jansson, and the fuzzer spends its time in
 * the annotation's own parser rather than in finding the JSON around it. The first byte picks
 * the key, the rest is the value.
 */
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "fuzz.h"
#include "pod.h"
#include "podsrc.h"

static const struct {
	const char *key;
	bool is_label;
} keys[] = {
	{ "scheduling.koordinator.sh/resource-status", false },
	{ "node.koordinator.sh/extended-resource-spec", false },
	{ "node.koordinator.sh/resctrl", false },
	{ "koordinator.sh/qosClass", true },
	{ "koordinator.sh/priority-class", true },
};

#define NR_KEYS (sizeof(keys) / sizeof(keys[0]))

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	return 0;
}

/* Guaranteed, two containers: so that per-container specs have something to name. */
static json_t *one_pod(unsigned int k, json_t *value)
{
	json_t *meta = json_pack("{s:s, s:s, s:s, s:{}, s:{}}", "name", "p", "namespace", "ns",
				 "uid", "0000-1111", "labels", "annotations");
	json_t *res = json_pack("{s:{s:s, s:s}, s:{s:s, s:s}}", "requests", "cpu", "1", "memory",
				"1Gi", "limits", "cpu", "1", "memory", "1Gi");
	json_t *spec = json_pack("{s:[{s:s, s:O}, {s:s, s:O}]}", "containers", "name", "main",
				 "resources", res, "name", "side", "resources", res);

	json_decref(res);
	if (!meta || !spec)
		abort();
	json_object_set_new(json_object_get(meta, keys[k].is_label ? "labels" : "annotations"),
			    keys[k].key, value);
	return json_pack("{s:s, s:[{s:o, s:o, s:{s:s}}]}", "kind", "PodList", "items", "metadata",
			 meta, "spec", spec, "status", "phase", "Running");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_list *list = NULL;
	struct pod_parse_error perr;
	json_t *value, *doc;
	char *text;

	if (!size)
		return 0;
	value = json_stringn((const char *)data + 1, size - 1);
	if (!value)
		return 0; /* not UTF-8: a kubelet document cannot carry it */
	doc = one_pod(data[0] % NR_KEYS, value);
	text = doc ? json_dumps(doc, JSON_COMPACT) : NULL;
	if (!text)
		abort();
	if (pod_list__parse(text, strlen(text), "fuzz", NULL, &list, &perr) || list->nr_pods != 1)
		__builtin_trap(); /* a bad annotation must never cost the pod */
	podsrc_log_issues(list);
	pod__reconciler_qos(&list->pods[0]);
	pod__ext_spec(&list->pods[0], "main");
	pod_list__put(list);
	free(text);
	json_decref(doc);
	return 0;
}
