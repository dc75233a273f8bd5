// SPDX-License-Identifier: GPL-2.0
/* mon_data: per-domain readings, "no value" states, wrap- and reset-safe rates. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resctrl_internal.h"

int resctrl_mon_parse(const char *buf, uint64_t *ret_bytes, enum resctrl_mon_state *ret_state)
{
	static const struct {
		const char *text;
		enum resctrl_mon_state state;
	} words[] = {
		{ "Unavailable", RESCTRL_MON_UNAVAILABLE },
		{ "Error", RESCTRL_MON_ERROR },
		{ "Unassigned", RESCTRL_MON_UNASSIGNED },
	};
	unsigned long long v;
	size_t i, len;
	char *end;

	while (*buf == ' ')
		buf++;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		len = strlen(words[i].text);
		if (!strncmp(buf, words[i].text, len)) {
			*ret_state = words[i].state;
			return -ENODATA;
		}
	}
	/* a reading is never 0 by default: libpqos' silent 0 on failure is what we avoid */
	errno = 0;
	v = strtoull(buf, &end, 10);
	if (errno || end == buf || *buf == '-' || (*end && *end != '\n')) {
		*ret_state = RESCTRL_MON_MISSING;
		return -ENODATA;
	}
	*ret_state = RESCTRL_MON_OK;
	*ret_bytes = v;
	return 0;
}

static enum resctrl_mon_state read_event(int dirfd, const char *path, uint64_t *ret)
{
	enum resctrl_mon_state state;
	char buf[64];

	if (resctrl_read_at(dirfd, path, buf, sizeof(buf)) < 0)
		return RESCTRL_MON_MISSING;
	resctrl_mon_parse(buf, ret, &state);
	return state;
}

static int cmp_dom(const void *a, const void *b)
{
	const struct resctrl_mon_dom *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* SNC: each mon_L3_XX holds mon_sub_L3_YY per NUMA node sharing that L3. */
static void read_subs(int dom_fd, const char *ev, struct resctrl_mon_dom *d)
{
	char path[2 * NAME_MAX + 2];
	struct dirent *de;
	unsigned int id;
	int fd;
	DIR *dir;

	fd = dup(dom_fd);
	if (fd < 0)
		return;
	dir = fdopendir(fd);
	if (!dir) {
		close(fd);
		return;
	}
	while ((de = readdir(dir)) && d->nr_sub < RESCTRL_MAX_SUB) {
		if (sscanf(de->d_name, "mon_sub_L3_%u", &id) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s", de->d_name, ev);
		d->sub_ids[d->nr_sub] = id;
		d->sub_state[d->nr_sub] = read_event(dom_fd, path, &d->sub_bytes[d->nr_sub]);
		d->nr_sub++;
	}
	closedir(dir);
}

int resctrl_mon_read(struct resctrl *r, const char *ctrl, const char *mon, enum resctrl_event ev,
		     struct resctrl_mon_value *ret)
{
	char path[PATH_MAX];
	struct dirent *de;
	int fd, dom_fd, err;
	unsigned int id, i;
	DIR *d;

	memset(ret, 0, sizeof(*ret));
	ret->ev = ev;
	if (ev >= RESCTRL_EV_MAX || !r->caps.has_event[ev])
		return -EOPNOTSUPP;
	err = resctrl_group_path(ctrl, mon, "mon_data", path, sizeof(path));
	if (err)
		return err;
	fd = openat(r->root_fd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -ENOMEM;
	}
	while ((de = readdir(d)) && ret->nr < RESCTRL_MAX_DOMAINS) {
		struct resctrl_mon_dom *dom = &ret->dom[ret->nr];

		if (sscanf(de->d_name, "mon_L3_%u", &id) != 1)
			continue;
		dom->id = id;
		dom_fd = openat(fd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (dom_fd < 0) {
			dom->state = RESCTRL_MON_MISSING;
		} else {
			dom->state = read_event(dom_fd, resctrl_event_name(ev), &dom->bytes);
			read_subs(dom_fd, resctrl_event_name(ev), dom);
			close(dom_fd);
		}
		ret->nr++;
	}
	closedir(d);
	qsort(ret->dom, ret->nr, sizeof(ret->dom[0]), cmp_dom);
	ret->is_sum_valid = ret->nr > 0;
	for (i = 0; i < ret->nr; i++) {
		if (ret->dom[i].state == RESCTRL_MON_OK)
			ret->sum += ret->dom[i].bytes;
		else
			ret->is_sum_valid = false;
	}
	return ret->is_sum_valid ? 0 : -ENODATA;
}

#define WRAP_WINDOW (1ULL << 40)

int resctrl_counter_delta(uint64_t prev, uint64_t cur, uint64_t *ret_delta)
{
	if (cur >= prev) {
		*ret_delta = cur - prev;
		return 0;
	}
	/* the kernel extends MBM to 64 bits, so only a counter near the top can really wrap */
	if (prev >= UINT64_MAX - WRAP_WINDOW && cur < WRAP_WINDOW) {
		*ret_delta = cur - prev; /* modulo 2^64 */
		return 0;
	}
	return -ERANGE;
}

int resctrl_rate_update(struct resctrl_rate *rt, enum resctrl_mon_state state, uint64_t bytes,
			uint64_t now_ns, double *ret_bps)
{
	bool had_prev = rt->has_prev;
	uint64_t prev = rt->prev_bytes, prev_ns = rt->prev_ns, delta;

	if (state != RESCTRL_MON_OK) {
		rt->has_prev = false;
		return -ENODATA;
	}
	rt->has_prev = true;
	rt->prev_bytes = bytes;
	rt->prev_ns = now_ns;
	if (!had_prev || now_ns <= prev_ns || resctrl_counter_delta(prev, bytes, &delta))
		return -ENODATA;
	*ret_bps = (double)delta * 1e9 / (double)(now_ns - prev_ns);
	return 0;
}
