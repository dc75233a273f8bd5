// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cgwalk.h"
#include "log.h"

struct walker {
	struct cgwalk_result *res;
	size_t cap;
	size_t len; /* of path */
	char path[PATH_MAX]; /* relative path of the directory being read */
};

bool cgwalk_uid_is_valid(const char *uid)
{
	size_t len = strlen(uid);

	if (len == 0 || len > CGWALK_UID_MAX || uid[0] == '-' || uid[len - 1] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!((uid[i] >= '0' && uid[i] <= '9') || (uid[i] >= 'a' && uid[i] <= 'f') ||
		      uid[i] == '-'))
			return false;
	}
	return true;
}

static bool is_hex(const char *s, size_t len)
{
	if (len == 0)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	}
	return true;
}

static bool has_prefix(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Copy len chars of a candidate uid, undoing systemd's '-' -> '_' escaping when asked. */
static int take_uid(const char *s, size_t len, bool systemd, char *uid)
{
	if (len == 0 || len > CGWALK_UID_MAX)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		/* In a slice name '-' separates hierarchy levels, so a uid cannot contain one. */
		if (systemd && s[i] == '-')
			return -EINVAL;
		uid[i] = systemd && s[i] == '_' ? '-' : s[i];
	}
	uid[len] = '\0';
	return cgwalk_uid_is_valid(uid) ? 0 : -EINVAL;
}

/*
 * systemd driver: "<prefix>kubepods-[burstable-|besteffort-]pod<uid_>.slice", where the
 * prefix is empty or ends in '-' (nested kubelet roots such as "kubelet-kubepods-...").
 */
static int match_systemd_pod(const char *name, char *uid, enum cgwalk_qos *qos)
{
	static const struct {
		const char *infix;
		enum cgwalk_qos qos;
	} tiers[] = {
		{ "pod", CGWALK_QOS_GUARANTEED },
		{ "burstable-pod", CGWALK_QOS_BURSTABLE },
		{ "besteffort-pod", CGWALK_QOS_BESTEFFORT },
	};
	const char *k, *rest;
	size_t len = strlen(name);

	if (!has_suffix(name, ".slice"))
		return 0;
	for (k = strstr(name, "kubepods-"); k; k = strstr(k + 1, "kubepods-")) {
		if (k != name && k[-1] != '-')
			continue;
		rest = k + strlen("kubepods-");
		for (size_t t = 0; t < sizeof(tiers) / sizeof(tiers[0]); t++) {
			if (!has_prefix(rest, tiers[t].infix))
				continue;
			rest += strlen(tiers[t].infix);
			*qos = tiers[t].qos;
			if (take_uid(rest, (size_t)(name + len - strlen(".slice") - rest), true,
				     uid))
				return -EINVAL;
			return 1;
		}
	}
	return 0;
}

/* cgroupfs driver: "pod<uid>" directly under kubepods/, kubepods/burstable/ or besteffort/. */
static int match_cgroupfs_pod(const char *parent, const char *name, char *uid, enum cgwalk_qos *qos)
{
	if (!has_prefix(name, "pod"))
		return 0;
	if (strcmp(parent, "kubepods") == 0)
		*qos = CGWALK_QOS_GUARANTEED;
	else if (strcmp(parent, "burstable") == 0)
		*qos = CGWALK_QOS_BURSTABLE;
	else if (strcmp(parent, "besteffort") == 0)
		*qos = CGWALK_QOS_BESTEFFORT;
	else
		return 0;
	if (take_uid(name + 3, strlen(name + 3), false, uid))
		return -EINVAL;
	return 1;
}

int cgwalk_match_pod(const char *parent, const char *name, char *uid, enum cgwalk_qos *qos,
		     enum cgwalk_driver *driver)
{
	int r;

	r = match_systemd_pod(name, uid, qos);
	if (r) {
		*driver = CGWALK_DRIVER_SYSTEMD;
		return r;
	}
	r = match_cgroupfs_pod(parent ? parent : "", name, uid, qos);
	if (r)
		*driver = CGWALK_DRIVER_CGROUPFS;
	return r;
}

static int take_id(const char *s, size_t len, char *id)
{
	if (len > CGWALK_ID_MAX || !is_hex(s, len))
		return -EINVAL;
	memcpy(id, s, len);
	id[len] = '\0';
	return 1;
}

int cgwalk_match_container(const char *name, char *id, enum cgwalk_runtime *runtime)
{
	static const struct {
		const char *prefix;
		enum cgwalk_runtime rt;
	} scopes[] = {
		{ "cri-containerd-", CGWALK_RT_CONTAINERD },
		{ "crio-", CGWALK_RT_CRIO },
		{ "docker-", CGWALK_RT_DOCKER },
	};
	size_t len = strlen(name), plen;

	/* conmon is CRI-O's per-container monitor, not the container's own processes. */
	if (has_prefix(name, "crio-conmon-"))
		return 0;
	if (has_suffix(name, ".scope")) {
		for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]); i++) {
			plen = strlen(scopes[i].prefix);
			if (!has_prefix(name, scopes[i].prefix))
				continue;
			*runtime = scopes[i].rt;
			return take_id(name + plen, len - plen - strlen(".scope"), id);
		}
		return 0;
	}
	if (has_prefix(name, "crio-")) {
		*runtime = CGWALK_RT_CRIO;
		return take_id(name + 5, len - 5, id);
	}
	/* A bare name is a container only when it is a full 64-hex id; anything else is noise. */
	if (len == CGWALK_ID_MAX && is_hex(name, len)) {
		*runtime = CGWALK_RT_UNKNOWN;
		return take_id(name, len, id);
	}
	return 0;
}

/* ---- the walk ---- */

static bool is_subdir(int dfd, const struct dirent *de)
{
	struct stat st;

	if (de->d_type == DT_DIR)
		return true;
	if (de->d_type != DT_UNKNOWN)
		return false;
	return fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

static int open_child(int dfd, const char *name)
{
	return openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

static char *join(const char *dir, const char *name)
{
	size_t len = strlen(dir) + strlen(name) + 2;
	char *s = malloc(len);

	if (s)
		snprintf(s, len, "%s%s%s", dir, dir[0] ? "/" : "", name);
	return s;
}

static int add_container(struct cgwalk_pod *pod, size_t *cap, const char *id,
			 enum cgwalk_runtime rt, const char *name)
{
	struct cgwalk_container *c;

	if (pod->nr_containers == *cap) {
		size_t ncap = *cap ? *cap * 2 : 4;

		c = realloc(pod->containers, ncap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		pod->containers = c;
		*cap = ncap;
	}
	c = &pod->containers[pod->nr_containers];
	memset(c, 0, sizeof(*c));
	c->path = join(pod->path, name);
	if (!c->path)
		return -ENOMEM;
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->runtime = rt;
	pod->nr_containers++;
	return 0;
}

static int cmp_container(const void *a, const void *b)
{
	return strcmp(((const struct cgwalk_container *)a)->id,
		      ((const struct cgwalk_container *)b)->id);
}

static int scan_containers(struct cgwalk_pod *pod, int dfd)
{
	char id[CGWALK_ID_MAX + 1];
	enum cgwalk_runtime rt;
	struct dirent *de;
	size_t cap = 0;
	DIR *d;
	int r, err = 0;

	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !is_subdir(dirfd(d), de))
			continue;
		r = cgwalk_match_container(de->d_name, id, &rt);
		if (r < 0)
			log_dbg("skipping container cgroup with invalid id", "pod=%s name=\"%s\"",
				pod->path, de->d_name);
		if (r <= 0)
			continue;
		err = add_container(pod, &cap, id, rt, de->d_name);
		if (err)
			break;
	}
	closedir(d);
	if (pod->nr_containers)
		qsort(pod->containers, pod->nr_containers, sizeof(*pod->containers), cmp_container);
	return err;
}

static int add_pod(struct walker *w, int dfd, const char *name, const char *uid,
		   enum cgwalk_qos qos, enum cgwalk_driver driver)
{
	struct cgwalk_result *res = w->res;
	struct cgwalk_pod *pod;
	int fd;

	if (res->nr_pods == w->cap) {
		size_t ncap = w->cap ? w->cap * 2 : 16;

		pod = realloc(res->pods, ncap * sizeof(*pod));
		if (!pod)
			return -ENOMEM;
		res->pods = pod;
		w->cap = ncap;
	}
	pod = &res->pods[res->nr_pods];
	memset(pod, 0, sizeof(*pod));
	pod->path = join(w->path, name);
	if (!pod->path)
		return -ENOMEM;
	snprintf(pod->uid, sizeof(pod->uid), "%s", uid);
	pod->qos = qos;
	pod->driver = driver;
	res->nr_pods++;
	fd = open_child(dfd, name);
	if (fd < 0)
		return 0; /* vanished meanwhile: a pod without containers */
	return scan_containers(pod, fd);
}

static int walk_dir(struct walker *w, int dfd, const char *dir_name, int depth);

/* Descend into name with w->path extended by it, then restore w->path. */
static int descend(struct walker *w, int dfd, const char *name, int depth)
{
	size_t old = w->len;
	int fd, n, err;

	n = snprintf(w->path + old, sizeof(w->path) - old, "%s%s", old ? "/" : "", name);
	if (n < 0 || (size_t)n >= sizeof(w->path) - old) {
		w->path[old] = '\0';
		return 0;
	}
	fd = open_child(dfd, name);
	if (fd < 0) {
		w->path[old] = '\0';
		return 0;
	}
	w->len = old + (size_t)n;
	err = walk_dir(w, fd, name, depth + 1);
	w->len = old;
	w->path[old] = '\0';
	return err;
}

/* Takes ownership of dfd. */
static int walk_dir(struct walker *w, int dfd, const char *dir_name, int depth)
{
	char uid[CGWALK_UID_MAX + 1];
	enum cgwalk_driver driver;
	enum cgwalk_qos qos;
	struct dirent *de;
	DIR *d;
	int r, err = 0;

	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return 0;
	}
	while (!err && (de = readdir(d))) {
		if (de->d_name[0] == '.' || !is_subdir(dirfd(d), de))
			continue;
		r = cgwalk_match_pod(dir_name, de->d_name, uid, &qos, &driver);
		if (r < 0) {
			log_dbg("skipping pod cgroup with invalid uid", "dir=\"%s\" name=\"%s\"",
				w->path, de->d_name);
			continue;
		}
		if (r > 0)
			err = add_pod(w, dirfd(d), de->d_name, uid, qos, driver);
		else if (depth < CGWALK_MAX_DEPTH)
			err = descend(w, dirfd(d), de->d_name, depth);
	}
	closedir(d);
	return err;
}

static int cmp_pod(const void *a, const void *b)
{
	const struct cgwalk_pod *x = a, *y = b;
	int c = strcmp(x->uid, y->uid);

	return c ? c : strcmp(x->path, y->path);
}

/* A uid seen twice (two kubelet roots?) keeps its first path in sort order. */
static void dedup_pods(struct cgwalk_result *res)
{
	size_t out = 0;

	for (size_t i = 0; i < res->nr_pods; i++) {
		if (out && strcmp(res->pods[out - 1].uid, res->pods[i].uid) == 0) {
			log_warn("pod cgroup found twice, keeping the first", "uid=%s path=%s",
				 res->pods[i].uid, res->pods[i].path);
			cgwalk_pod_release(&res->pods[i]);
			continue;
		}
		res->pods[out++] = res->pods[i];
	}
	res->nr_pods = out;
}

int cgwalk_scan(const char *root, struct cgwalk_result **ret)
{
	struct walker *w;
	int fd, err;

	if (!root)
		return -EINVAL;
	fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	w = calloc(1, sizeof(*w));
	if (w)
		w->res = calloc(1, sizeof(*w->res));
	if (!w || !w->res) {
		close(fd);
		err = -ENOMEM;
		goto out;
	}
	err = walk_dir(w, fd, "", 0);
	if (err)
		goto out;
	if (w->res->nr_pods)
		qsort(w->res->pods, w->res->nr_pods, sizeof(*w->res->pods), cmp_pod);
	dedup_pods(w->res);
	*ret = w->res;
	w->res = NULL;
out:
	if (w)
		cgwalk_result__free(w->res);
	free(w);
	return err;
}
