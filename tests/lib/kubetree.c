// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "fileio.h"
#include "kubetree.h"
#include "live.h"

void kubetree_uid(char *buf, size_t len, const char *prefix)
{
	snprintf(buf, len, "%s-0000-4000-8000-%012d", prefix, (int)getpid());
}

size_t kubetree_dirs(char (*dirs)[KUBETREE_DIR_LEN], const char *g_uid)
{
	snprintf(dirs[0], KUBETREE_DIR_LEN, "/kubepods");
	snprintf(dirs[1], KUBETREE_DIR_LEN, "/kubepods/pod%s", g_uid);
	snprintf(dirs[2], KUBETREE_DIR_LEN, "/kubepods/besteffort");
	return 3;
}

void kubetree_path(char *buf, size_t len, const char *tag, const char *ctrl, const char *rel,
		   const char *file)
{
	char base[512];

	live_cg_path(base, sizeof(base), ctrl, tag);
	snprintf(buf, len, "%s%s%s%s", base, rel, file ? "/" : "", file ? file : "");
}

int kubetree_mkdir(const char *tag, const char *ctrl, const char *rel)
{
	char p[PATH_MAX];

	kubetree_path(p, sizeof(p), tag, ctrl, rel, NULL);
	return mkdir(p, 0755) && errno != EEXIST ? -errno : 0;
}

void kubetree_remove(const char *tag, const char *ctrl, char (*dirs)[KUBETREE_DIR_LEN], size_t n)
{
	char p[PATH_MAX];

	while (n-- > 0) {
		kubetree_path(p, sizeof(p), tag, ctrl, dirs[n], NULL);
		rmdir(p);
	}
	live_cg_destroy(ctrl, tag);
}

int kubetree_write(const char *tag, const char *ctrl, const char *rel, const char *file,
		   const char *val)
{
	char p[PATH_MAX];

	kubetree_path(p, sizeof(p), tag, ctrl, rel, file);
	return fileio_put(p, val);
}

void kubetree_read(const char *tag, const char *ctrl, const char *rel, const char *file, char *buf,
		   size_t n)
{
	char p[PATH_MAX];

	kubetree_path(p, sizeof(p), tag, ctrl, rel, file);
	fileio_get_line(p, buf, n);
}
