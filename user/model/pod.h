/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_MODEL_POD_H
#define KQOS_MODEL_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The pod model: what the agent knows about one pod, parsed from kubelet's PodList JSON
 * (GET /pods, or a file in the same shape) or built from bare-metal groups in the config.
 * Class semantics follow koordinator (docs/pods.md has the resolution table).
 *
 * Everything is immutable after parse and owned by a struct pod_list. Pointers into a list
 * (pods, containers, strings) stay valid until the last reference to the list is dropped
 * with pod_list__put().
 */

/* Kubernetes QoS (status.qosClass, else computed from requests/limits as kubelet does). */
enum pod_k8s_qos {
	POD_K8S_QOS_BESTEFFORT = 0,
	POD_K8S_QOS_BURSTABLE,
	POD_K8S_QOS_GUARANTEED,
};

/* koordinator QoS class (label koordinator.sh/qosClass). */
enum pod_qos {
	POD_QOS_NONE = 0,
	POD_QOS_LSE,
	POD_QOS_LSR,
	POD_QOS_LS,
	POD_QOS_BE,
	POD_QOS_SYSTEM,
};

/* koordinator priority class (label koordinator.sh/priority-class or spec.priority). */
enum pod_prio {
	POD_PRIO_NONE = 0,
	POD_PRIO_PROD,
	POD_PRIO_MID,
	POD_PRIO_BATCH,
	POD_PRIO_FREE,
};

enum pod_phase {
	POD_PHASE_UNKNOWN = 0,
	POD_PHASE_PENDING,
	POD_PHASE_RUNNING,
	POD_PHASE_SUCCEEDED,
	POD_PHASE_FAILED,
};

enum pod_runtime {
	POD_RUNTIME_NONE = 0, /* container not started yet: no containerID */
	POD_RUNTIME_CONTAINERD,
	POD_RUNTIME_CRIO,
	POD_RUNTIME_DOCKER,
};

/* State of a parsed annotation: absent, parsed, or present but malformed (logged once). */
enum pod_ann {
	POD_ANN_ABSENT = 0,
	POD_ANN_OK,
	POD_ANN_INVALID,
};

#define POD_RES_UNSET	(-1LL)
#define POD_UID_MAX	64
#define POD_CTR_ID_MAX	128
#define POD_CPUSET_MAX	1024
#define POD_RESCTRL_MAX 64 /* per-cache entries kept per resource */
#define POD_NUMA_MAX	64 /* numaNodeResources entries kept */

/*
 * A resource list: every field is POD_RES_UNSET when absent. CPU in milli-cores, memory in
 * bytes. batch-cpu and mid-cpu are integer milli-cores already ("1000" = 1 core, koordinator
 * reads them with .Value()); the deprecated koordinator.sh/batch-* names fill the same fields.
 */
struct pod_res {
	int64_t cpu_milli;
	int64_t memory_bytes;
	int64_t batch_cpu_milli;
	int64_t batch_memory_bytes;
	int64_t mid_cpu_milli;
	int64_t mid_memory_bytes;
};

struct pod_container {
	char *name;
	enum pod_runtime runtime;
	char *id; /* [0-9a-zA-Z]+, safe in a path; NULL until the container has started */
	struct pod_res requests;
	struct pod_res limits;
};

/* scheduling.koordinator.sh/resource-status */
struct pod_numa_res {
	int32_t node;
	struct pod_res resources;
};

struct pod_resource_status {
	enum pod_ann state;
	char *cpuset; /* cpu-list syntax checked: "4-7,52-55"; "" when absent */
	struct pod_numa_res *numa;
	size_t nr_numa;
};

/* node.koordinator.sh/extended-resource-spec: one entry per container named there */
struct pod_ext_spec_ctr {
	char *name;
	struct pod_res requests;
	struct pod_res limits;
};

struct pod_ext_spec {
	enum pod_ann state;
	struct pod_ext_spec_ctr *containers;
	size_t nr_containers;
};

/* node.koordinator.sh/resctrl; percentages 0..100 */
struct pod_llc_range {
	int32_t cache_id; /* -1 for the all-caches value */
	uint8_t start_pct;
	uint8_t end_pct;
};

struct pod_mb_pct {
	int32_t cache_id; /* -1 for the all-caches value */
	uint8_t pct;
};

struct pod_resctrl {
	enum pod_ann state;
	bool has_llc; /* llc.schemata.range given */
	struct pod_llc_range llc;
	struct pod_llc_range *llc_per_cache;
	size_t nr_llc_per_cache;
	bool has_mb; /* mb.schemata.percent given */
	struct pod_mb_pct mb;
	struct pod_mb_pct *mb_per_cache;
	size_t nr_mb_per_cache;
};

/* koordinator's eviction strategies, as named in koordinator.sh/eviction-policy */
enum pod_evictor {
	POD_EVICT_BE_CPU = 0, /* "BECPUEvict" */
	POD_EVICT_CPU, /* "CPUEvict" */
	POD_EVICT_BE_MEMORY, /* "BEMemoryEvict" */
	POD_EVICT_MEMORY, /* "MemoryEvict" */
	POD_EVICT_NR,
};

/* What eviction reads of a pod (koordinator.md §4.2, §4.3). */
struct pod_evict {
	/* koordinator.sh/eviction-policy: ABSENT allows every strategy, INVALID (not a JSON list
	 * of strings) none, OK those in @allowed (bit per enum pod_evictor) */
	enum pod_ann policy;
	unsigned int allowed;
	int32_t priority; /* koordinator.sh/eviction-priority; 0 when absent or invalid */
	bool enabled; /* label koordinator.sh/eviction-enabled is "true" */
	bool has_label_priority;
	int64_t label_priority; /* label koordinator.sh/priority */
};

/*
 * koordinator.sh/cpuBurst: a CPUBurstConfig merged field by field over the node's
 * cpuBurstStrategy. Fields not given are POD_BURST_UNSET.
 */
#define POD_BURST_UNSET INT64_MIN
enum pod_burst_policy {
	POD_BURST_NONE = 0,
	POD_BURST_CPU_ONLY, /* cpuBurstOnly */
	POD_BURST_CFS_QUOTA_ONLY, /* cfsQuotaBurstOnly */
	POD_BURST_AUTO, /* auto: both */
};

struct pod_cpu_burst {
	enum pod_ann state;
	int64_t policy; /* enum pod_burst_policy or POD_BURST_UNSET */
	int64_t cpu_burst_pct, cfs_quota_burst_pct, cfs_quota_burst_period_s;
};

struct pod {
	char *uid; /* [0-9a-fA-F-], 1..POD_UID_MAX chars: safe in a path */
	char *name;
	char *namespace;
	enum pod_phase phase;
	bool is_active; /* false for Succeeded/Failed: kept, but strategies skip it */
	enum pod_k8s_qos k8s_qos;
	enum pod_qos qos_raw; /* label only; NONE when absent or not a known class */
	enum pod_qos qos; /* qos_raw, or the default from k8s_qos when qos_raw is NONE */
	enum pod_prio prio_raw; /* label alone if present, else spec.priority ranges */
	enum pod_prio prio; /* prio_raw, or from qos when NONE (BE->batch, others->prod) */
	bool has_priority;
	int32_t priority; /* spec.priority when has_priority */
	struct pod_container *containers;
	size_t nr_containers;
	struct pod_resource_status res_status;
	struct pod_ext_spec ext_spec;
	struct pod_resctrl resctrl;
	struct pod_cpu_burst cpu_burst;
	/*
	 * Bare-metal groups only (is_static): the cgroup directories matched by the group's
	 * path or glob, relative to the hierarchy root and starting with '/'. Kubernetes pods
	 * have none here; their cgroups are found by UID.
	 */
	bool is_static;
	/* run-queue wait target for the latency guard: kqos.sh/wait-target, or the group's
	 * waitTarget; 0 = the class default */
	uint64_t wait_target_ns;
	struct pod_evict evict;
	char **cgroups;
	size_t nr_cgroups;
};

/* Reference counted so that a snapshot can keep a list alive while the source moves on. */
struct pod_list {
	struct pod *pods;
	size_t nr_pods;
	size_t nr_skipped; /* malformed items left out (each logged once) */
	unsigned int refs;
	/* private: the problems found by the parse, so that the next one reports only new ones */
	char **issues;
	size_t nr_issues;
	/* what this parse found, for the caller to log (podsrc_log_issues) */
	struct pod_issue {
		const char *msg; /* static */
		char *detail; /* logfmt */
		bool repeated; /* the previous list had it too */
	} * news;
	size_t nr_news;
};

/* An empty list with one reference; NULL on -ENOMEM. */
struct pod_list *pod_list__new(void);
/* Take another reference; returns @list. NULL-safe. */
struct pod_list *pod_list__ref(struct pod_list *list);
/* Drop one reference; frees everything on the last. NULL-safe. */
void pod_list__put(struct pod_list *list);

/* Why a whole document was rejected; line/column are 1-based, 0 when not a syntax error. */
struct pod_parse_error {
	int line;
	int column;
	char text[160]; /* no double quotes or control characters: safe inside a logfmt "" */
};

/*
 * Parse a kubelet PodList (JSON bytes, need not be NUL-terminated). @origin names the input
 * in log lines (URL or file name). Malformed pods are skipped and malformed annotations marked
 * POD_ANN_INVALID, each with one warning naming the pod and the field; the rest is used.
 * Problems already found in @prev (the list this one replaces, may be NULL) drop to debug, so
 * a problem is reported once while it persists. Returns 0 with *ret_list (one reference),
 * -EINVAL when the document itself is not a PodList (not logged here, so that sources can log
 * once per state change; details in *ret_err when non-NULL), or -ENOMEM.
 */
int pod_list__parse(const char *buf, size_t len, const char *origin, const struct pod_list *prev,
		    struct pod_list **ret_list, struct pod_parse_error *ret_err);
/*
 * The same with a bound on the number of items (0 = none): a longer list is -E2BIG before any
 * pod is parsed or allocated, with the count and the bound in *ret_err.
 */
int pod_list__parse_max(const char *buf, size_t len, size_t max_pods, const char *origin,
			const struct pod_list *prev, struct pod_list **ret_list,
			struct pod_parse_error *ret_err);

/* Borrowed lookup by UID; NULL when absent. */
const struct pod *pod_list__find(const struct pod_list *list, const char *uid);
/* Borrowed lookup of a container by name; NULL when absent. */
const struct pod_container *pod__container(const struct pod *pod, const char *name);
/* The extended-resource-spec entry for a container; NULL when absent or annotation invalid. */
const struct pod_ext_spec_ctr *pod__ext_spec(const struct pod *pod, const char *container);

/*
 * A container's requests and limits as koordlet's hooks see them: each field from the pod
 * spec, else from the container's extended-resource-spec entry (where the webhook keeps the
 * extended names that CRI requests cannot carry).
 */
void pod__ctr_res(const struct pod *pod, const struct pod_container *c, struct pod_res *ret_req,
		  struct pod_res *ret_lim);
/* Σ of the positive batch-cpu and mid-cpu requests of a pod's containers (pod__ctr_res). */
int64_t pod__ext_cpu_request(const struct pod *pod);

/* The tiers of extended resources koordinator's webhook writes for native cpu/memory. */
enum pod_tier {
	POD_TIER_BATCH = 0, /* kubernetes.io/batch-cpu, batch-memory */
	POD_TIER_MID, /* kubernetes.io/mid-cpu, mid-memory */
};

/* One tier's cpu (milli) and memory (bytes); -1 (POD_RES_UNSET) where absent or unlimited. */
struct pod_tier_res {
	int64_t req_cpu_milli, lim_cpu_milli;
	int64_t req_memory_bytes, lim_memory_bytes;
};

/* A container's values of @tier (pod__ctr_res); false when it names none of them. */
bool pod__ctr_tier(const struct pod *pod, const struct pod_container *c, enum pod_tier tier,
		   struct pod_tier_res *ret);
/*
 * A pod's values of @tier as koordinator's hook sums them for the pod cgroup: requests are
 * the sum of the positive ones (0 when none); a limit is the sum, or -1 (unlimited) when some
 * container has no positive limit. False when no container names the tier.
 */
bool pod__tier_sum(const struct pod *pod, enum pod_tier tier, struct pod_tier_res *ret);

/*
 * The class koordlet's runtime-hook reconciler uses (koordinator.md §1.2): qos_raw, except
 * that a pod without a class label but with a non-empty resource-status cpuset counts as LSR.
 */
enum pod_qos pod__reconciler_qos(const struct pod *pod);

/*
 * Kubernetes quantity ("100m", "1.5", "128Mi", "1G", "1e3", "500k") -> ceil(value * 10^scale)
 * (scale 3 gives milli-units, 0 whole units, as resource.Quantity MilliValue()/Value() round
 * up). Strict: the whole string must match; negative values are -ERANGE, overflow -ERANGE,
 * garbage -EINVAL.
 */
int pod_quantity_parse(const char *s, unsigned int scale, int64_t *ret);

/* Validators for strings that may become path components. */
bool pod_uid_is_valid(const char *uid);
bool pod_ctr_id_is_valid(const char *id);
/* "LSE|LSR|LS|BE|SYSTEM" -> class; anything else (including "") -> POD_QOS_NONE. */
enum pod_qos pod_qos_from_name(const char *s);
/* The defaulted class for a Kubernetes QoS (Guaranteed->LSR, Burstable->LS, BestEffort->BE). */
enum pod_qos pod_qos_from_k8s(enum pod_k8s_qos k8s);
/* Priority class for spec.priority ranges (9000-9999 prod, ... 3000-3999 free), else NONE. */
enum pod_prio pod_prio_from_value(int64_t priority);
enum pod_prio pod_prio_from_name(const char *s);
/* The class a NONE priority falls back to: BE -> batch, every other class -> prod. */
enum pod_prio pod_prio_from_qos(enum pod_qos qos);

/*
 * The priority+QoS class (koordinator PR #2280's GetPriorityQoSClass): "<priority>/<qos>",
 * e.g. "koord-mid/LS", or "SYSTEM" alone. No QoS counts as LS, no priority as prod. The pairs
 * koordinator calls invalid (prod+BE; mid, batch or free with LSE or LSR) have is_valid false
 * and the name "". Strategies select pods by this pair, not by QoS alone (docs/strategies.md).
 */
struct pod_pq {
	enum pod_prio prio; /* never NONE: NONE counts as prod (and as NONE for SYSTEM) */
	enum pod_qos qos; /* never NONE: NONE counts as LS */
	bool is_valid;
};

/* From the raw classes (the priority label or spec.priority, the QoS label). */
struct pod_pq pod_pq_of(enum pod_prio prio_raw, enum pod_qos qos_raw);
/*
 * A pod's pair: from prio_raw and qos_raw; a bare-metal group has no priority of its own, so
 * its defaulted class (BE -> batch, else prod) stands in.
 */
struct pod_pq pod__pq(const struct pod *pod);
/* "koord-prod/LS", "SYSTEM", or "" for an invalid pair. */
const char *pod_pq_name(struct pod_pq pq);
/* Mid+LS: a valid koord-mid/LS pod, which kqos keeps out of BE suppression. */
bool pod__is_mid_ls(const struct pod *pod);

const char *pod_qos_name(enum pod_qos qos); /* "" for NONE */
const char *pod_prio_name(enum pod_prio prio); /* "" for NONE */
const char *pod_k8s_qos_name(enum pod_k8s_qos qos); /* "Guaranteed", ... */
const char *pod_phase_name(enum pod_phase phase); /* "Running", ...; "Unknown" */
const char *pod_runtime_name(enum pod_runtime runtime); /* "containerd", "cri-o", "docker" */

/* Whether @pod's eviction-policy annotation lets strategy @s evict it (koordinator rules). */
bool pod__evict_allowed(const struct pod *pod, enum pod_evictor s);
const char *pod_evictor_name(enum pod_evictor s); /* "BECPUEvict", ... */
/* koordinator's spec.priority with the default of the priority class when absent or 0. */
int32_t pod__priority_value(const struct pod *pod);
/* "none", "cpuBurstOnly", "cfsQuotaBurstOnly", "auto"; -EINVAL for anything else (koordlet
 * treats an unknown policy as enabling neither burst: callers map -EINVAL to none). */
int pod_burst_policy_parse(const char *s, enum pod_burst_policy *ret);
const char *pod_burst_policy_name(enum pod_burst_policy p);

/* For builders outside the parser (bare-metal groups): all fields POD_RES_UNSET. */
void pod_res_init(struct pod_res *res);
/* Free the members of a pod that pod_list__put would free; the struct itself is not. */
void pod_fini(struct pod *pod);

#endif
