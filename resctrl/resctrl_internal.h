/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_RESCTRL_RESCTRL_INTERNAL_H
#define KQOS_RESCTRL_RESCTRL_INTERNAL_H

/* Shared by the resctrl/ sources only; user/ includes resctrl.h alone. */

#include <limits.h>

#include "resctrl.h"

struct resctrl {
	int root_fd;
	int lock_fd; /* own open file description, so flock() conflicts between handles */
	char root[PATH_MAX];
	const struct resctrl_backend_ops *ops;
	void *ctx;
	struct resctrl_caps caps;
	char last_status[RESCTRL_STATUS_LEN];
};

void resctrl_pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole file under dirfd into buf (NUL-terminated). Returns length or -errno. */
int resctrl_read_at(int dirfd, const char *path, char *buf, size_t len);
/* Same, growing *buf with realloc; *cap is its size. */
int resctrl_read_alloc_at(int dirfd, const char *path, char **buf, size_t *cap);
int resctrl_read_u64_at(int dirfd, const char *path, int base, uint64_t *ret);

/* "kqos-<ctrl>[/mon_groups/kqos-<mon>][/file]"; -EINVAL for bad names, -ENAMETOOLONG. */
int resctrl_group_path(const char *ctrl, const char *mon, const char *file, char *buf, size_t len);
/* Run a mutation through the backend; on failure copy info/last_cmd_status. */
int resctrl_do_write(struct resctrl *r, const char *path, const char *buf, size_t len);
int resctrl_do_mkdir(struct resctrl *r, const char *path);
int resctrl_do_rmdir(struct resctrl *r, const char *path);

#endif
