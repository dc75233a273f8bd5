// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int read_head(const char *proc_root, const char *name, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", proc_root, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return 0;
}

void nodestat_read(const char *proc_root, struct node_stat *ret)
{
	char buf[NODESTAT_BUF];

	*ret = (struct node_stat){ .clk_tck = sysconf(_SC_CLK_TCK) };
	if (!read_head(proc_root, "stat", buf, sizeof(buf)))
		nodestat_parse_stat(buf, ret);
	if (!read_head(proc_root, "meminfo", buf, sizeof(buf)))
		nodestat_parse_meminfo(buf, ret);
}
