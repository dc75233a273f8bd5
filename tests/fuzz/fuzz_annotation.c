// SPDX-License-Identifier: GPL-2.0
/*
 * One pod annotation or class label at a time. A PodList can only carry valid UTF-8 strings,
 * so the value is wrapped into a one-pod list with jansson, and the fuzzer spends its time in
 * the annotation's own parser rather than in finding the JSON around it. The first byte picks
 * the key, the rest is the value. The list around the value is dumped once per key, at start:
 * each input only encodes its value between the two halves, the same text as a whole dump.
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
#define VALUE	"kqos-fuzz-value"
#define MARK	"\"" VALUE "\""

/* the list's text before and after the value, per key */
static char *head[NR_KEYS], *tail[NR_KEYS];
static size_t head_len[NR_KEYS], tail_len[NR_KEYS];

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

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	for (unsigned int k = 0; k < NR_KEYS; k++) {
		json_t *doc = one_pod(k, json_string(VALUE));
		char *text = doc ? json_dumps(doc, JSON_COMPACT) : NULL, *mark;

		mark = text ? strstr(text, MARK) : NULL;
		if (!mark)
			abort();
		head_len[k] = (size_t)(mark - text);
		tail_len[k] = strlen(mark + strlen(MARK));
		head[k] = strndup(text, head_len[k]);
		tail[k] = strdup(mark + strlen(MARK));
		if (!head[k] || !tail[k])
			abort();
		free(text);
		json_decref(doc);
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pod_list *list = NULL;
	struct pod_parse_error perr;
	unsigned int k;
	size_t len, value_len;
	json_t *value;
	char *enc, *text;

	if (!size)
		return 0;
	value = json_stringn((const char *)data + 1, size - 1);
	if (!value)
		return 0; /* not UTF-8: a kubelet document cannot carry it */
	enc = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(value);
	if (!enc)
		abort();
	k = data[0] % NR_KEYS;
	value_len = strlen(enc);
	len = head_len[k] + value_len + tail_len[k];
	text = malloc(len + 1);
	if (!text)
		abort();
	memcpy(text, head[k], head_len[k]);
	memcpy(text + head_len[k], enc, value_len);
	memcpy(text + head_len[k] + value_len, tail[k], tail_len[k] + 1);
	free(enc);
	if (pod_list__parse(text, len, "fuzz", NULL, &list, &perr) || list->nr_pods != 1)
		__builtin_trap(); /* a bad annotation must never cost the pod */
	podsrc_log_issues(list);
	pod__reconciler_qos(&list->pods[0]);
	pod__ext_spec(&list->pods[0], "main");
	pod_list__put(list);
	free(text);
	return 0;
}
