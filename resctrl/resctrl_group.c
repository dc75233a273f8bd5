// SPDX-License-Identifier: GPL-2.0
/* kqos- control and monitoring groups, and task placement. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resctrl_internal.h"

int resctrl_group_create(struct resctrl *r, const char *name)
{
	char path[PATH_MAX];
	int err;

	err = resctrl_group_path(name, NULL, NULL, path, sizeof(path));
	if (err || !name)
		return err ? err : -EINVAL;
	return resctrl_do_mkdir(r, path);
}

int resctrl_group_remove(struct resctrl *r, const char *name)
{
	char path[PATH_MAX];
	int err;

	err = resctrl_group_path(name, NULL, NULL, path, sizeof(path));
	if (err || !name)
		return err ? err : -EINVAL;
	return resctrl_do_rmdir(r, path);
}

int resctrl_mon_group_create(struct resctrl *r, const char *ctrl, const char *name)
{
	char path[PATH_MAX];
	int err;

	err = resctrl_group_path(ctrl, name, NULL, path, sizeof(path));
	if (err || !name)
		return err ? err : -EINVAL;
	return resctrl_do_mkdir(r, path);
}

int resctrl_mon_group_remove(struct resctrl *r, const char *ctrl, const char *name)
{
	char path[PATH_MAX];
	int err;

	err = resctrl_group_path(ctrl, name, NULL, path, sizeof(path));
	if (err || !name)
		return err ? err : -EINVAL;
	return resctrl_do_rmdir(r, path);
}

/* Directories named kqos-* under dir; everything else belongs to someone else. */
static int list_prefixed(struct resctrl *r, const char *dir, char (*names)[RESCTRL_NAME_MAX],
			 size_t max)
{
	size_t plen = strlen(RESCTRL_PREFIX);
	struct dirent *de;
	int fd, nr = 0;
	DIR *d;

	fd = openat(r->root_fd, dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, RESCTRL_PREFIX, plen) || !de->d_name[plen])
			continue;
		if (de->d_type != DT_DIR && de->d_type != DT_UNKNOWN)
			continue;
		if (strlen(de->d_name) >= RESCTRL_NAME_MAX)
			continue;
		if ((size_t)nr < max)
			snprintf(names[nr], RESCTRL_NAME_MAX, "%s", de->d_name + plen);
		nr++;
	}
	closedir(d);
	return nr;
}

int resctrl_group_list(struct resctrl *r, char (*names)[RESCTRL_NAME_MAX], size_t max)
{
	return list_prefixed(r, ".", names, max);
}

int resctrl_mon_group_list(struct resctrl *r, const char *ctrl, char (*names)[RESCTRL_NAME_MAX],
			   size_t max)
{
	char path[PATH_MAX];
	int err;

	err = resctrl_group_path(ctrl, NULL, "mon_groups", path, sizeof(path));
	if (err)
		return err;
	return list_prefixed(r, path, names, max);
}

void resctrl_tids_fini(struct resctrl_tids *t)
{
	if (!t)
		return;
	free(t->v);
	t->v = NULL;
	t->nr = 0;
	t->cap = 0;
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

bool resctrl_tids_contains(const struct resctrl_tids *t, pid_t tid)
{
	return t->nr && bsearch(&tid, t->v, t->nr, sizeof(tid), cmp_pid);
}

static int tids_push(struct resctrl_tids *t, pid_t tid)
{
	if (t->nr == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 1024;
		pid_t *v = realloc(t->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = ncap;
	}
	t->v[t->nr++] = tid;
	return 0;
}

int resctrl_tasks_read(struct resctrl *r, const char *ctrl, const char *mon, struct resctrl_tids *t)
{
	char path[PATH_MAX], *buf = NULL, *p, *end;
	size_t cap = 0;
	long v;
	int err;

	t->nr = 0;
	err = resctrl_group_path(ctrl, mon, "tasks", path, sizeof(path));
	if (err)
		return err;
	err = resctrl_read_alloc_at(r->root_fd, path, &buf, &cap);
	if (err < 0)
		goto out;
	err = 0;
	for (p = buf; *p; p = end) {
		while (*p == '\n' || *p == ' ')
			p++;
		if (!*p)
			break;
		v = strtol(p, &end, 10);
		if (end == p || v <= 0) {
			err = -EINVAL;
			goto out;
		}
		err = tids_push(t, v);
		if (err)
			goto out;
	}
	if (t->nr)
		qsort(t->v, t->nr, sizeof(*t->v), cmp_pid);
out:
	free(buf);
	return err;
}

int resctrl_tasks_add(struct resctrl *r, const char *ctrl, const char *mon, const pid_t *tids,
		      size_t nr, struct resctrl_tasks_result *ret)
{
	char path[PATH_MAX], buf[24];
	size_t i;
	int n, err;

	memset(ret, 0, sizeof(*ret));
	err = resctrl_group_path(ctrl, mon, "tasks", path, sizeof(path));
	if (err)
		return err;
	/* one tid per write(): a comma list stops at the first bad tid and hides which one */
	for (i = 0; i < nr; i++) {
		n = snprintf(buf, sizeof(buf), "%d\n", (int)tids[i]);
		err = resctrl_do_write(r, path, buf, n);
		if (!err)
			ret->nr_moved++;
		else if (err == -ESRCH)
			ret->nr_gone++;
		else if (!ret->first_err)
			ret->first_err = err;
	}
	return ret->first_err;
}

/* --- schemata files: the pure text of resctrl_schemata.c read and written here --- */

int resctrl_schemata_read(struct resctrl *r, const char *ctrl, struct resctrl_schemata *ret)
{
	char path[PATH_MAX], buf[8192];
	int err;

	err = resctrl_group_path(ctrl, NULL, "schemata", path, sizeof(path));
	if (err)
		return err;
	err = resctrl_read_at(r->root_fd, path, buf, sizeof(buf));
	if (err < 0)
		return err;
	return resctrl_schemata_parse(buf, ret);
}

int resctrl_schemata_write(struct resctrl *r, const char *ctrl, const struct resctrl_schemata *want)
{
	struct resctrl_schemata norm = *want, cur;
	char path[PATH_MAX], buf[8192];
	unsigned int i;
	int res, n, err;

	r->last_status[0] = '\0';
	err = resctrl_schemata_validate(&r->caps, want, r->last_status, sizeof(r->last_status));
	if (err)
		return err;
	/* compare what the kernel will store, or a rounded MB value is rewritten every tick */
	for (res = RESCTRL_RES_MB; res <= RESCTRL_RES_SMBA; res++)
		for (i = 0; i < norm.res[res].nr; i++)
			resctrl_check_mb(&r->caps.res[res], norm.res[res].vals[i],
					 &norm.res[res].vals[i], NULL, 0);
	err = resctrl_schemata_read(r, ctrl, &cur);
	if (err)
		return err;
	n = resctrl_schemata_format(&norm, &cur, buf, sizeof(buf));
	if (n <= 0)
		return n;
	err = resctrl_group_path(ctrl, NULL, "schemata", path, sizeof(path));
	if (err)
		return err;
	err = resctrl_do_write(r, path, buf, n);
	return err ? err : 1;
}
