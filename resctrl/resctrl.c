// SPDX-License-Identifier: GPL-2.0
/* Root handle: info/ capabilities, flock locking, the real backend, small file helpers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "resctrl_internal.h"

static resctrl_print_fn_t print_fn;

resctrl_print_fn_t resctrl_set_print(resctrl_print_fn_t fn)
{
	resctrl_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void resctrl_pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(fmt, ap);
	va_end(ap);
}

int resctrl_read_at(int dirfd, const char *path, char *buf, size_t len)
{
	size_t off = 0;
	ssize_t n;
	int fd, err;

	if (!len)
		return -EINVAL;
	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (off < len - 1) {
		n = read(fd, buf + off, len - 1 - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			close(fd);
			return err;
		}
		if (!n)
			break;
		off += n;
	}
	buf[off] = '\0';
	close(fd);
	return off;
}

int resctrl_read_alloc_at(int dirfd, const char *path, char **buf, size_t *cap)
{
	size_t off = 0;
	ssize_t n;
	char *p;
	int fd, err;

	fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		if (!*buf || *cap - off < 4096) {
			size_t ncap = *cap ? *cap * 2 : 65536;

			p = realloc(*buf, ncap);
			if (!p) {
				err = -ENOMEM;
				goto out;
			}
			*buf = p;
			*cap = ncap;
		}
		n = read(fd, *buf + off, *cap - off - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			goto out;
		}
		if (!n)
			break;
		off += n;
	}
	(*buf)[off] = '\0';
	err = off;
out:
	close(fd);
	return err;
}

int resctrl_read_u64_at(int dirfd, const char *path, int base, uint64_t *ret)
{
	char buf[64], *end;
	unsigned long long v;
	int err;

	err = resctrl_read_at(dirfd, path, buf, sizeof(buf));
	if (err < 0)
		return err;
	errno = 0;
	v = strtoull(buf, &end, base);
	if (errno || end == buf)
		return -EINVAL;
	*ret = v;
	return 0;
}

static unsigned int bit_len(uint64_t v)
{
	return v ? 64 - __builtin_clzll(v) : 0;
}

static void read_res_info(int fd, enum resctrl_res res, struct resctrl_res_info *ri)
{
	char path[64];
	uint64_t v;

	memset(ri, 0, sizeof(*ri));
	snprintf(path, sizeof(path), "info/%s/num_closids", resctrl_res_name(res));
	if (resctrl_read_u64_at(fd, path, 10, &v))
		return;
	ri->is_present = true;
	ri->num_closids = v;
	ri->is_cache = res != RESCTRL_RES_MB && res != RESCTRL_RES_SMBA;
	if (ri->is_cache) {
		snprintf(path, sizeof(path), "info/%s/cbm_mask", resctrl_res_name(res));
		if (!resctrl_read_u64_at(fd, path, 16, &v))
			ri->cbm_mask = v;
		ri->cbm_len = bit_len(ri->cbm_mask);
		snprintf(path, sizeof(path), "info/%s/min_cbm_bits", resctrl_res_name(res));
		ri->min_cbm_bits = resctrl_read_u64_at(fd, path, 10, &v) ? 1 : v;
		snprintf(path, sizeof(path), "info/%s/shareable_bits", resctrl_res_name(res));
		if (!resctrl_read_u64_at(fd, path, 16, &v))
			ri->shareable_bits = v;
		snprintf(path, sizeof(path), "info/%s/sparse_masks", resctrl_res_name(res));
		ri->is_sparse = !resctrl_read_u64_at(fd, path, 10, &v) && v;
		return;
	}
	/* a missing min_bandwidth/bandwidth_gran reads as AMD's 0 and 1 */
	snprintf(path, sizeof(path), "info/%s/min_bandwidth", resctrl_res_name(res));
	ri->min_bw = resctrl_read_u64_at(fd, path, 10, &v) ? 0 : v;
	snprintf(path, sizeof(path), "info/%s/bandwidth_gran", resctrl_res_name(res));
	ri->bw_gran = resctrl_read_u64_at(fd, path, 10, &v) || !v ? 1 : v;
	snprintf(path, sizeof(path), "info/%s/delay_linear", resctrl_res_name(res));
	ri->is_delay_linear = !resctrl_read_u64_at(fd, path, 10, &v) && v;
}

static void read_mon_info(int fd, struct resctrl_caps *caps)
{
	char buf[1024], *line, *save = NULL;
	uint64_t v;
	int i;

	if (resctrl_read_at(fd, "info/L3_MON/mon_features", buf, sizeof(buf)) < 0)
		return;
	caps->has_mon = true;
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		for (i = 0; i < RESCTRL_EV_MAX; i++)
			if (!strcmp(line, resctrl_event_name(i)))
				caps->has_event[i] = true;
	if (!resctrl_read_u64_at(fd, "info/L3_MON/num_rmids", 10, &v))
		caps->num_rmids = v;
	if (!resctrl_read_u64_at(fd, "info/L3_MON/max_threshold_occupancy", 10, &v))
		caps->max_threshold_occupancy = v;
}

static int cmp_uint(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a, y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/* Cache ids are not necessarily contiguous: take them from what the kernel shows. */
static void read_domains(int fd, struct resctrl_caps *caps)
{
	static const enum resctrl_res order[] = { RESCTRL_RES_L3, RESCTRL_RES_L3CODE,
						  RESCTRL_RES_MB };
	struct resctrl_schemata s;
	char buf[4096];
	struct dirent *de;
	unsigned int i;
	DIR *d;
	int dfd;

	if (resctrl_read_at(fd, "schemata", buf, sizeof(buf)) >= 0 &&
	    !resctrl_schemata_parse(buf, &s)) {
		for (i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
			const struct resctrl_sline *l = &s.res[order[i]];

			if (!l->nr)
				continue;
			caps->nr_domains = l->nr;
			memcpy(caps->domain_ids, l->ids, l->nr * sizeof(l->ids[0]));
			goto sort;
		}
	}
	/* monitoring-only: no schemata lines, the mon_data directory names the domains */
	dfd = openat(fd, "mon_data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return;
	d = fdopendir(dfd);
	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d)) && caps->nr_domains < RESCTRL_MAX_DOMAINS) {
		unsigned int id;

		if (sscanf(de->d_name, "mon_L3_%u", &id) == 1)
			caps->domain_ids[caps->nr_domains++] = id;
	}
	closedir(d);
sort:
	qsort(caps->domain_ids, caps->nr_domains, sizeof(caps->domain_ids[0]), cmp_uint);
}

int resctrl_caps_read(int fd, struct resctrl_caps *caps)
{
	struct resctrl_res_info *mb;
	struct stat st;
	int i;

	memset(caps, 0, sizeof(*caps));
	if (fstatat(fd, "info", &st, 0) || !S_ISDIR(st.st_mode))
		return -ENOENT;
	for (i = 0; i < RESCTRL_RES_MAX; i++) {
		struct resctrl_res_info *ri = &caps->res[i];

		read_res_info(fd, i, ri);
		if (!ri->is_present)
			continue;
		caps->has_alloc = true;
		/*
		 * The kernel already halves num_closids of L3CODE/L3DATA under CDP
		 * (schemata_list_add), so the minimum over what info/ shows is the usable count.
		 */
		if (!caps->num_closids || ri->num_closids < caps->num_closids)
			caps->num_closids = ri->num_closids;
	}
	caps->has_l3_cdp = caps->res[RESCTRL_RES_L3CODE].is_present &&
			   caps->res[RESCTRL_RES_L3DATA].is_present;
	caps->has_l2_cdp = caps->res[RESCTRL_RES_L2CODE].is_present &&
			   caps->res[RESCTRL_RES_L2DATA].is_present;
	caps->has_mba_mbps = !faccessat(fd, "mba_MBps_event", F_OK, 0);
	mb = &caps->res[RESCTRL_RES_MB];
	/*
	 * AMD rule: Intel derives min_bandwidth from the largest delay (always >= 10 %), AMD
	 * reports min 0 with granularity 1; SMBA exists only on AMD.
	 */
	caps->is_amd = caps->res[RESCTRL_RES_SMBA].is_present ||
		       (mb->is_present && mb->min_bw == 0 && mb->bw_gran == 1);
	for (i = RESCTRL_RES_MB; i <= RESCTRL_RES_SMBA; i++) {
		struct resctrl_res_info *ri = &caps->res[i];

		if (!ri->is_present)
			continue;
		if (caps->has_mba_mbps && i == RESCTRL_RES_MB) {
			ri->mb_unit = RESCTRL_MB_MBPS;
			ri->max_bw = UINT32_MAX;
		} else if (caps->is_amd) {
			ri->mb_unit = RESCTRL_MB_AMD;
			ri->max_bw = 2048;
		} else {
			ri->mb_unit = RESCTRL_MB_PERCENT;
			ri->max_bw = 100;
		}
	}
	read_mon_info(fd, caps);
	read_domains(fd, caps);
	return 0;
}

static int real_write(void *ctx, int root_fd, const char *path, const char *buf, size_t len)
{
	ssize_t n;
	int fd, err = 0;

	/* O_TRUNC as the shell's '>' does: ignored by kernfs, and sane on a plain directory */
	fd = openat(root_fd, path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, buf, len);
	if (n < 0)
		err = -errno;
	else if ((size_t)n != len)
		err = -EIO;
	close(fd);
	return err;
}

static int real_mkdir(void *ctx, int root_fd, const char *path)
{
	return mkdirat(root_fd, path, 0755) ? -errno : 0;
}

static int real_rmdir(void *ctx, int root_fd, const char *path)
{
	return unlinkat(root_fd, path, AT_REMOVEDIR) ? -errno : 0;
}

const struct resctrl_backend_ops resctrl_real_backend = {
	.name = "real",
	.write = real_write,
	.mkdir = real_mkdir,
	.rmdir = real_rmdir,
};

int resctrl_open(const char *root, struct resctrl **ret)
{
	return resctrl_open_backend(root, &resctrl_real_backend, NULL, ret);
}

int resctrl_open_backend(const char *root, const struct resctrl_backend_ops *ops, void *ctx,
			 struct resctrl **ret)
{
	struct resctrl *r;
	int err;

	if (!root)
		root = RESCTRL_DEFAULT_ROOT;
	if (strlen(root) >= PATH_MAX)
		return -ENAMETOOLONG;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->lock_fd = -1;
	strcpy(r->root, root);
	r->ops = ops;
	r->ctx = ctx;
	r->root_fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (r->root_fd < 0) {
		err = -errno;
		goto err_free;
	}
	err = resctrl_caps_read(r->root_fd, &r->caps);
	if (err)
		goto err_free;
	resctrl_pr_debug("resctrl: %s: alloc=%d mon=%d closids=%u rmids=%u domains=%u amd=%d\n",
			 root, r->caps.has_alloc, r->caps.has_mon, r->caps.num_closids,
			 r->caps.num_rmids, r->caps.nr_domains, r->caps.is_amd);
	*ret = r;
	return 0;
err_free:
	resctrl_close(r);
	return err;
}

void resctrl_close(struct resctrl *r)
{
	if (!r)
		return;
	if (r->lock_fd >= 0)
		close(r->lock_fd);
	if (r->root_fd >= 0)
		close(r->root_fd);
	free(r);
}

const struct resctrl_caps *resctrl_caps(const struct resctrl *r)
{
	return &r->caps;
}

const char *resctrl_root(const struct resctrl *r)
{
	return r->root;
}

const char *resctrl_last_status(const struct resctrl *r)
{
	return r->last_status;
}

int resctrl_lock(struct resctrl *r, bool is_exclusive, int timeout_ms)
{
	const struct timespec step = { .tv_nsec = 10 * 1000 * 1000 };
	int op = (is_exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
	int waited_ms = 0;

	if (r->lock_fd < 0) {
		r->lock_fd = open(r->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (r->lock_fd < 0)
			return -errno;
	}
	while (flock(r->lock_fd, op)) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return -errno;
		if (timeout_ms >= 0 && waited_ms >= timeout_ms)
			return -ETIMEDOUT;
		nanosleep(&step, NULL);
		waited_ms += 10;
	}
	return 0;
}

void resctrl_unlock(struct resctrl *r)
{
	if (r->lock_fd >= 0)
		flock(r->lock_fd, LOCK_UN);
}

static bool name_ok(const char *name)
{
	size_t len = name ? strlen(name) : 0;

	return len && len + strlen(RESCTRL_PREFIX) < RESCTRL_NAME_MAX && !strchr(name, '/') &&
	       strcmp(name, ".") && strcmp(name, "..");
}

int resctrl_group_path(const char *ctrl, const char *mon, const char *file, char *buf, size_t len)
{
	size_t off = 0;
	int n;

	buf[0] = '\0';
	if ((ctrl && !name_ok(ctrl)) || (mon && !name_ok(mon)))
		return -EINVAL;
	if (ctrl) {
		n = snprintf(buf, len, RESCTRL_PREFIX "%s/", ctrl);
		if (n < 0 || (size_t)n >= len)
			return -ENAMETOOLONG;
		off = n;
	}
	if (mon) {
		n = snprintf(buf + off, len - off, "mon_groups/" RESCTRL_PREFIX "%s/", mon);
		if (n < 0 || (size_t)n >= len - off)
			return -ENAMETOOLONG;
		off += n;
	}
	n = snprintf(buf + off, len - off, "%s", file ? file : "");
	if (n < 0 || (size_t)n >= len - off)
		return -ENAMETOOLONG;
	off += n;
	/* a directory path: drop the trailing '/' (or "." for the root itself) */
	if (!file) {
		if (off)
			buf[off - 1] = '\0';
		else
			snprintf(buf, len, ".");
	}
	return 0;
}

static void fetch_status(struct resctrl *r)
{
	size_t n;

	if (resctrl_read_at(r->root_fd, "info/last_cmd_status", r->last_status,
			    sizeof(r->last_status)) < 0) {
		r->last_status[0] = '\0';
		return;
	}
	n = strlen(r->last_status);
	while (n && (r->last_status[n - 1] == '\n' || r->last_status[n - 1] == ' '))
		r->last_status[--n] = '\0';
}

int resctrl_do_write(struct resctrl *r, const char *path, const char *buf, size_t len)
{
	int err;

	r->last_status[0] = '\0';
	err = r->ops->write(r->ctx, r->root_fd, path, buf, len);
	if (err) {
		fetch_status(r);
		resctrl_pr_debug("resctrl: write %s: %s (%s)\n", path, strerror(-err),
				 r->last_status);
	}
	return err;
}

int resctrl_do_mkdir(struct resctrl *r, const char *path)
{
	int err;

	r->last_status[0] = '\0';
	err = r->ops->mkdir(r->ctx, r->root_fd, path);
	if (err) {
		fetch_status(r);
		resctrl_pr_debug("resctrl: mkdir %s: %s (%s)\n", path, strerror(-err),
				 r->last_status);
	}
	return err;
}

int resctrl_do_rmdir(struct resctrl *r, const char *path)
{
	int err;

	r->last_status[0] = '\0';
	err = r->ops->rmdir(r->ctx, r->root_fd, path);
	if (err) {
		fetch_status(r);
		resctrl_pr_debug("resctrl: rmdir %s: %s (%s)\n", path, strerror(-err),
				 r->last_status);
	}
	return err;
}

bool resctrl_err_unreachable(int err)
{
	return err == -ENOTCONN || err == -ENODEV || err == -ENOENT || err == -EIO ||
	       err == -ESTALE || err == -ESHUTDOWN;
}
