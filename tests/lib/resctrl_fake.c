// SPDX-License-Identifier: GPL-2.0
/*
 * The fake backend: the kernel's schemata/mkdir/rmdir/tasks rules (fs/resctrl/ctrlmondata.c,
 * rdtgroup.c as summarised in ecosystem.md §1.4-1.5) over an in-memory model, re-materialised
 * as files so that the library's readers see real bytes.
 */
/* nftw() is XSI: -std=gnu11 alone does not declare it */
#define _GNU_SOURCE
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "resctrl_fake.h"
#include <limits.h>

#include "resctrl.h"

#define FAKE_MAX_GROUPS 256
#define FAKE_MAX_DOMS	8
#define FAKE_PATH_LEN	256
#define FAKE_L3_BYTES	(22ULL << 20)

struct fake_profile {
	const char *name;
	bool is_cdp, is_mbps, is_amd, is_snc, is_mon_only, is_legacy;
	unsigned int mb_closids;
	bool has_smba; /* profiles: AMD's */
};

static const struct fake_profile profiles[] = {
	{ .name = "skx2s", .mb_closids = 16 },
	{ .name = "cdp", .is_cdp = true, .mb_closids = 16 },
	{ .name = "mbps", .is_mbps = true, .mb_closids = 16 },
	{ .name = "amd", .is_amd = true, .mb_closids = 16 },
	{ .name = "snc2", .is_snc = true, .mb_closids = 16 },
	{ .name = "mon-only", .is_mon_only = true },
	{ .name = "legacy-fmt", .is_legacy = true, .mb_closids = 16 },
	{ .name = "mb8", .mb_closids = 8 },
};

const char *const resctrl_fake_profiles[] = {
	"skx2s", "cdp", "mbps", "amd", "snc2", "mon-only", "legacy-fmt", "mb8", NULL,
};

struct fake_counter {
	uint64_t bytes;
	const char *text; /* non-NULL: "Unavailable"/"Error"/"Unassigned" instead of bytes */
};

struct fake_group {
	bool is_used;
	bool is_mon;
	int parent; /* MON: its CTRL_MON slot; CTRL_MON: 0 (root is slot 0) */
	char dir[FAKE_PATH_LEN];
	struct resctrl_schemata sch;
	struct fake_counter mon[FAKE_MAX_DOMS][RESCTRL_EV_MAX]; /* by domain index */
};

struct fake_task {
	pid_t tid;
	int ctrl;
	int mon; /* -1: in no MON group */
};

struct resctrl_fake {
	char root[PATH_MAX];
	int root_fd;
	const struct fake_profile *p; /* &prof */
	struct fake_profile prof; /* a profile's, or derived from a served directory's info/ */
	unsigned int nr_doms;
	unsigned int dom_ids[FAKE_MAX_DOMS]; /* L3 cache ids, not necessarily contiguous */
	unsigned int pad; /* schemata names padded to this width */
	char cpus[64], cpus_list[64]; /* the root group's */
	uint64_t cbm_mask;
	unsigned int cbm_len;
	unsigned int nr_sub; /* SNC nodes per L3 */
	struct resctrl_caps caps;
	struct fake_group g[FAKE_MAX_GROUPS];
	struct fake_task *tasks;
	size_t nr_tasks, cap_tasks;
	unsigned int nr_limbo;
	bool is_kept;
};

static int put(struct resctrl_fake *f, const char *path, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int put(struct resctrl_fake *f, const char *path, const char *fmt, ...)
{
	char buf[16384];
	va_list ap;
	int fd, n, err = 0;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -E2BIG;
	fd = openat(f->root_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, buf, n) != n)
		err = -EIO;
	close(fd);
	return err;
}

static int mk(struct resctrl_fake *f, const char *path)
{
	return mkdirat(f->root_fd, path, 0755) && errno != EEXIST ? -errno : 0;
}

/* last_cmd_status; old kernels worded some messages in lower case */
static void status(struct resctrl_fake *f, const char *msg)
{
	char buf[RESCTRL_STATUS_LEN];

	if (!msg || !*msg) {
		put(f, "info/last_cmd_status", "ok\n");
		return;
	}
	if (f->p->is_legacy && !strncmp(msg, "The mask ", 9))
		msg += 4;
	snprintf(buf, sizeof(buf), "%s", msg);
	if (f->p->is_legacy)
		buf[0] = tolower((unsigned char)buf[0]);
	put(f, "info/last_cmd_status", "%s\n", buf);
}

static void gpath(const struct fake_group *g, const char *file, char *buf, size_t len)
{
	if (!strcmp(g->dir, "."))
		snprintf(buf, len, "%s", file);
	else
		snprintf(buf, len, "%s/%s", g->dir, file);
}

/* A cache id's index in f->dom_ids, or -1. */
static int dom_index(const struct resctrl_fake *f, unsigned int id)
{
	unsigned int d;

	for (d = 0; d < f->nr_doms; d++)
		if (f->dom_ids[d] == id)
			return (int)d;
	return -1;
}

static unsigned int pad_width(const struct resctrl_fake *f)
{
	/* the kernel pads names to the longest schema name: CDP-capable L3 -> "L3CODE" */
	return f->pad;
}

static int fmt_schemata(const struct resctrl_fake *f, const struct resctrl_schemata *s,
			bool is_size, char *buf, size_t len)
{
	unsigned int i, hexw = (f->cbm_len + 3) / 4;
	size_t off = 0;
	int r;

	buf[0] = '\0';
	for (r = 0; r < RESCTRL_RES_MAX; r++) {
		const struct resctrl_sline *l = &s->res[r];
		bool is_bw = r == RESCTRL_RES_MB || r == RESCTRL_RES_SMBA;

		if (!l->nr)
			continue;
		off += snprintf(buf + off, len - off, "%*s:", pad_width(f), resctrl_res_name(r));
		for (i = 0; i < l->nr && off < len; i++) {
			const char *sep = i ? ";" : "";
			uint64_t v = l->vals[i];

			if (is_size && !is_bw)
				off += snprintf(buf + off, len - off, "%s%u=%" PRIu64, sep,
						l->ids[i],
						(uint64_t)(__builtin_popcountll(v) *
							   (FAKE_L3_BYTES / f->cbm_len)));
			else if (is_bw)
				off += snprintf(buf + off, len - off, "%s%u=%*" PRIu64, sep,
						l->ids[i],
						f->p->is_legacy ? (f->p->is_amd ? 4 : 3) : 0, v);
			else
				off += snprintf(buf + off, len - off, "%s%u=%0*" PRIx64, sep,
						l->ids[i], f->p->is_legacy ? hexw : 0, v);
		}
		if (off < len - 1)
			off += snprintf(buf + off, len - off, "\n");
	}
	return off < len ? 0 : -E2BIG;
}

static bool tid_in(const struct resctrl_fake *f, const struct fake_task *t, int gi)
{
	const struct fake_group *g = &f->g[gi];

	/* a CTRL_MON group's tasks file lists every task with its CLOSID, MON children included */
	return g->is_mon ? t->mon == gi : t->ctrl == gi;
}

static uint64_t counter_sum(const struct resctrl_fake *f, int gi, int d, int ev)
{
	uint64_t v = f->g[gi].mon[d][ev].bytes;
	int i;

	/* a CTRL_MON reading is its own RMID plus those of its MON groups */
	if (!f->g[gi].is_mon)
		for (i = 1; i < FAKE_MAX_GROUPS; i++)
			if (f->g[i].is_used && f->g[i].is_mon && f->g[i].parent == gi)
				v += f->g[i].mon[d][ev].bytes;
	return v;
}

static void render_mon(struct resctrl_fake *f, int gi)
{
	struct fake_group *g = &f->g[gi];
	char path[FAKE_PATH_LEN + 64], file[FAKE_PATH_LEN + 128];
	unsigned int s;
	int d, ev;

	if (!f->caps.has_mon)
		return;
	gpath(g, "mon_data", path, sizeof(path));
	mk(f, path);
	for (d = 0; d < (int)f->nr_doms; d++) {
		gpath(g, "mon_data", path, sizeof(path));
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "/mon_L3_%02u",
			 f->dom_ids[d]);
		mk(f, path);
		for (ev = 0; ev < RESCTRL_EV_MAX; ev++) {
			const struct fake_counter *c = &g->mon[d][ev];
			uint64_t v = counter_sum(f, gi, d, ev);

			snprintf(file, sizeof(file), "%s/%s", path, resctrl_event_name(ev));
			if (c->text)
				put(f, file, "%s\n", c->text);
			else
				put(f, file, "%" PRIu64 "\n", v);
			/* SNC: split evenly over the nodes sharing this L3; ids are global */
			for (s = 0; s < f->nr_sub; s++) {
				uint64_t part = v / f->nr_sub + (s < v % f->nr_sub);

				snprintf(file, sizeof(file), "%s/mon_sub_L3_%02u", path,
					 f->dom_ids[d] * f->nr_sub + s);
				mk(f, file);
				snprintf(file + strlen(file), sizeof(file) - strlen(file), "/%s",
					 resctrl_event_name(ev));
				if (c->text)
					put(f, file, "%s\n", c->text);
				else
					put(f, file, "%" PRIu64 "\n", part);
			}
		}
	}
}

static void render_tasks(struct resctrl_fake *f, int gi)
{
	char path[FAKE_PATH_LEN + 16], *buf;
	size_t i, off = 0, len = f->nr_tasks * 12 + 1;
	int fd;

	buf = malloc(len);
	if (!buf)
		return;
	buf[0] = '\0';
	for (i = 0; i < f->nr_tasks; i++)
		if (tid_in(f, &f->tasks[i], gi))
			off += snprintf(buf + off, len - off, "%d\n", (int)f->tasks[i].tid);
	gpath(&f->g[gi], "tasks", path, sizeof(path));
	fd = openat(f->root_fd, path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, buf, off) < 0)
			fprintf(stderr, "fake: write %s failed\n", path);
		close(fd);
	}
	free(buf);
}

static void render_schemata(struct resctrl_fake *f, int gi)
{
	char path[FAKE_PATH_LEN + 16], buf[4096];

	if (f->p->is_mon_only || f->g[gi].is_mon)
		return;
	if (!fmt_schemata(f, &f->g[gi].sch, false, buf, sizeof(buf))) {
		gpath(&f->g[gi], "schemata", path, sizeof(path));
		put(f, path, "%s", buf);
	}
	if (!fmt_schemata(f, &f->g[gi].sch, true, buf, sizeof(buf))) {
		gpath(&f->g[gi], "size", path, sizeof(path));
		put(f, path, "%s", buf);
	}
}

static void render_all_tasks(struct resctrl_fake *f)
{
	int i;

	for (i = 0; i < FAKE_MAX_GROUPS; i++)
		if (f->g[i].is_used)
			render_tasks(f, i);
}

static void render_group(struct resctrl_fake *f, int gi)
{
	struct fake_group *g = &f->g[gi];
	char path[FAKE_PATH_LEN + 32];

	gpath(g, "cpus", path, sizeof(path));
	put(f, path, "%s\n", gi ? "0000" : f->cpus);
	gpath(g, "cpus_list", path, sizeof(path));
	put(f, path, "%s\n", gi ? "" : f->cpus_list);
	if (!g->is_mon) {
		gpath(g, "mode", path, sizeof(path));
		put(f, path, "shareable\n");
		gpath(g, "mon_groups", path, sizeof(path));
		mk(f, path);
		if (f->p->is_mbps) {
			gpath(g, "mba_MBps_event", path, sizeof(path));
			put(f, path, "mbm_local_bytes\n");
		}
	}
	render_schemata(f, gi);
	render_tasks(f, gi);
	render_mon(f, gi);
}

static void default_schemata(const struct resctrl_fake *f, struct resctrl_schemata *s)
{
	uint64_t mb = f->p->is_mbps ? UINT32_MAX : f->p->is_amd ? 2048 : 100;
	unsigned int d;

	memset(s, 0, sizeof(*s));
	if (f->p->is_mon_only)
		return;
	for (d = 0; d < f->nr_doms; d++) {
		unsigned int id = f->dom_ids[d];

		if (f->p->is_cdp) {
			resctrl_sline_set(&s->res[RESCTRL_RES_L3CODE], id, f->cbm_mask);
			resctrl_sline_set(&s->res[RESCTRL_RES_L3DATA], id, f->cbm_mask);
		} else {
			resctrl_sline_set(&s->res[RESCTRL_RES_L3], id, f->cbm_mask);
		}
		resctrl_sline_set(&s->res[RESCTRL_RES_MB], id, mb);
		if (f->p->has_smba)
			resctrl_sline_set(&s->res[RESCTRL_RES_SMBA], id, mb);
	}
}

static int build_info_cache(struct resctrl_fake *f, const char *res)
{
	char dir[64], path[128];

	snprintf(dir, sizeof(dir), "info/%s", res);
	mk(f, dir);
#define P(file, ...)                                              \
	do {                                                      \
		snprintf(path, sizeof(path), "%s/%s", dir, file); \
		if (put(f, path, __VA_ARGS__))                    \
			return -EIO;                              \
	} while (0)
	P("num_closids", "%u\n", f->p->is_cdp ? 8 : 16);
	P("cbm_mask", "%" PRIx64 "\n", f->cbm_mask);
	P("min_cbm_bits", "%u\n", f->p->is_amd ? 0 : 1);
	P("shareable_bits", "0\n");
	P("sparse_masks", "%u\n", f->p->is_amd ? 1 : 0);
	P("bit_usage", "0=%s;1=%s\n", f->p->is_amd ? "SSSSSSSSSSSSSSSS" : "SSSSSSSSSSS",
	  f->p->is_amd ? "SSSSSSSSSSSSSSSS" : "SSSSSSSSSSS");
	return 0;
}

static int build_info_bw(struct resctrl_fake *f, const char *res)
{
	char dir[64], path[128];

	snprintf(dir, sizeof(dir), "info/%s", res);
	mk(f, dir);
	P("num_closids", "%u\n", f->p->mb_closids);
	P("min_bandwidth", "%u\n", f->p->is_amd ? 0 : 10);
	P("bandwidth_gran", "%u\n", f->p->is_amd ? 1 : 10);
	P("delay_linear", "%u\n", f->p->is_amd ? 0 : 1);
	if (!f->p->is_amd)
		P("thread_throttle_mode", "max\n");
	return 0;
#undef P
}

static int build_tree(struct resctrl_fake *f)
{
	const struct fake_profile *p = f->p;
	int err = 0;

	err |= mk(f, "info");
	err |= put(f, "info/last_cmd_status", "ok\n");
	if (!p->is_mon_only) {
		if (p->is_cdp) {
			err |= build_info_cache(f, "L3CODE");
			err |= build_info_cache(f, "L3DATA");
		} else {
			err |= build_info_cache(f, "L3");
		}
		err |= build_info_bw(f, "MB");
		if (p->is_amd)
			err |= build_info_bw(f, "SMBA");
	}
	err |= mk(f, "info/L3_MON");
	err |= put(f, "info/L3_MON/num_rmids", "176\n");
	err |= put(f, "info/L3_MON/max_threshold_occupancy", "1048576\n");
	if (p->is_amd) {
		err |= put(f, "info/L3_MON/mon_features",
			   "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n"
			   "mbm_total_bytes_config\nmbm_local_bytes_config\n");
		err |= put(f, "info/L3_MON/mbm_total_bytes_config", "0=0x7f;1=0x7f\n");
		err |= put(f, "info/L3_MON/mbm_local_bytes_config", "0=0x15;1=0x15\n");
		err |= put(f, "info/L3_MON/mbm_assign_mode", "[mbm_event]\ndefault\n");
	} else {
		err |= put(f, "info/L3_MON/mon_features",
			   "llc_occupancy\nmbm_total_bytes\nmbm_local_bytes\n");
	}
	if (err)
		return -EIO;
	f->caps.has_mon = true; /* render_mon() runs before caps are read */
	f->g[0].is_used = true;
	strcpy(f->g[0].dir, ".");
	default_schemata(f, &f->g[0].sch);
	render_group(f, 0);
	return resctrl_caps_read(f->root_fd, &f->caps);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	return remove(path);
}

void resctrl_fake__free(struct resctrl_fake *f)
{
	if (!f)
		return;
	if (f->root_fd >= 0)
		close(f->root_fd);
	if (f->root[0] && !f->is_kept)
		nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f->tasks);
	free(f);
}

int resctrl_fake__new(const char *profile, struct resctrl_fake **ret)
{
	struct resctrl_fake *f;
	const char *tmp;
	size_t i;
	int err;

	if (!profile)
		profile = "skx2s";
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->root_fd = -1;
	for (i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++)
		if (!strcmp(profiles[i].name, profile))
			f->p = &profiles[i];
	if (!f->p) {
		err = -EINVAL;
		goto err_free;
	}
	f->prof = *f->p;
	f->prof.has_smba = f->prof.is_amd;
	f->p = &f->prof;
	f->nr_doms = 2;
	f->dom_ids[0] = 0;
	f->dom_ids[1] = 1;
	f->pad = f->p->is_legacy ? 0 : 6;
	snprintf(f->cpus, sizeof(f->cpus), "ffff");
	snprintf(f->cpus_list, sizeof(f->cpus_list), "0-15");
	f->cbm_mask = f->p->is_amd ? 0xffff : 0x7ff;
	f->cbm_len = f->p->is_amd ? 16 : 11;
	f->nr_sub = f->p->is_snc ? 2 : 0;
	tmp = getenv("TMPDIR");
	snprintf(f->root, sizeof(f->root), "%s/kqos-resctrl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->root)) {
		err = -errno;
		f->root[0] = '\0';
		goto err_free;
	}
	f->root_fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->root_fd < 0) {
		err = -errno;
		goto err_free;
	}
	/* the root group holds every task at mount; pid 1 stands for "the rest of the system" */
	f->tasks = calloc(1, sizeof(*f->tasks));
	if (!f->tasks) {
		err = -ENOMEM;
		goto err_free;
	}
	f->tasks[0] = (struct fake_task){ .tid = 1, .ctrl = 0, .mon = -1 };
	f->nr_tasks = f->cap_tasks = 1;
	err = build_tree(f);
	if (err)
		goto err_free;
	*ret = f;
	return 0;
err_free:
	resctrl_fake__free(f);
	return err;
}

/* Copy the regular files and directories under sfd into dfd (symlinks and the rest skipped). */
static int copy_tree(int sfd, int dfd)
{
	struct dirent *de;
	int err = 0;
	DIR *d;

	d = fdopendir(dup(sfd));
	if (!d)
		return -errno;
	while (!err && (de = readdir(d))) {
		struct stat st;
		int s = -1, t = -1;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(sfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(st.st_mode)) {
			if (mkdirat(dfd, de->d_name, 0755) && errno != EEXIST) {
				err = -errno;
				break;
			}
			s = openat(sfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			t = openat(dfd, de->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			err = s < 0 || t < 0 ? -errno : copy_tree(s, t);
		} else if (S_ISREG(st.st_mode)) {
			char buf[8192];
			ssize_t n;

			s = openat(sfd, de->d_name, O_RDONLY | O_CLOEXEC);
			t = openat(dfd, de->d_name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
			if (s < 0 || t < 0)
				err = -errno;
			while (!err && (n = read(s, buf, sizeof(buf))) > 0)
				if (write(t, buf, n) != n)
					err = -EIO;
		}
		if (s >= 0)
			close(s);
		if (t >= 0)
			close(t);
	}
	closedir(d);
	return err;
}

/* A small file of dfd into buf, newline stripped; 0 or -errno. */
static int slurp_at(int dfd, const char *path, char *buf, size_t len)
{
	ssize_t n;
	int fd;

	fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* The kernel pads every name to one width: the colon's column of the widest line. */
static unsigned int schemata_pad(const char *text)
{
	unsigned int pad = 0;
	const char *l;

	for (l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		const char *colon = strchr(l, ':'), *nl = strchr(l, '\n');

		if (colon && (!nl || colon < nl) && (unsigned int)(colon - l) > pad)
			pad = (unsigned int)(colon - l);
	}
	return pad;
}

/* SNC: how many mon_sub_L3_YY a mon_L3_XX holds in the served tree. */
static unsigned int count_sub(int dfd, unsigned int id)
{
	char path[64];
	struct dirent *de;
	unsigned int n = 0;
	DIR *d;
	int fd;

	snprintf(path, sizeof(path), "mon_data/mon_L3_%02u", id);
	fd = openat(dfd, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return 0;
	}
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, "mon_sub_L3_", 11);
	closedir(d);
	return n;
}

/* The root's counters as the served directory's mon_data has them. */
static void import_mon(struct resctrl_fake *f)
{
	static const char *const texts[] = { [RESCTRL_MON_UNAVAILABLE] = "Unavailable",
					     [RESCTRL_MON_ERROR] = "Error",
					     [RESCTRL_MON_UNASSIGNED] = "Unassigned" };
	char path[96], buf[64];
	unsigned int d;
	int ev, err;

	for (d = 0; d < f->nr_doms; d++)
		for (ev = 0; ev < RESCTRL_EV_MAX; ev++) {
			struct fake_counter *c = &f->g[0].mon[d][ev];
			enum resctrl_mon_state st;
			uint64_t v;

			snprintf(path, sizeof(path), "mon_data/mon_L3_%02u/%s", f->dom_ids[d],
				 resctrl_event_name(ev));
			if (slurp_at(f->root_fd, path, buf, sizeof(buf)))
				continue;
			/* -ENODATA with a state for "Unavailable" and the like */
			err = resctrl_mon_parse(buf, &v, &st);
			if (!err)
				c->bytes = v;
			else if (err == -ENODATA && st < sizeof(texts) / sizeof(texts[0]))
				c->text = texts[st];
		}
}

/* What the profiles hard-code, read back from info/ and the root schemata instead. */
static int derive_profile(struct resctrl_fake *f, const char *sch_text)
{
	const struct resctrl_caps *c = &f->caps;
	const struct resctrl_res_info *l3 =
		&c->res[c->has_l3_cdp ? RESCTRL_RES_L3CODE : RESCTRL_RES_L3];
	unsigned int d;

	f->prof = (struct fake_profile){
		.name = "dir",
		.is_cdp = c->has_l3_cdp,
		.is_mbps = c->has_mba_mbps,
		.is_amd = c->is_amd,
		.is_mon_only = !c->has_alloc,
		.mb_closids = c->res[RESCTRL_RES_MB].num_closids,
		.has_smba = c->res[RESCTRL_RES_SMBA].is_present,
	};
	f->p = &f->prof;
	if (c->nr_domains > FAKE_MAX_DOMS)
		return -E2BIG;
	if (!c->nr_domains)
		return -ENOENT; /* no cache id in the root schemata nor in mon_data */
	f->nr_doms = c->nr_domains;
	for (d = 0; d < f->nr_doms; d++)
		f->dom_ids[d] = c->domain_ids[d];
	f->cbm_mask = l3->is_present ? l3->cbm_mask : 0x7ff;
	f->cbm_len = l3->is_present && l3->cbm_len ? l3->cbm_len : 11;
	f->pad = sch_text[0] ? schemata_pad(sch_text) : 6;
	f->nr_sub = count_sub(f->root_fd, f->dom_ids[0]);
	f->prof.is_snc = f->nr_sub > 0;
	return 0;
}

/* Copy what the tree serves from dir: info/, the root's schemata, cpus and mon_data. */
static int copy_served(struct resctrl_fake *f, int src, char *sch_text, size_t len)
{
	char mbps_ev[64];
	int s = -1, t = -1, err;

	s = openat(src, "info", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (s < 0)
		return -errno; /* -ENOENT: not a resctrl tree */
	err = mk(f, "info");
	t = err ? -1 : openat(f->root_fd, "info", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err)
		err = t < 0 ? -errno : copy_tree(s, t);
	close(s);
	if (t >= 0)
		close(t);
	s = openat(src, "mon_data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (!err && s >= 0) {
		err = mk(f, "mon_data");
		t = err ? -1 : openat(f->root_fd, "mon_data", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (!err)
			err = t < 0 ? -errno : copy_tree(s, t);
		if (t >= 0)
			close(t);
	}
	if (s >= 0)
		close(s);
	if (err)
		return err;
	sch_text[0] = '\0';
	s = openat(src, "schemata", O_RDONLY | O_CLOEXEC);
	if (s >= 0) {
		ssize_t n = read(s, sch_text, len - 1);

		close(s);
		sch_text[n > 0 ? n : 0] = '\0';
		err = put(f, "schemata", "%s", sch_text);
	}
	/* MBps mode shows in the root's mba_MBps_event, which caps read */
	if (!err && !slurp_at(src, "mba_MBps_event", mbps_ev, sizeof(mbps_ev)))
		err = put(f, "mba_MBps_event", "%s\n", mbps_ev);
	if (slurp_at(src, "cpus", f->cpus, sizeof(f->cpus)))
		snprintf(f->cpus, sizeof(f->cpus), "ffff");
	if (slurp_at(src, "cpus_list", f->cpus_list, sizeof(f->cpus_list)))
		snprintf(f->cpus_list, sizeof(f->cpus_list), "0-15");
	return err ? err : put(f, "info/last_cmd_status", "ok\n");
}

int resctrl_fake__new_dir(const char *dir, struct resctrl_fake **ret)
{
	char sch_text[4096];
	struct resctrl_fake *f;
	const char *tmp;
	int src, err;

	src = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (src < 0)
		return -errno;
	f = calloc(1, sizeof(*f));
	if (!f) {
		close(src);
		return -ENOMEM;
	}
	f->root_fd = -1;
	tmp = getenv("TMPDIR");
	snprintf(f->root, sizeof(f->root), "%s/kqos-resctrl-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(f->root)) {
		err = -errno;
		f->root[0] = '\0';
		goto err_free;
	}
	f->root_fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (f->root_fd < 0) {
		err = -errno;
		goto err_free;
	}
	err = copy_served(f, src, sch_text, sizeof(sch_text));
	if (!err)
		err = resctrl_caps_read(f->root_fd, &f->caps);
	if (!err)
		err = derive_profile(f, sch_text);
	if (err)
		goto err_free;
	f->g[0].is_used = true;
	strcpy(f->g[0].dir, ".");
	/* the root keeps what the directory gave it; what it lacks is the kernel's default */
	if (f->caps.has_alloc && (!sch_text[0] || resctrl_schemata_parse(sch_text, &f->g[0].sch)))
		default_schemata(f, &f->g[0].sch);
	import_mon(f);
	f->tasks = calloc(1, sizeof(*f->tasks));
	if (!f->tasks) {
		err = -ENOMEM;
		goto err_free;
	}
	f->tasks[0] = (struct fake_task){ .tid = 1, .ctrl = 0, .mon = -1 };
	f->nr_tasks = f->cap_tasks = 1;
	render_group(f, 0);
	close(src);
	*ret = f;
	return 0;
err_free:
	close(src);
	resctrl_fake__free(f);
	return err;
}

void resctrl_fake__keep(struct resctrl_fake *f)
{
	f->is_kept = true;
}

const char *resctrl_fake__root(const struct resctrl_fake *f)
{
	return f->root;
}

int resctrl_fake__open(struct resctrl_fake *f, struct resctrl **ret)
{
	return resctrl_open_backend(f->root, &resctrl_fake_backend, f, ret);
}

static int find_group(const struct resctrl_fake *f, const char *dir, size_t len)
{
	int i;

	if (!len || (len == 1 && dir[0] == '.'))
		return 0;
	for (i = 1; i < FAKE_MAX_GROUPS; i++)
		if (f->g[i].is_used && strlen(f->g[i].dir) == len &&
		    !strncmp(f->g[i].dir, dir, len))
			return i;
	return -1;
}

static unsigned int nr_groups(const struct resctrl_fake *f, bool ctrl_only)
{
	unsigned int n = 0;
	int i;

	for (i = 0; i < FAKE_MAX_GROUPS; i++)
		if (f->g[i].is_used && (!ctrl_only || !f->g[i].is_mon))
			n++;
	return n;
}

/* alloc_rmid(): nothing free -> EBUSY while RMIDs sit in limbo, else ENOSPC */
static int check_rmid(struct resctrl_fake *f)
{
	if (!f->caps.has_mon || nr_groups(f, false) + f->nr_limbo < f->caps.num_rmids)
		return 0;
	status(f, "Out of RMIDs");
	return f->nr_limbo ? -EBUSY : -ENOSPC;
}

static int fake_mkdir(void *ctx, int root_fd, const char *path)
{
	struct resctrl_fake *f = ctx;
	const char *slash = strrchr(path, '/');
	int parent = 0, gi, err;
	bool is_mon;

	if (strlen(path) >= FAKE_PATH_LEN)
		return -ENAMETOOLONG;
	if (find_group(f, path, strlen(path)) >= 0 || !strcmp(path, "info") ||
	    !strcmp(path, "mon_data") || !strcmp(path, "mon_groups"))
		return -EEXIST;
	if (!slash) {
		is_mon = false;
	} else {
		size_t dlen = slash - path;

		/* only <ctrl>/mon_groups/<name> or mon_groups/<name> */
		if (dlen < 10 || strncmp(slash - 10, "mon_groups", 10) ||
		    (dlen > 10 && slash[-11] != '/'))
			return -EPERM;
		parent = find_group(f, path, dlen > 10 ? dlen - 11 : 0);
		if (parent < 0)
			return -ENOENT;
		if (f->g[parent].is_mon)
			return -EPERM;
		is_mon = true;
	}
	if (!is_mon && f->p->is_mon_only)
		return -EPERM;
	status(f, NULL);
	if (!is_mon && nr_groups(f, true) >= f->caps.num_closids) {
		status(f, "Out of CLOSIDs");
		return -ENOSPC;
	}
	err = check_rmid(f);
	if (err)
		return err;
	for (gi = 1; gi < FAKE_MAX_GROUPS && f->g[gi].is_used; gi++)
		;
	if (gi == FAKE_MAX_GROUPS)
		return -ENOSPC;
	if (mkdirat(f->root_fd, path, 0755))
		return -errno;
	memset(&f->g[gi], 0, sizeof(f->g[gi]));
	f->g[gi].is_used = true;
	f->g[gi].is_mon = is_mon;
	f->g[gi].parent = parent;
	strcpy(f->g[gi].dir, path);
	/* new CTRL_MON groups get every unused + shareable bit: all of it without exclusive mode */
	if (!is_mon)
		default_schemata(f, &f->g[gi].sch);
	render_group(f, gi);
	return 0;
}

static void release_group(struct resctrl_fake *f, int gi)
{
	size_t i;

	for (i = 0; i < f->nr_tasks; i++) {
		struct fake_task *t = &f->tasks[i];

		if (t->mon == gi)
			t->mon = -1;
		if (t->ctrl == gi) {
			t->ctrl = 0;
			t->mon = -1;
		}
	}
	/* with llc_occupancy, a freed RMID stays dirty until its lines age out */
	if (f->caps.has_event[RESCTRL_EV_LLC_OCCUPANCY])
		f->nr_limbo++;
	f->g[gi].is_used = false;
}

static int fake_rmdir(void *ctx, int root_fd, const char *path)
{
	struct resctrl_fake *f = ctx;
	char abs[PATH_MAX + FAKE_PATH_LEN];
	int gi, i, parent;

	gi = find_group(f, path, strlen(path));
	if (gi == 0)
		return -EPERM;
	if (gi < 0) {
		struct stat st;

		return fstatat(f->root_fd, path, &st, 0) ? -ENOENT : -EPERM;
	}
	parent = f->g[gi].parent;
	if (!f->g[gi].is_mon)
		for (i = 1; i < FAKE_MAX_GROUPS; i++)
			if (f->g[i].is_used && f->g[i].is_mon && f->g[i].parent == gi)
				release_group(f, i);
	release_group(f, gi);
	snprintf(abs, sizeof(abs), "%s/%s", f->root, path);
	nftw(abs, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	render_all_tasks(f);
	render_mon(f, parent);
	return 0;
}

/* Stage every line, apply only if all pass: a failed write changes nothing. */
static int write_schemata(struct resctrl_fake *f, int gi, char *buf)
{
	bool seen[RESCTRL_RES_MAX][FAKE_MAX_DOMS] = { { false } };
	struct resctrl_schemata next = f->g[gi].sch;
	char msg[RESCTRL_STATUS_LEN] = "", *line, *save = NULL;

	if (f->g[gi].is_mon || f->p->is_mon_only)
		return -EINVAL;
	status(f, NULL);
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *colon = strchr(line, ':'), *tok, *dom, *end;
		const struct resctrl_res_info *ri;
		enum resctrl_res res;
		unsigned long id;
		uint64_t val;
		int err, di;

		if (!colon) {
			status(f, "Missing ':'");
			return -EINVAL;
		}
		*colon = '\0';
		while (*line == ' ')
			line++;
		for (end = colon; end > line && end[-1] == ' ';)
			*--end = '\0';
		if (!colon[1]) {
			snprintf(msg, sizeof(msg), "Missing '%s' value", line);
			status(f, msg);
			return -EINVAL;
		}
		if (resctrl_res_from_name(line, strlen(line), &res) ||
		    !f->caps.res[res].is_present) {
			snprintf(msg, sizeof(msg), "Unknown or unsupported resource name '%s'",
				 line);
			status(f, msg);
			return -EINVAL;
		}
		ri = &f->caps.res[res];
		for (tok = colon + 1; tok && *tok;) {
			char *semi = strchr(tok, ';'), *eq;

			if (semi)
				*semi++ = '\0';
			eq = strchr(tok, '=');
			errno = 0;
			if (eq)
				*eq = '\0';
			id = eq && isdigit((unsigned char)tok[0]) ? strtoul(tok, &end, 10) : 0;
			if (!eq || !isdigit((unsigned char)tok[0]) || *end || errno) {
				status(f, "Missing '=' or non-numeric domain");
				return -EINVAL;
			}
			dom = eq + 1;
			while (*dom == ' ')
				dom++;
			for (end = dom + strlen(dom); end > dom && end[-1] == ' ';)
				*--end = '\0';
			di = id > UINT_MAX ? -1 : dom_index(f, (unsigned int)id);
			if (di < 0)
				return -EINVAL; /* the kernel has no text for an unknown domain */
			if (seen[res][di]) {
				snprintf(msg, sizeof(msg), "Duplicate domain %lu", id);
				status(f, msg);
				return -EINVAL;
			}
			seen[res][di] = true;
			errno = 0;
			val = *dom && *dom != '-' ? strtoull(dom, &end, ri->is_cache ? 16 : 10) : 0;
			if (!*dom || *dom == '-' || *end || errno) {
				snprintf(msg, sizeof(msg),
					 ri->is_cache ? "Non-hex character in the mask %s" :
							"Invalid MB value %s",
					 dom);
				status(f, msg);
				return -EINVAL;
			}
			err = ri->is_cache ? resctrl_check_cbm(ri, val, msg, sizeof(msg)) :
					     resctrl_check_mb(ri, val, &val, msg, sizeof(msg));
			if (err) {
				status(f, msg);
				return err;
			}
			resctrl_sline_set(&next.res[res], id, val);
			tok = semi;
		}
	}
	f->g[gi].sch = next;
	render_schemata(f, gi);
	return 0;
}

static bool tid_alive(pid_t tid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", (int)tid);
	return !access(path, F_OK);
}

static struct fake_task *task_get(struct resctrl_fake *f, pid_t tid)
{
	struct fake_task *t;
	size_t i;

	for (i = 0; i < f->nr_tasks; i++)
		if (f->tasks[i].tid == tid)
			return &f->tasks[i];
	if (f->nr_tasks == f->cap_tasks) {
		t = realloc(f->tasks, f->cap_tasks * 2 * sizeof(*t));
		if (!t)
			return NULL;
		f->tasks = t;
		f->cap_tasks *= 2;
	}
	t = &f->tasks[f->nr_tasks++];
	*t = (struct fake_task){ .tid = tid, .ctrl = 0, .mon = -1 };
	return t;
}

/* rdtgroup_tasks_write(): a comma list, processed in order, stopping at the first failure. */
static int write_tasks(struct resctrl_fake *f, int gi, char *buf)
{
	const struct fake_group *g = &f->g[gi];
	char msg[RESCTRL_STATUS_LEN], *tok, *save = NULL, *end;
	struct fake_task *t;
	int err = 0;
	long tid;

	status(f, NULL);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ')
			tok++;
		errno = 0;
		tid = strtol(tok, &end, 0);
		while (*end == ' ' || *end == '\n')
			end++;
		if (end == tok || *end || errno) {
			snprintf(msg, sizeof(msg), "Task list parsing error pid %s", tok);
			status(f, msg);
			err = -EINVAL;
			break;
		}
		if (tid < 0) {
			snprintf(msg, sizeof(msg), "Invalid pid %ld", tid);
			status(f, msg);
			err = -EINVAL;
			break;
		}
		if (!tid)
			tid = getpid();
		if (!tid_alive(tid)) {
			snprintf(msg, sizeof(msg), "No task %ld", tid);
			status(f, msg);
			err = -ESRCH;
			break;
		}
		t = task_get(f, tid);
		if (!t) {
			err = -ENOMEM;
			break;
		}
		if (g->is_mon && t->ctrl != g->parent) {
			status(f, "Can't move task to different control group");
			err = -EINVAL;
			break;
		}
		t->ctrl = g->is_mon ? g->parent : gi;
		t->mon = g->is_mon ? gi : -1;
	}
	render_all_tasks(f);
	return err;
}

static int fake_write(void *ctx, int root_fd, const char *path, const char *buf, size_t len)
{
	struct resctrl_fake *f = ctx;
	const char *slash = strrchr(path, '/'), *file = slash ? slash + 1 : path;
	char *copy;
	int gi, err;

	gi = find_group(f, path, slash ? (size_t)(slash - path) : 0);
	if (gi < 0)
		return -ENOENT;
	if (strcmp(file, "schemata") && strcmp(file, "tasks"))
		return -EACCES; /* files the library never writes */
	/* only schemata insists on the final newline; last_cmd_status is not even cleared */
	if (!strcmp(file, "schemata") && (!len || buf[len - 1] != '\n'))
		return -EINVAL;
	copy = strndup(buf, len && buf[len - 1] == '\n' ? len - 1 : len);
	if (!copy)
		return -ENOMEM;
	err = !strcmp(file, "schemata") ? write_schemata(f, gi, copy) : write_tasks(f, gi, copy);
	free(copy);
	return err;
}

const struct resctrl_backend_ops resctrl_fake_backend = {
	.name = "fake",
	.write = fake_write,
	.mkdir = fake_mkdir,
	.rmdir = fake_rmdir,
};

int resctrl_fake__set_num_rmids(struct resctrl_fake *f, unsigned int nr)
{
	f->caps.num_rmids = nr;
	return put(f, "info/L3_MON/num_rmids", "%u\n", nr);
}

static struct fake_counter *counter(struct resctrl_fake *f, const char *group,
				    enum resctrl_event ev, unsigned int dom, int *ret_gi)
{
	int gi = find_group(f, group, strlen(group)), di = dom_index(f, dom);

	if (gi < 0 || di < 0 || ev >= RESCTRL_EV_MAX)
		return NULL;
	*ret_gi = gi;
	return &f->g[gi].mon[di][ev];
}

static void render_mon_up(struct resctrl_fake *f, int gi)
{
	render_mon(f, gi);
	if (f->g[gi].is_mon)
		render_mon(f, f->g[gi].parent);
}

int resctrl_fake__set_occupancy(struct resctrl_fake *f, const char *group, unsigned int dom,
				uint64_t bytes)
{
	struct fake_counter *c;
	int gi;

	c = counter(f, group, RESCTRL_EV_LLC_OCCUPANCY, dom, &gi);
	if (!c)
		return -ENOENT;
	c->bytes = bytes;
	c->text = NULL;
	render_mon_up(f, gi);
	return 0;
}

int resctrl_fake__add_mbm(struct resctrl_fake *f, const char *group, enum resctrl_event ev,
			  unsigned int dom, uint64_t bytes)
{
	struct fake_counter *c;
	int gi;

	if (ev == RESCTRL_EV_LLC_OCCUPANCY)
		return -EINVAL;
	c = counter(f, group, ev, dom, &gi);
	if (!c)
		return -ENOENT;
	c->bytes += bytes;
	render_mon_up(f, gi);
	return 0;
}

int resctrl_fake__set_mon_state(struct resctrl_fake *f, const char *group, enum resctrl_event ev,
				unsigned int dom, const char *text)
{
	static const char *const texts[] = { "Unavailable", "Error", "Unassigned" };
	struct fake_counter *c;
	size_t i;
	int gi;

	c = counter(f, group, ev, dom, &gi);
	if (!c)
		return -ENOENT;
	c->text = NULL;
	for (i = 0; text && i < sizeof(texts) / sizeof(texts[0]); i++)
		if (!strcmp(text, texts[i]))
			c->text = texts[i];
	if (text && !c->text)
		return -EINVAL;
	render_mon_up(f, gi);
	return 0;
}

int resctrl_fake__reset_counters(struct resctrl_fake *f, const char *group)
{
	int gi = find_group(f, group, strlen(group));

	if (gi < 0)
		return -ENOENT;
	memset(f->g[gi].mon, 0, sizeof(f->g[gi].mon));
	render_mon_up(f, gi);
	return 0;
}

unsigned int resctrl_fake__nr_limbo(const struct resctrl_fake *f)
{
	return f->nr_limbo;
}

void resctrl_fake__age_limbo(struct resctrl_fake *f)
{
	f->nr_limbo = 0;
}

void resctrl_fake__set_status(struct resctrl_fake *f, const char *msg)
{
	status(f, msg);
}
