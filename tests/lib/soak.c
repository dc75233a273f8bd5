// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE /* open_by_handle_at() */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <bpf/bpf.h>

#include "fileio.h"
#include "soak.h"

__u64 soak_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000 + (__u64)ts.tv_nsec / 1000000;
}

static void sleep_ms(unsigned int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* --- kqosd seen from outside ------------------------------------------------------------ */

static bool is_hash(__u32 type)
{
	switch (type) {
	case BPF_MAP_TYPE_HASH:
	case BPF_MAP_TYPE_PERCPU_HASH:
	case BPF_MAP_TYPE_LRU_HASH:
	case BPF_MAP_TYPE_LRU_PERCPU_HASH:
	case BPF_MAP_TYPE_HASH_OF_MAPS:
		return true;
	default:
		return false;
	}
}

/* map_type, key_size, max_entries and map_id of one fdinfo file; false for other fds. */
static bool fdinfo_map(const char *path, struct soak_map *m, __u32 *key_size)
{
	char line[256];
	bool has_id = false, has_type = false;
	FILE *f = fopen(path, "re");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		has_type |= sscanf(line, "map_type: %u", &m->type) == 1;
		sscanf(line, "key_size: %u", key_size);
		sscanf(line, "max_entries: %u", &m->max_entries);
		has_id |= sscanf(line, "map_id: %u", &m->id) == 1;
	}
	fclose(f);
	return has_id && has_type;
}

static long count_keys(__u32 id, __u32 key_size, __u32 max_entries, char *name, size_t len)
{
	struct bpf_map_info info = { 0 };
	__u32 info_len = sizeof(info);
	char key[512], next[512];
	void *prev = NULL;
	long n = 0;
	int fd, err;

	if (key_size > sizeof(key))
		return -E2BIG;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return -errno;
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len))
		snprintf(name, len, "%s", info.name);
	/* a walk restarted by deletions could go on: past twice the capacity it is cut */
	while (!(err = bpf_map_get_next_key(fd, prev, next)) && n <= 2L * max_entries) {
		n++;
		memcpy(key, next, key_size);
		prev = key;
	}
	if (err && errno != ENOENT)
		n = -errno;
	close(fd);
	return n;
}

static int map_cmp(const void *a, const void *b)
{
	const struct soak_map *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static bool has_id(const struct soak_map *maps, size_t n, __u32 id)
{
	for (size_t i = 0; i < n; i++)
		if (maps[i].id == id)
			return true;
	return false;
}

int soak_maps(pid_t pid, struct soak_map *maps, size_t cap, size_t *ret_n)
{
	char dir[64], path[64 + 256];
	struct dirent *de;
	size_t n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fdinfo", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)) && n < cap) {
		struct soak_map m = { 0 };
		__u32 key_size = 0;

		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!fdinfo_map(path, &m, &key_size) || !is_hash(m.type) || has_id(maps, n, m.id))
			continue;
		m.key_size = key_size;
		m.stale = -1;
		m.entries = count_keys(m.id, key_size, m.max_entries, m.name, sizeof(m.name));
		maps[n++] = m;
	}
	closedir(d);
	qsort(maps, n, sizeof(*maps), map_cmp);
	*ret_n = n;
	return 0;
}

/* A cgroup's kernfs file handle is its 64-bit id (FILEID_KERNFS, as name_to_handle_at() gives). */
#define SOAK_FILEID_KERNFS 0xfe

static bool id_gone(int mount_fd, __u64 id)
{
	struct {
		struct file_handle fh;
		__u64 id;
	} h = { .fh = { .handle_bytes = sizeof(__u64), .handle_type = SOAK_FILEID_KERNFS } };
	int fd;

	memcpy(h.fh.f_handle, &id, sizeof(id));
	fd = open_by_handle_at(mount_fd, &h.fh, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == ESTALE || errno == ENOENT;
}

static long count_stale(int mount_fd, __u32 id)
{
	__u64 key, prev;
	bool first = true;
	long n = 0, seen = 0;
	int fd = bpf_map_get_fd_by_id(id), err;

	if (fd < 0)
		return -errno;
	while (!(err = bpf_map_get_next_key(fd, first ? NULL : &prev, &key)) && seen++ < 1 << 22) {
		n += id_gone(mount_fd, key);
		prev = key;
		first = false;
	}
	if (err && errno != ENOENT)
		n = -errno;
	close(fd);
	return n;
}

int soak_maps_stale(const char *mount, struct soak_map *maps, size_t n)
{
	int mfd = open(mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (mfd < 0)
		return -errno;
	for (size_t i = 0; i < n; i++)
		maps[i].stale = maps[i].key_size == sizeof(__u64) ? count_stale(mfd, maps[i].id) :
								    -1;
	close(mfd);
	return 0;
}

long soak_fds(pid_t pid)
{
	char dir[64];
	struct dirent *de;
	long n = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	while ((de = readdir(d)))
		n += de->d_name[0] != '.';
	closedir(d);
	return n;
}

int soak_fd_list(pid_t pid, char *buf, size_t len)
{
	char dir[64], p[64 + 256], target[256];
	struct dirent *de;
	size_t off = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return -errno;
	buf[0] = '\0';
	while ((de = readdir(d))) {
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		n = readlink(p, target, sizeof(target) - 1);
		if (n < 0)
			continue;
		target[n] = '\0';
		if (off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s\n", target);
	}
	closedir(d);
	return 0;
}

long soak_rss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

long soak_cpu_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long ut, st;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	/* the name may hold spaces and parentheses: fields count from the last ')' */
	p = strrchr(buf, ')');
	if (!p ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -EINVAL;
	return (long)(ut + st);
}

static const char *knob_ctrl(const char *knob)
{
	if (!strcmp(knob, "cpuset"))
		return "cpuset";
	if (!strcmp(knob, "memory_max"))
		return "memory";
	return "cpu";
}

int soak_journal_check(const char *path, const char *cg_root, const char *prefix,
		       struct soak_journal *ret)
{
	char line[1024], own[300], dir[PATH_MAX];
	FILE *f = fopen(path, "re");
	struct stat st;

	memset(ret, 0, sizeof(*ret));
	if (!f)
		return errno == ENOENT ? 0 : -errno;
	snprintf(own, sizeof(own), "/%s/", prefix);
	while (fgets(line, sizeof(line), f)) {
		char *knob = line, *cg = strchr(line, '\t'), *end;

		if (line[0] == '#' || !cg)
			continue;
		*cg++ = '\0';
		end = strchr(cg, '\t');
		if (end)
			*end = '\0';
		ret->lines++;
		ret->ours += !strncmp(cg, own, strlen(own));
		snprintf(dir, sizeof(dir), "%s/%s%s", cg_root, knob_ctrl(knob), cg);
		if (!stat(dir, &st))
			continue;
		if (!ret->gone++)
			snprintf(ret->first_gone, sizeof(ret->first_gone), "%.24s %.200s", knob,
				 cg);
	}
	fclose(f);
	return 0;
}

/* --- the socket client ---------------------------------------------------------------- */

#define PROBE_MAX_SAMPLES 65536

struct soak_probe {
	pthread_t thread;
	atomic_bool stop;
	char path[108];
	unsigned int period_ms;
	pthread_mutex_t lock; /* guards what follows */
	__u64 *lat_us; /* every read's time, up to PROBE_MAX_SAMPLES */
	size_t n;
	struct soak_probe_stats st;
};

static int probe_connect(const char *path)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = 30 };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "%s", path);
	/* a kqosd silent for 30 s counts as an error, not a hung client */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

/*
 * Send "snapshot", read one line; 0 when it was a snapshot, -EAGAIN for "no snapshot yet"
 * (a kqosd before its first tick), else -errno (-EPROTO: another error answer).
 */
static int probe_read(int fd)
{
	static const char req[] = "snapshot\n", not_yet[] = "{\"error\":\"no snapshot yet\"}";
	char buf[65536];
	bool first = true, is_error = false, is_early = false;
	ssize_t r;

	if (send(fd, req, sizeof(req) - 1, MSG_NOSIGNAL) != (ssize_t)sizeof(req) - 1)
		return -EPIPE;
	for (;;) {
		r = read(fd, buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -ECONNRESET;
		if (first) {
			is_error = r < 2 || buf[0] != '{' || !strncmp(buf, "{\"error\"", 8);
			is_early = !strncmp(buf, not_yet, sizeof(not_yet) - 1);
		}
		first = false;
		if (memchr(buf, '\n', (size_t)r))
			return is_early ? -EAGAIN : is_error ? -EPROTO : 0;
	}
}

static void probe_record(struct soak_probe *p, int err, __u64 us)
{
	if (err == -EAGAIN)
		return; /* not ready yet is neither a read nor an error */
	pthread_mutex_lock(&p->lock);
	if (err) {
		p->st.errors++;
		snprintf(p->st.last_error, sizeof(p->st.last_error), "%s", strerror(-err));
	} else {
		p->st.reads++;
		if (p->n < PROBE_MAX_SAMPLES)
			p->lat_us[p->n++] = us;
		if (us > p->st.max_us)
			p->st.max_us = us;
		if (us > p->st.last_max_us)
			p->st.last_max_us = us;
	}
	pthread_mutex_unlock(&p->lock);
}

static void *probe_main(void *arg)
{
	struct soak_probe *p = arg;
	__u64 next = soak_now_ms();
	int fd = -1, err;

	while (!atomic_load(&p->stop)) {
		__u64 t0 = 0, now;
		struct timespec a, b;

		if (fd < 0)
			fd = probe_connect(p->path);
		err = fd < 0 ? fd : 0;
		if (!err) {
			clock_gettime(CLOCK_MONOTONIC, &a);
			err = probe_read(fd);
			clock_gettime(CLOCK_MONOTONIC, &b);
			t0 = (__u64)((b.tv_sec - a.tv_sec) * 1000000 +
				     (b.tv_nsec - a.tv_nsec) / 1000);
		}
		probe_record(p, err, t0);
		if (err && err != -EAGAIN && fd >= 0) {
			close(fd);
			fd = -1;
		}
		/* every period from the first read, not period after each read: a slow read does
		 * not slow the client down */
		next += p->period_ms;
		now = soak_now_ms();
		if (next > now)
			sleep_ms((unsigned int)(next - now));
		else
			next = now;
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

int soak_probe__new(const char *sock, unsigned int period_ms, struct soak_probe **ret)
{
	struct soak_probe *p = calloc(1, sizeof(*p));
	int err;

	*ret = NULL;
	if (!p)
		return -ENOMEM;
	p->lat_us = calloc(PROBE_MAX_SAMPLES, sizeof(*p->lat_us));
	if (!p->lat_us) {
		free(p);
		return -ENOMEM;
	}
	snprintf(p->path, sizeof(p->path), "%s", sock);
	p->period_ms = period_ms;
	pthread_mutex_init(&p->lock, NULL);
	err = -pthread_create(&p->thread, NULL, probe_main, p);
	if (err) {
		pthread_mutex_destroy(&p->lock);
		free(p->lat_us);
		free(p);
		return err;
	}
	*ret = p;
	return 0;
}

static int u64_cmp(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

void soak_probe__stats(struct soak_probe *p, struct soak_probe_stats *ret)
{
	__u64 *sorted = NULL;
	size_t n;

	pthread_mutex_lock(&p->lock);
	*ret = p->st;
	p->st.last_max_us = 0;
	n = p->n;
	if (n)
		sorted = malloc(n * sizeof(*sorted));
	if (sorted)
		memcpy(sorted, p->lat_us, n * sizeof(*sorted));
	pthread_mutex_unlock(&p->lock);
	if (sorted) {
		qsort(sorted, n, sizeof(*sorted), u64_cmp);
		ret->p99_us = sorted[(n * 99) / 100 < n ? (n * 99) / 100 : n - 1];
	}
	free(sorted);
}

void soak_probe__free(struct soak_probe *p)
{
	if (!p)
		return;
	atomic_store(&p->stop, true);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->lock);
	free(p->lat_us);
	free(p);
}

/* --- the churn ------------------------------------------------------------------------ */

enum cg_kind { K_PLAIN, K_GLOB_LS, K_GLOB_BE, K_POD_BE, K_POD_LS, K_NR };

enum ctrl { C_CPU, C_CPUACCT, C_CPUSET, C_MEMORY, C_UNIFIED, C_NR };

static const char *const ctrl_name[C_NR] = { "cpu", "cpuacct", "cpuset", "memory", "unified" };

/* Controllers each kind is made in. */
static const unsigned int kind_ctrls[K_NR] = {
	[K_PLAIN] = 1u << C_CPU | 1u << C_CPUACCT | 1u << C_UNIFIED,
	[K_GLOB_LS] = 1u << C_CPU | 1u << C_CPUACCT | 1u << C_CPUSET | 1u << C_UNIFIED,
	[K_GLOB_BE] = 1u << C_CPU | 1u << C_CPUACCT | 1u << C_CPUSET | 1u << C_UNIFIED,
	[K_POD_BE] = (1u << C_NR) - 1,
	[K_POD_LS] = (1u << C_NR) - 1,
};

#define CG_TASKS 2

struct churn_cg {
	bool used;
	enum cg_kind kind;
	unsigned int idx;
	char uid[40], cid[72];
	char pod_rel[200]; /* pods: the pod dir; "" otherwise */
	char rel[300]; /* where the tasks run: the container dir of a pod */
	pid_t task[CG_TASKS];
	bool second; /* the second task was started */
	__u64 born_ms, die_ms;
};

struct soak_churn {
	struct soak_churn_opts o;
	char root_cpus[64], root_mems[64];
	struct churn_cg *cgs; /* o.live slots */
	__u64 gap_ms, life_ms, next_ms;
	bool pods_dirty;
	struct soak_churn_stats st;
};

static void churn_error(struct soak_churn *c, const char *what, const char *path, int err)
{
	c->st.errors++;
	snprintf(c->st.last_error, sizeof(c->st.last_error), "%.8s %.160s: %.60s", what, path,
		 strerror(-err));
}

static void ctrl_path(const struct soak_churn *c, enum ctrl k, const char *rel, const char *file,
		      char *buf, size_t len)
{
	snprintf(buf, len, "%s/%s/%s%s%s%s", c->o.cg_root, ctrl_name[k], c->o.top, rel,
		 file ? "/" : "", file ? file : "");
}

static int read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	int err = 0;

	if (!f)
		return -errno;
	if (!fgets(buf, (int)len, f))
		err = -EIO;
	fclose(f);
	buf[strcspn(buf, "\n")] = '\0';
	return err;
}

/* mkdir @rel in controller @k; a v1 cpuset takes no task before it has cpus and mems. */
static int mk(struct soak_churn *c, enum ctrl k, const char *rel, const char *cpus)
{
	char p[PATH_MAX], f[PATH_MAX];
	int err;

	ctrl_path(c, k, rel, NULL, p, sizeof(p));
	if (mkdir(p, 0755) && errno != EEXIST) {
		err = -errno;
		churn_error(c, "mkdir", p, err);
		return err;
	}
	if (k != C_CPUSET)
		return 0;
	ctrl_path(c, k, rel, "cpuset.mems", f, sizeof(f));
	err = fileio_put(f, c->root_mems);
	ctrl_path(c, k, rel, "cpuset.cpus", f, sizeof(f));
	if (!err)
		err = fileio_put(f, cpus);
	if (err)
		churn_error(c, "cpuset", p, err);
	return err;
}

/* rmdir, retrying while the kernel still counts a task that was just reaped. */
static int rm(struct soak_churn *c, enum ctrl k, const char *rel)
{
	char p[PATH_MAX];
	int err = 0;

	ctrl_path(c, k, rel, NULL, p, sizeof(p));
	for (int i = 0; i < 200; i++) {
		if (!rmdir(p) || errno == ENOENT)
			return 0;
		err = -errno;
		if (err != -EBUSY)
			break;
		sleep_ms(5);
	}
	churn_error(c, "rmdir", p, err);
	return err;
}

/*
 * The child: into every controller of its cgroup, then 200 us busy every 50 ms, so that it
 * switches in and out (what kqosd's BPF counts) at 0.4 % of a CPU: fifty of them leave the
 * machine to the kqosd under test.
 */
static void task_main(char procs[C_NR][PATH_MAX], unsigned int life_ms)
{
	__u64 end = soak_now_ms() + life_ms;
	struct timespec ts;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (int k = 0; k < C_NR; k++)
		if (procs[k][0] && fileio_put(procs[k], "0"))
			_exit(2);
	while (soak_now_ms() < end) {
		__u64 spin;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		spin = (__u64)ts.tv_sec * 1000000 + (__u64)ts.tv_nsec / 1000 + 200;
		do
			clock_gettime(CLOCK_MONOTONIC, &ts);
		while ((__u64)ts.tv_sec * 1000000 + (__u64)ts.tv_nsec / 1000 < spin);
		sleep_ms(50);
	}
	_exit(0);
}

static void task_start(struct soak_churn *c, struct churn_cg *g, int slot, unsigned int life_ms)
{
	static char procs[C_NR][PATH_MAX]; /* built before fork: the child only writes */
	pid_t pid;

	for (int k = 0; k < C_NR; k++) {
		procs[k][0] = '\0';
		if (kind_ctrls[g->kind] & (1u << k))
			ctrl_path(c, (enum ctrl)k, g->rel, "cgroup.procs", procs[k], PATH_MAX);
	}
	pid = fork();
	if (pid == 0)
		task_main(procs, life_ms);
	if (pid < 0) {
		churn_error(c, "fork", g->rel, -errno);
		return;
	}
	g->task[slot] = pid;
	c->st.tasks++;
}

static void task_reap(struct churn_cg *g, bool kill_it)
{
	for (int i = 0; i < CG_TASKS; i++) {
		if (g->task[i] <= 0)
			continue;
		if (kill_it)
			kill(g->task[i], SIGKILL);
		if (waitpid(g->task[i], NULL, kill_it ? 0 : WNOHANG) != 0)
			g->task[i] = -1;
	}
}

static void cg_name(struct churn_cg *g)
{
	unsigned int pid = (unsigned int)getpid();

	snprintf(g->uid, sizeof(g->uid), "%08x-0000-4000-8000-%012x", pid, g->idx);
	snprintf(g->cid, sizeof(g->cid), "%032x%032x", pid, g->idx);
	g->pod_rel[0] = '\0';
	switch (g->kind) {
	case K_PLAIN:
		snprintf(g->rel, sizeof(g->rel), "/cg-%u", g->idx);
		break;
	case K_GLOB_LS:
		snprintf(g->rel, sizeof(g->rel), "/ls-%u", g->idx);
		break;
	case K_GLOB_BE:
		snprintf(g->rel, sizeof(g->rel), "/be-%u", g->idx);
		break;
	default:
		snprintf(g->pod_rel, sizeof(g->pod_rel), "/kubepods/%s/pod%s",
			 g->kind == K_POD_BE ? "besteffort" : "burstable", g->uid);
		snprintf(g->rel, sizeof(g->rel), "%s/%s", g->pod_rel, g->cid);
		break;
	}
}

static void cg_destroy(struct soak_churn *c, struct churn_cg *g)
{
	task_reap(g, true);
	for (int k = 0; k < C_NR; k++) {
		if (!(kind_ctrls[g->kind] & (1u << k)))
			continue;
		rm(c, (enum ctrl)k, g->rel);
		if (g->pod_rel[0])
			rm(c, (enum ctrl)k, g->pod_rel);
	}
	if (g->pod_rel[0])
		c->pods_dirty = true;
	g->used = false;
	c->st.destroyed++;
	c->st.live--;
}

/*
 * A new cgroup in every controller of its kind. An LS container starts on the first CPU only,
 * so the LS pool kqos writes there differs from it and is journaled.
 */
static void cg_create(struct soak_churn *c, struct churn_cg *g, unsigned int idx, __u64 now)
{
	const char *cpus = c->root_cpus;
	char first[16];
	int err = 0;

	memset(g, 0, sizeof(*g));
	g->idx = idx;
	g->kind = (enum cg_kind)(idx % K_NR);
	g->task[0] = g->task[1] = -1;
	cg_name(g);
	snprintf(first, sizeof(first), "%.*s", (int)strcspn(c->root_cpus, ",-"), c->root_cpus);
	if (g->kind == K_POD_LS || g->kind == K_GLOB_LS)
		cpus = first;
	for (int k = 0; k < C_NR && !err; k++) {
		if (!(kind_ctrls[g->kind] & (1u << k)))
			continue;
		if (g->pod_rel[0])
			err = mk(c, (enum ctrl)k, g->pod_rel, c->root_cpus);
		if (!err)
			err = mk(c, (enum ctrl)k, g->rel, cpus);
	}
	g->used = true;
	g->born_ms = now;
	g->die_ms = now + c->life_ms;
	c->st.created++;
	c->st.live++;
	if (g->pod_rel[0])
		c->pods_dirty = true;
	if (!err)
		task_start(c, g, 0, (unsigned int)(c->life_ms / 2));
}

static void pod_json(FILE *f, const struct churn_cg *g)
{
	bool be = g->kind == K_POD_BE;

	fprintf(f,
		"{\"metadata\":{\"name\":\"soak-%s-%u\",\"namespace\":\"soak\",\"uid\":\"%s\","
		"\"labels\":{\"koordinator.sh/qosClass\":\"%s\"}},"
		"\"spec\":{\"priority\":%d,\"containers\":[{\"name\":\"c\",\"resources\":%s}]},"
		"\"status\":{\"phase\":\"Running\",\"qosClass\":\"%s\","
		"\"containerStatuses\":[{\"name\":\"c\",\"containerID\":\"containerd://%s\"}]}}",
		be ? "be" : "ls", g->idx, g->uid, be ? "BE" : "LS", be ? 5500 : 9000,
		be ? "{\"requests\":{\"kubernetes.io/batch-cpu\":\"500\"},"
		     "\"limits\":{\"kubernetes.io/batch-cpu\":\"1000\"}}" :
		     "{\"requests\":{\"cpu\":\"100m\"},\"limits\":{\"cpu\":\"500m\"}}",
		be ? "BestEffort" : "Burstable", g->cid);
}

/* The PodList of the pods that exist, whole or not at all (a temp file renamed over it). */
static int pods_write(struct soak_churn *c)
{
	char tmp[PATH_MAX];
	bool first = true;
	FILE *f;
	int err = 0;

	snprintf(tmp, sizeof(tmp), "%s.new", c->o.pods_file);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fputs("{\"apiVersion\":\"v1\",\"kind\":\"PodList\",\"items\":[", f);
	for (unsigned int i = 0; i < c->o.live; i++) {
		const struct churn_cg *g = &c->cgs[i];

		if (!g->used || !g->pod_rel[0])
			continue;
		if (!first)
			fputc(',', f);
		first = false;
		pod_json(f, g);
	}
	fputs("]}\n", f);
	if (fclose(f))
		err = -errno;
	if (!err && rename(tmp, c->o.pods_file))
		err = -errno;
	if (err)
		unlink(tmp);
	c->st.pod_writes++;
	return err;
}

static const char *const perm_dirs[] = { "", "/kubepods", "/kubepods/besteffort",
					 "/kubepods/burstable" };

int soak_churn__new(const struct soak_churn_opts *o, struct soak_churn **ret)
{
	struct soak_churn *c = calloc(1, sizeof(*c));
	char p[PATH_MAX];
	int err = -ENOMEM;

	*ret = NULL;
	if (!c)
		return -ENOMEM;
	c->o = *o;
	c->o.live = o->live ? o->live : 1;
	c->cgs = calloc(c->o.live, sizeof(*c->cgs));
	if (!c->cgs)
		goto err_free;
	snprintf(p, sizeof(p), "%s/cpuset/cpuset.cpus", o->cg_root);
	err = read_line(p, c->root_cpus, sizeof(c->root_cpus));
	snprintf(p, sizeof(p), "%s/cpuset/cpuset.mems", o->cg_root);
	if (!err)
		err = read_line(p, c->root_mems, sizeof(c->root_mems));
	if (err)
		goto err_free;
	c->gap_ms = o->total ? o->duration_ms / o->total : o->duration_ms;
	c->life_ms = c->gap_ms * c->o.live;
	*ret = c; /* from here on __free removes whatever was made */
	for (size_t d = 0; d < sizeof(perm_dirs) / sizeof(perm_dirs[0]); d++)
		for (int k = 0; k < C_NR; k++) {
			err = mk(c, (enum ctrl)k, perm_dirs[d], c->root_cpus);
			if (err)
				goto err_churn;
		}
	if (o->pods_file) {
		err = pods_write(c);
		if (err)
			goto err_churn;
	}
	return 0;

err_churn:
	soak_churn__free(c);
	*ret = NULL;
	return err;
err_free:
	free(c->cgs);
	free(c);
	return err;
}

int soak_churn__step(struct soak_churn *c, __u64 now_ms)
{
	for (unsigned int i = 0; i < c->o.live; i++) {
		struct churn_cg *g = &c->cgs[i];

		if (!g->used)
			continue;
		task_reap(g, false);
		if (now_ms >= g->die_ms) {
			__u64 t = soak_now_ms();

			cg_destroy(c, g);
			t = soak_now_ms() - t;
			if (t > c->st.destroy_ms_max)
				c->st.destroy_ms_max = (unsigned int)t;
		} else if (!g->second && now_ms >= g->born_ms + c->life_ms / 2) {
			g->second = true;
			task_start(c, g, 1, (unsigned int)(c->life_ms / 4));
		}
	}
	while (c->st.created < c->o.total && now_ms >= c->next_ms) {
		struct churn_cg *g = NULL;
		__u64 t;

		for (unsigned int i = 0; i < c->o.live && !g; i++)
			if (!c->cgs[i].used)
				g = &c->cgs[i];
		if (!g)
			break; /* all slots busy: wait for one to die */
		t = soak_now_ms();
		cg_create(c, g, c->st.created, now_ms);
		t = soak_now_ms() - t;
		if (t > c->st.create_ms_max)
			c->st.create_ms_max = (unsigned int)t;
		c->next_ms += c->gap_ms;
	}
	if (c->pods_dirty && c->o.pods_file && !pods_write(c))
		c->pods_dirty = false;
	return c->st.created < c->o.total || c->st.live > 0;
}

void soak_churn__stats(const struct soak_churn *c, struct soak_churn_stats *ret)
{
	*ret = c->st;
}

static void kill_members(const char *dir)
{
	char p[PATH_MAX];
	FILE *f;
	int pid;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	f = fopen(p, "re");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		kill(pid, SIGKILL);
	fclose(f);
}

/* Whatever is left below @dir, depth first: after a failure the churn's own list may not know. */
static void destroy_tree(const char *dir)
{
	char p[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);

	if (d) {
		while ((de = readdir(d))) {
			if (de->d_type != DT_DIR || de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
			destroy_tree(p);
		}
		closedir(d);
	}
	kill_members(dir);
	for (int i = 0; i < 200; i++) {
		if (!rmdir(dir) || errno == ENOENT)
			return;
		sleep_ms(10);
	}
	fprintf(stderr, "soak: could not remove %s: %s\n", dir, strerror(errno));
}

void soak_churn__free(struct soak_churn *c)
{
	char p[PATH_MAX];

	if (!c)
		return;
	for (unsigned int i = 0; c->cgs && i < c->o.live; i++)
		if (c->cgs[i].used)
			cg_destroy(c, &c->cgs[i]);
	for (int k = 0; k < C_NR; k++) {
		ctrl_path(c, (enum ctrl)k, "", NULL, p, sizeof(p));
		destroy_tree(p);
	}
	if (c->o.pods_file) {
		unlink(c->o.pods_file);
		snprintf(p, sizeof(p), "%s.new", c->o.pods_file);
		unlink(p);
	}
	free(c->cgs);
	free(c);
}
