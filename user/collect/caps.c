// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <linux/capability.h>

#include "caps.h"

struct cap_need {
	int cap;
	int alt; /* also satisfies it, -1 for none */
	const char *name;
	const char *why;
};

static const struct cap_need needs[] = {
	{ CAP_BPF, CAP_SYS_ADMIN, "CAP_BPF", "create maps, load BPF programs" },
	{ CAP_PERFMON, CAP_SYS_ADMIN, "CAP_PERFMON",
	  "load tracing programs, open per-CPU perf events" },
	{ CAP_DAC_READ_SEARCH, -1, "CAP_DAC_READ_SEARCH",
	  "open_by_handle_at: map BPF cgroup ids to cgroup paths" },
};

static const struct cap_need chown_need = { CAP_CHOWN, -1, "CAP_CHOWN",
					    "hand the socket to export.socketGroup" };

static bool has(uint64_t eff, int cap)
{
	return cap >= 0 && (eff >> cap) & 1;
}

static int add(const struct cap_need *n, uint64_t eff, char *buf, size_t len, size_t *off)
{
	if (has(eff, n->cap) || has(eff, n->alt))
		return 0;
	if (*off < len)
		*off += snprintf(buf + *off, len - *off, "%s%s (%s)", *off ? ", " : "", n->name,
				 n->why);
	return 1;
}

int caps_missing(uint64_t eff, bool socket_group, char *buf, size_t len)
{
	size_t off = 0;
	int n = 0;

	if (len)
		buf[0] = '\0';
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		n += add(&needs[i], eff, buf, len, &off);
	if (socket_group)
		n += add(&chown_need, eff, buf, len, &off);
	return n;
}

int caps_effective(uint64_t *ret)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %" SCNx64, ret) == 1) {
			err = 0;
			break;
		}
	fclose(f);
	return err;
}
