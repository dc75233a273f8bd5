// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include <linux/magic.h>

#include "nodestat.h"

#define NODESTAT_BUF 4096 /* the cpu line and meminfo's first lines fit; the rest is not needed */

static const char *parse_u64(const char *p, __u64 *ret)
{
	char *end;
	unsigned long long v;

	while (*p == ' ')
		p++;
	if (*p < '0' || *p > '9')
		return NULL;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno)
		return NULL;
	*ret = v;
	return end;
}

int nodestat_parse_stat(const char *buf, struct node_stat *ret)
{
	/* user nice system idle iowait irq softirq steal */
	__u64 v[8];
	const char *p = buf;

	if (strncmp(p, "cpu ", 4))
		return -EINVAL;
	p += 4;
	for (int i = 0; i < 8; i++) {
		p = parse_u64(p, &v[i]);
		if (!p)
			return -EINVAL;
	}
	ret->busy_ticks = v[0] + v[1] + v[2] + v[5] + v[6];
	ret->has_cpu = true;
	return 0;
}

/* "Key:   123 kB" at the start of @line; -EINVAL when the key differs or the value is bad. */
static int meminfo_value(const char *line, const char *key, __u64 *ret)
{
	size_t len = strlen(key);

	if (strncmp(line, key, len) || line[len] != ':')
		return -ENOENT;
	return parse_u64(line + len + 1, ret) ? 0 : -EINVAL;
}

int nodestat_parse_meminfo(const char *buf, struct node_stat *ret)
{
	__u64 total = 0, avail = 0;
	bool has_total = false;

	for (const char *line = buf; line && *line; line = strchr(line, '\n')) {
		int err;

		line += *line == '\n';
		err = meminfo_value(line, "MemTotal", &total);
		if (err == -EINVAL)
			return err;
		has_total |= !err;
		err = meminfo_value(line, "MemAvailable", &avail);
		if (err == -EINVAL)
			return err;
	}
	if (!has_total || !total)
		return -EINVAL;
	ret->mem_total_kb = total;
	ret->mem_available_kb = avail;
	ret->has_memory = true;
	return 0;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

void nodestat_files_close(struct nodestat_files *f)
{
	close_fd(&f->stat_fd);
	close_fd(&f->meminfo_fd);
}

static int open_file(const char *proc_root, const char *name, int *fd)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%s", proc_root, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd < 0 ? -errno : 0;
}

/* procfs files are never replaced; a fake's may be (a rename over it), so those reopen. */
static bool on_procfs(int fd)
{
	struct statfs sfs;

	return !fstatfs(fd, &sfs) && sfs.f_type == PROC_SUPER_MAGIC;
}

/* The head of @name through *@fd, opened on first use; a failed read reopens once. */
static int read_head(const char *proc_root, const char *name, int *fd, char *buf, size_t len)
{
	ssize_t n = -1;
	int err = 0;

	for (int attempt = 0; attempt < 2 && n < 0; attempt++) {
		bool kept = *fd >= 0; /* kept fds are procfs ones: checked when opened */

		if (!kept && (err = open_file(proc_root, name, fd)))
			return err;
		n = pread(*fd, buf, len - 1, 0);
		err = n < 0 ? -errno : 0;
		if (n < 0 || (!kept && !on_procfs(*fd)))
			close_fd(fd);
	}
	if (err)
		return err;
	buf[n] = '\0';
	return 0;
}

void nodestat_read(const char *proc_root, struct nodestat_files *f, unsigned int what,
		   struct node_stat *ret)
{
	char buf[NODESTAT_BUF];

	if (what & NODESTAT_CPU) {
		ret->has_cpu = false;
		ret->busy_ticks = 0;
		ret->clk_tck = sysconf(_SC_CLK_TCK);
		if (!read_head(proc_root, "stat", &f->stat_fd, buf, sizeof(buf)))
			nodestat_parse_stat(buf, ret);
	}
	if (what & NODESTAT_MEMORY) {
		ret->has_memory = false;
		ret->mem_total_kb = ret->mem_available_kb = 0;
		if (!read_head(proc_root, "meminfo", &f->meminfo_fd, buf, sizeof(buf)))
			nodestat_parse_meminfo(buf, ret);
	}
}
