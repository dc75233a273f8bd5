// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroupfs.h"
#include "cgwalk.h"
#include "fake_cgroup.h"

#define U1  "11111111-2222-3333-4444-555555555555"
#define U1_ "11111111_2222_3333_4444_555555555555"
#define U2  "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
#define U2_ "aaaaaaaa_bbbb_cccc_dddd_eeeeeeeeeeee"
#define U3  "0f1e2d3c-aaaa-bbbb-cccc-0123456789ab"
#define U3_ "0f1e2d3c_aaaa_bbbb_cccc_0123456789ab"
/* static pods: kubelet's 32-hex config hash */
#define U4 "6d5f2d3c8a0b4e1f9a7c3b2d1e0f4a5b"
#define C1 "1111111111111111111111111111111111111111111111111111111111111111"
#define C2 "2222222222222222222222222222222222222222222222222222222222222222"
#define C3 "3333333333333333333333333333333333333333333333333333333333333333"
#define C4 "4444444444444444444444444444444444444444444444444444444444444444"

static struct fake_cg *fc;
static struct cgroupfs *cg;
static struct cgwalk_result *res;

static void teardown(void)
{
	cgwalk_result__free(res);
	res = NULL;
	cgroupfs__free(cg);
	cg = NULL;
	fake_cg__free(fc);
	fc = NULL;
}

__attribute__((format(printf, 1, 2))) static void mk(const char *fmt, ...)
{
	char rel[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	cr_assert_eq(fake_cg__mkcg(fc, rel), 0, "mkcg %s", rel);
}

static void scan(void)
{
	cr_assert_eq(cgroupfs__open(fake_cg__root(fc), CGFS_MODE_AUTO, &cg), 0);
	cr_assert_eq(cgwalk_scan(cgroupfs__walk_root(cg), &res), 0);
}

static const struct cgwalk_pod *expect_pod(const char *uid, enum cgwalk_qos qos,
					   enum cgwalk_driver driver, const char *path,
					   size_t nr_containers)
{
	const struct cgwalk_pod *p = cgwalk_result__find(res, uid);

	cr_assert_not_null(p, "pod %s not found", uid);
	cr_assert_eq(p->qos, qos, "pod %s qos %s", uid, cgwalk_qos_name(p->qos));
	cr_assert_eq(p->driver, driver);
	cr_assert_str_eq(p->path, path);
	cr_assert_eq(p->nr_containers, nr_containers, "pod %s has %zu containers", uid,
		     p->nr_containers);
	return p;
}

static void expect_container(const struct cgwalk_pod *p, size_t i, const char *id,
			     enum cgwalk_runtime rt, const char *leaf)
{
	char want[PATH_MAX];

	cr_assert_str_eq(p->containers[i].id, id);
	cr_assert_eq(p->containers[i].runtime, rt, "runtime %s",
		     cgwalk_runtime_name(p->containers[i].runtime));
	snprintf(want, sizeof(want), "%s/%s", p->path, leaf);
	cr_assert_str_eq(p->containers[i].path, want);
}

struct layout_case {
	enum fake_cg_layout layout;
	bool systemd;
	char prefix[40]; /* nested kubelet root: directory prefix */
	char kube[24]; /* "kubepods" or "kubelet-kubepods" (systemd only) */
};

ParameterizedTestParameters(cgwalk, finds_every_pod_and_container)
{
	static struct layout_case cases[] = {
		{ FAKE_CG_V2, true, "", "kubepods" },
		{ FAKE_CG_V2, false, "", "kubepods" },
		{ FAKE_CG_V1, true, "", "kubepods" },
		{ FAKE_CG_V1, false, "", "kubepods" },
		{ FAKE_CG_HYBRID, true, "", "kubepods" },
		{ FAKE_CG_V1_SPLIT, false, "", "kubepods" },
		/* kind: nested slice names */
		{ FAKE_CG_V2, true, "kubelet.slice/kubelet-kubepods.slice/", "kubelet-kubepods" },
		{ FAKE_CG_V1, true, "kubelet.slice/kubelet-kubepods.slice/", "kubelet-kubepods" },
		/* cgroupfs driver under some other parent */
		{ FAKE_CG_V2, false, "docker/0123abcd/", "kubepods" },
		{ FAKE_CG_V1, false, "kubelet/", "kubepods" },
	};
	return cr_make_param_array(struct layout_case, cases, sizeof(cases) / sizeof(cases[0]));
}

static void check_systemd(const struct layout_case *c)
{
	const char *k = c->kube, *pre = c->prefix;
	const struct cgwalk_pod *p;
	char base[256], path[PATH_MAX];

	/* The top slice of a nested root is the prefix itself. */
	if (pre[0])
		snprintf(base, sizeof(base), "%.*s", (int)strlen(pre) - 1, pre);
	else
		snprintf(base, sizeof(base), "%s.slice", k);
	snprintf(path, sizeof(path), "%s/%s-pod" U1_ ".slice", base, k);
	p = expect_pod(U1, CGWALK_QOS_GUARANTEED, CGWALK_DRIVER_SYSTEMD, path, 1);
	expect_container(p, 0, C1, CGWALK_RT_CONTAINERD, "cri-containerd-" C1 ".scope");
	snprintf(path, sizeof(path), "%s/%s-burstable.slice/%s-burstable-pod" U2_ ".slice", base, k,
		 k);
	p = expect_pod(U2, CGWALK_QOS_BURSTABLE, CGWALK_DRIVER_SYSTEMD, path, 1);
	expect_container(p, 0, C2, CGWALK_RT_CRIO, "crio-" C2 ".scope");
	snprintf(path, sizeof(path), "%s/%s-besteffort.slice/%s-besteffort-pod" U3_ ".slice", base,
		 k, k);
	p = expect_pod(U3, CGWALK_QOS_BESTEFFORT, CGWALK_DRIVER_SYSTEMD, path, 2);
	expect_container(p, 0, C3, CGWALK_RT_DOCKER, "docker-" C3 ".scope");
	expect_container(p, 1, C4, CGWALK_RT_CONTAINERD, "cri-containerd-" C4 ".scope");
}

static void build_systemd(const struct layout_case *c)
{
	char base[256], k[32];

	snprintf(k, sizeof(k), "%s", c->kube);
	if (c->prefix[0])
		snprintf(base, sizeof(base), "%.*s", (int)strlen(c->prefix) - 1, c->prefix);
	else
		snprintf(base, sizeof(base), "%s.slice", k);
	mk("%s/%s-pod" U1_ ".slice/cri-containerd-" C1 ".scope", base, k);
	mk("%s/%s-burstable.slice", base, k);
	{
		char b2[512];

		snprintf(b2, sizeof(b2), "%s/%s-burstable.slice", base, k);
		mk("%s/%s-burstable-pod" U2_ ".slice/crio-" C2 ".scope", b2, k);
		mk("%s/%s-burstable-pod" U2_ ".slice/crio-conmon-" C2 ".scope", b2, k);
		snprintf(b2, sizeof(b2), "%s/%s-besteffort.slice", base, k);
		mk("%s/%s-besteffort-pod" U3_ ".slice/docker-" C3 ".scope", b2, k);
		mk("%s/%s-besteffort-pod" U3_ ".slice/cri-containerd-" C4 ".scope", b2, k);
	}
}

static void build_cgroupfs(const struct layout_case *c)
{
	const char *pre = c->prefix;

	mk("%skubepods/pod" U1 "/%s", pre, C1);
	mk("%skubepods/burstable/pod" U2 "/crio-%s", pre, C2);
	mk("%skubepods/burstable/pod" U2 "/crio-conmon-%s", pre, C2);
	mk("%skubepods/besteffort/pod" U3 "/%s", pre, C3);
	mk("%skubepods/besteffort/pod" U3 "/%s", pre, C4);
	mk("%skubepods/besteffort/pod" U4 "%s", pre, "");
}

static void check_cgroupfs(const struct layout_case *c)
{
	const char *pre = c->prefix;
	const struct cgwalk_pod *p;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%skubepods/pod" U1, pre);
	p = expect_pod(U1, CGWALK_QOS_GUARANTEED, CGWALK_DRIVER_CGROUPFS, path, 1);
	expect_container(p, 0, C1, CGWALK_RT_UNKNOWN, C1);
	snprintf(path, sizeof(path), "%skubepods/burstable/pod" U2, pre);
	p = expect_pod(U2, CGWALK_QOS_BURSTABLE, CGWALK_DRIVER_CGROUPFS, path, 1);
	expect_container(p, 0, C2, CGWALK_RT_CRIO, "crio-" C2);
	snprintf(path, sizeof(path), "%skubepods/besteffort/pod" U3, pre);
	p = expect_pod(U3, CGWALK_QOS_BESTEFFORT, CGWALK_DRIVER_CGROUPFS, path, 2);
	expect_container(p, 1, C4, CGWALK_RT_UNKNOWN, C4);
	snprintf(path, sizeof(path), "%skubepods/besteffort/pod" U4, pre);
	expect_pod(U4, CGWALK_QOS_BESTEFFORT, CGWALK_DRIVER_CGROUPFS, path, 0);
}

ParameterizedTest(struct layout_case *c, cgwalk, finds_every_pod_and_container, .fini = teardown)
{
	cr_assert_eq(fake_cg__new(c->layout, &fc), 0);
	/* noise a real host has */
	cr_assert_eq(fake_cg__mkcg(fc, "system.slice/containerd.service"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "user.slice/user-0.slice/session-1.scope"), 0);
	if (c->systemd)
		build_systemd(c);
	else
		build_cgroupfs(c);
	scan();
	cr_assert_eq(res->nr_pods, c->systemd ? 3 : 4);
	if (c->systemd)
		check_systemd(c);
	else
		check_cgroupfs(c);
	/* sorted by uid */
	for (size_t i = 1; i < res->nr_pods; i++)
		cr_assert_lt(strcmp(res->pods[i - 1].uid, res->pods[i].uid), 0);
}

Test(cgwalk, rejects_bad_names_and_symlinks, .fini = teardown)
{
	char path[PATH_MAX];

	cr_assert_eq(fake_cg__new(FAKE_CG_V2, &fc), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod" U1 "/" C1), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod.."), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/podABCDEF"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/burstable/pod-"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/burstable/pod..%2f"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods.slice/kubepods-pod.._.._x.slice"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods.slice/kubepods-burstable-podab-cd.slice"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods.slice/kubepods-pod.slice"), 0);
	/* pod directory outside any kubepods parent */
	cr_assert_eq(fake_cg__mkcg(fc, "other/pod" U2), 0);
	/* bad container ids inside a good pod */
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod" U1 "/cri-containerd-zz.scope"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod" U1 "/crio-../"), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod" U1 "/notacontainer"), 0);
	/* a symlink that looks like a pod and points out of the tree is not followed */
	snprintf(path, sizeof(path), "%s/kubepods/pod" U3, fake_cg__root(fc));
	cr_assert_eq(symlink("/etc", path), 0);
	snprintf(path, sizeof(path), "%s/kubepods/escape", fake_cg__root(fc));
	cr_assert_eq(symlink("/", path), 0);
	scan();
	cr_assert_eq(res->nr_pods, 1, "found %zu pods", res->nr_pods);
	expect_pod(U1, CGWALK_QOS_GUARANTEED, CGWALK_DRIVER_CGROUPFS, "kubepods/pod" U1, 1);
}

Test(cgwalk, empty_tree_and_bad_root, .fini = teardown)
{
	cr_assert_eq(fake_cg__new(FAKE_CG_V2, &fc), 0);
	scan();
	cr_assert_eq(res->nr_pods, 0);
	cr_assert_null(cgwalk_result__find(res, U1));
	cr_assert_eq(cgwalk_scan("/nonexistent/kqos", &res), -ENOENT);
	cr_assert_eq(cgwalk_scan("/etc/hostname", &res), -ENOTDIR);
	cr_assert_eq(cgwalk_scan(NULL, &res), -EINVAL);
	cgwalk_result__free(NULL);
}

Test(cgwalk, duplicate_uid_kept_once, .fini = teardown)
{
	cr_assert_eq(fake_cg__new(FAKE_CG_V2, &fc), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods/pod" U1), 0);
	cr_assert_eq(fake_cg__mkcg(fc, "kubepods.slice/kubepods-pod" U1_ ".slice"), 0);
	scan();
	cr_assert_eq(res->nr_pods, 1);
}

/* A rescan that found the same tree is the same; a new container or QoS move is not. */
Test(cgwalk, same_tree_compares_equal, .fini = teardown)
{
	struct cgwalk_result *again = NULL;

	cr_assert_eq(fake_cg__new(FAKE_CG_V1, &fc), 0);
	mk("cpu/kubepods/pod" U1 "/" C1);
	mk("cpu/kubepods/burstable/pod" U2 "/" C2);
	scan();
	cr_assert_eq(cgwalk_scan(cgroupfs__walk_root(cg), &again), 0);
	cr_expect(cgwalk_result__same(res, again));
	cgwalk_result__free(again);
	mk("cpu/kubepods/burstable/pod" U2 "/" C3);
	cr_assert_eq(cgwalk_scan(cgroupfs__walk_root(cg), &again), 0);
	cr_expect_not(cgwalk_result__same(res, again), "a new container");
	cr_expect_not(cgwalk_result__same(again, res));
	cgwalk_result__free(again);
	mk("cpu/kubepods/besteffort/pod" U3);
	cr_assert_eq(cgwalk_scan(cgroupfs__walk_root(cg), &again), 0);
	cr_expect_not(cgwalk_result__same(res, again), "a new pod");
	cgwalk_result__free(again);
}

struct pod_name_case {
	char parent[24];
	char name[96];
	int ret;
	enum cgwalk_qos qos;
};

ParameterizedTestParameters(cgwalk, match_pod)
{
	static struct pod_name_case cases[] = {
		{ "kubepods", "pod" U1, 1, CGWALK_QOS_GUARANTEED },
		{ "burstable", "pod" U1, 1, CGWALK_QOS_BURSTABLE },
		{ "besteffort", "pod" U4, 1, CGWALK_QOS_BESTEFFORT },
		{ "x", "pod" U1, 0, 0 },
		{ "kubepods", "burstable", 0, 0 },
		{ "kubepods", "pod..", -EINVAL, 0 },
		{ "kubepods", "pod" U1 "0000000000000000000000000000000", -EINVAL, 0 },
		{ "", "kubepods-pod" U1_ ".slice", 1, CGWALK_QOS_GUARANTEED },
		{ "", "kubepods-besteffort-pod" U1_ ".slice", 1, CGWALK_QOS_BESTEFFORT },
		{ "", "kubelet-kubepods-burstable-pod" U1_ ".slice", 1, CGWALK_QOS_BURSTABLE },
		{ "", "kubepods-burstable.slice", 0, 0 },
		{ "", "kubepods.slice", 0, 0 },
		{ "", "xkubepods-pod" U1_ ".slice", 0, 0 },
		{ "", "kubepods-pod" U1_ ".scope", 0, 0 },
		{ "", "kubepods-pod" U1 ".slice", -EINVAL, 0 },
		{ "", "kubepods-podAB.slice", -EINVAL, 0 },
	};
	return cr_make_param_array(struct pod_name_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct pod_name_case *c, cgwalk, match_pod)
{
	char uid[CGWALK_UID_MAX + 1];
	enum cgwalk_driver driver;
	enum cgwalk_qos qos;
	int r;

	r = cgwalk_match_pod(c->parent, c->name, uid, &qos, &driver);
	cr_assert_eq(r, c->ret, "%s/%s -> %d", c->parent, c->name, r);
	if (r == 1) {
		cr_assert_eq(qos, c->qos);
		cr_assert(cgwalk_uid_is_valid(uid));
	}
}

Test(cgwalk, match_container)
{
	char id[CGWALK_ID_MAX + 1];
	enum cgwalk_runtime rt;

	cr_assert_eq(cgwalk_match_container("cri-containerd-" C1 ".scope", id, &rt), 1);
	cr_assert_str_eq(id, C1);
	cr_assert_eq(rt, CGWALK_RT_CONTAINERD);
	cr_assert_eq(cgwalk_match_container("crio-" C2, id, &rt), 1);
	cr_assert_eq(rt, CGWALK_RT_CRIO);
	cr_assert_eq(cgwalk_match_container("docker-" C3 ".scope", id, &rt), 1);
	cr_assert_eq(rt, CGWALK_RT_DOCKER);
	cr_assert_eq(cgwalk_match_container(C4, id, &rt), 1);
	cr_assert_eq(rt, CGWALK_RT_UNKNOWN);
	cr_assert_eq(cgwalk_match_container("crio-conmon-" C2 ".scope", id, &rt), 0);
	cr_assert_eq(cgwalk_match_container("crio-conmon-" C2, id, &rt), 0);
	cr_assert_eq(cgwalk_match_container("abc", id, &rt), 0);
	cr_assert_eq(cgwalk_match_container("foo.scope", id, &rt), 0);
	cr_assert_eq(cgwalk_match_container("crio-.scope", id, &rt), -EINVAL);
	cr_assert_eq(cgwalk_match_container("docker-XYZ.scope", id, &rt), -EINVAL);
	cr_assert_eq(cgwalk_match_container("crio-" C1 "0", id, &rt), -EINVAL);
}

Test(cgwalk, uid_validation)
{
	cr_assert(cgwalk_uid_is_valid(U1));
	cr_assert(cgwalk_uid_is_valid(U4));
	cr_assert_not(cgwalk_uid_is_valid(""));
	cr_assert_not(cgwalk_uid_is_valid(".."));
	cr_assert_not(cgwalk_uid_is_valid("-abc"));
	cr_assert_not(cgwalk_uid_is_valid("abc-"));
	cr_assert_not(cgwalk_uid_is_valid("ABC"));
	cr_assert_not(cgwalk_uid_is_valid("ab/cd"));
	cr_assert_not(cgwalk_uid_is_valid(U4 U4 "a"));
	cr_assert_str_eq(cgwalk_qos_name(CGWALK_QOS_BESTEFFORT), "BestEffort");
	cr_assert_str_eq(cgwalk_driver_name(CGWALK_DRIVER_SYSTEMD), "systemd");
}

Test(cgwalk, this_host_walk_is_clean)
{
	size_t i;

	cr_assert_eq(cgroupfs__open(NULL, CGFS_MODE_AUTO, &cg), 0);
	cr_assert_eq(cgwalk_scan(cgroupfs__walk_root(cg), &res), 0);
	/* No kubelet here: whatever is found must at least be well formed. */
	for (i = 0; i < res->nr_pods; i++) {
		cr_assert(cgwalk_uid_is_valid(res->pods[i].uid));
		cr_assert(cgpath_is_safe(res->pods[i].path));
	}
	teardown();
}
