// SPDX-License-Identifier: GPL-2.0
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "log.h"
#include "sockserv.h"

struct client {
	int fd;
	bool watch;
	bool closing; /* close once the queue is flushed (after an error answer) */
	char in[SOCKSERV_MAX_LINE];
	size_t in_len;
	char *out; /* queued answer bytes, out[out_off..out_len) not yet sent */
	size_t out_off, out_len, out_cap;
	bool want_out; /* EPOLLOUT registered */
	uint64_t active_ns; /* accepted, sent a byte or took one: a full server drops the stalest */
};

struct sockserv {
	struct sockserv_opts opts;
	char *path;
	int lfd;
	int epfd;
	bool bound; /* the socket file is ours to unlink */
	struct client **clients; /* opts.max_clients slots, NULL = free */
	unsigned int nr_clients;
	uint64_t nr_dropped;
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

/* epoll data: the listener is slot -1, clients their slot index */
#define LISTENER_TAG UINT64_MAX

static void client_close(struct sockserv *s, unsigned int slot)
{
	struct client *c = s->clients[slot];

	if (!c)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
	free(c->out);
	free(c);
	s->clients[slot] = NULL;
	s->nr_clients--;
}

static int client_events(struct sockserv *s, unsigned int slot, bool want_out)
{
	struct client *c = s->clients[slot];
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (want_out ? EPOLLOUT : 0),
				  .data.u64 = slot };

	if (c->want_out == want_out)
		return 0;
	if (epoll_ctl(s->epfd, EPOLL_CTL_MOD, c->fd, &ev))
		return -errno;
	c->want_out = want_out;
	return 0;
}

/* Send what the socket takes now; 0, or -errno when the client is gone. */
static int client_flush(struct sockserv *s, unsigned int slot)
{
	struct client *c = s->clients[slot];

	while (c->out_off < c->out_len) {
		ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return client_events(s, slot, true);
		if (n < 0)
			return -errno;
		c->out_off += (size_t)n;
		c->active_ns = mono_ns();
	}
	c->out_off = c->out_len = 0;
	if (c->closing)
		return -ECONNRESET;
	return client_events(s, slot, false);
}

/* Queue @len bytes and a newline; -ENOBUFS when the client's queue would pass the bound. */
static int client_queue(struct sockserv *s, struct client *c, const char *p, size_t len)
{
	size_t pending = c->out_len - c->out_off, need = pending + len + 1;

	if (need > s->opts.max_out)
		return -ENOBUFS;
	if (c->out_off) {
		memmove(c->out, c->out + c->out_off, pending);
		c->out_off = 0;
		c->out_len = pending;
	}
	if (need > c->out_cap) {
		size_t cap = c->out_cap ? c->out_cap : 4096;
		char *n;

		while (cap < need)
			cap *= 2;
		n = realloc(c->out, cap);
		if (!n)
			return -ENOMEM;
		c->out = n;
		c->out_cap = cap;
	}
	memcpy(c->out + c->out_len, p, len);
	c->out[c->out_len + len] = '\n';
	c->out_len += len + 1;
	return 0;
}

/* Queue and flush; a client that cannot keep up or is gone is closed. */
static void client_send(struct sockserv *s, unsigned int slot, const char *p, size_t len)
{
	struct client *c = s->clients[slot];
	int err = client_queue(s, c, p, len);

	if (err == -ENOBUFS) {
		s->nr_dropped++;
		log_info("snapshot socket client too slow, disconnected", "queued=%zu",
			 c->out_len - c->out_off);
	}
	if (!err)
		err = client_flush(s, slot);
	if (err)
		client_close(s, slot);
}

static void send_error(struct sockserv *s, unsigned int slot, const char *msg, bool close_after)
{
	char buf[256];
	int n = snprintf(buf, sizeof(buf), "{\"error\":\"%s\"}", msg);

	s->clients[slot]->closing = close_after;
	client_send(s, slot, buf, (size_t)n);
}

static void send_snapshot(struct sockserv *s, unsigned int slot)
{
	size_t len = 0;
	const char *json = s->opts.json ? s->opts.json(s->opts.ctx, &len) : NULL;

	if (!json)
		send_error(s, slot, "no snapshot yet", false);
	else
		client_send(s, slot, json, len);
}

static void handle_request(struct sockserv *s, unsigned int slot, char *line)
{
	const char *json;
	char *status;
	size_t len = 0;

	/* tolerate CRLF from `nc`/`socat -` typed by hand */
	line[strcspn(line, "\r")] = '\0';
	if (!strcmp(line, "snapshot")) {
		send_snapshot(s, slot);
	} else if (!strcmp(line, "watch")) {
		/* the current snapshot now if there is one, then each new one */
		s->clients[slot]->watch = true;
		json = s->opts.json ? s->opts.json(s->opts.ctx, &len) : NULL;
		if (json)
			client_send(s, slot, json, len);
	} else if (!strcmp(line, "status") || !strcmp(line, "health")) {
		sockserv_status_fn fn = line[0] == 's' ? s->opts.status : s->opts.health;

		status = fn ? fn(s->opts.ctx) : NULL;
		if (status)
			client_send(s, slot, status, strlen(status));
		else
			send_error(s, slot, "no status", false);
		free(status);
	} else if (!*line) {
		return;
	} else {
		send_error(s, slot, "unknown request; send snapshot, watch, status or health",
			   false);
	}
}

/* Read what is there and answer each complete line. */
static void client_read(struct sockserv *s, unsigned int slot)
{
	for (;;) {
		struct client *c = s->clients[slot];
		ssize_t n;
		char *nl;

		if (!c)
			return;
		n = recv(c->fd, c->in + c->in_len, sizeof(c->in) - c->in_len - 1, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			client_close(s, slot);
			return;
		}
		c->in_len += (size_t)n;
		c->in[c->in_len] = '\0';
		c->active_ns = mono_ns();
		while (s->clients[slot] && (nl = strchr(c->in, '\n'))) {
			size_t used = (size_t)(nl - c->in) + 1;

			*nl = '\0';
			handle_request(s, slot, c->in);
			if (!s->clients[slot])
				return;
			memmove(c->in, c->in + used, c->in_len - used + 1);
			c->in_len -= used;
		}
		if (c->in_len >= sizeof(c->in) - 1) {
			send_error(s, slot, "request line too long", true);
			return;
		}
	}
}

/*
 * A full server drops the client that has neither asked nor taken anything for longest, if
 * that is past the idle bound: clients that connect and never read must not lock others out.
 */
static bool drop_stalest(struct sockserv *s)
{
	uint64_t now = mono_ns(), oldest = now;
	unsigned int victim = s->opts.max_clients;

	for (unsigned int i = 0; i < s->opts.max_clients; i++) {
		struct client *c = s->clients[i];

		if (c && c->active_ns < oldest) {
			oldest = c->active_ns;
			victim = i;
		}
	}
	if (victim == s->opts.max_clients || now - oldest < s->opts.idle_ns)
		return false;
	client_close(s, victim);
	s->nr_dropped++;
	log_info("snapshot socket full, dropped its most idle client", "idle_ms=%llu",
		 (unsigned long long)((now - oldest) / 1000000ULL));
	return true;
}

static void accept_clients(struct sockserv *s)
{
	for (;;) {
		struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP };
		unsigned int slot;
		struct client *c;
		int fd = accept4(s->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (fd < 0)
			return; /* EAGAIN, or a client that went away before accept */
		if (s->nr_clients >= s->opts.max_clients && !drop_stalest(s)) {
			static const char full[] = "{\"error\":\"too many clients\"}\n";

			send(fd, full, sizeof(full) - 1, MSG_NOSIGNAL | MSG_DONTWAIT);
			close(fd);
			log_warn("snapshot socket full, client refused", "max=%u",
				 s->opts.max_clients);
			continue;
		}
		for (slot = 0; s->clients[slot]; slot++)
			;
		c = calloc(1, sizeof(*c));
		ev.data.u64 = slot;
		if (!c || epoll_ctl(s->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			free(c);
			close(fd);
			continue;
		}
		c->fd = fd;
		c->active_ns = mono_ns();
		s->clients[slot] = c;
		s->nr_clients++;
	}
}

void sockserv__dispatch(struct sockserv *s)
{
	struct epoll_event evs[16];
	int n;

	if (!s)
		return;
	n = epoll_wait(s->epfd, evs, 16, 0);
	for (int i = 0; i < n; i++) {
		unsigned int slot = (unsigned int)evs[i].data.u64;

		if (evs[i].data.u64 == LISTENER_TAG) {
			accept_clients(s);
			continue;
		}
		if (!s->clients[slot])
			continue;
		if ((evs[i].events & EPOLLOUT) && client_flush(s, slot)) {
			client_close(s, slot);
			continue;
		}
		if (evs[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR))
			client_read(s, slot);
	}
}

void sockserv__publish(struct sockserv *s)
{
	const char *json = NULL;
	size_t len = 0;

	if (!s)
		return;
	for (unsigned int i = 0; i < s->opts.max_clients; i++) {
		if (!s->clients[i] || !s->clients[i]->watch)
			continue;
		if (!json)
			json = s->opts.json ? s->opts.json(s->opts.ctx, &len) : NULL;
		if (!json)
			return;
		client_send(s, i, json, len);
	}
}

/* --- setup -------------------------------------------------------------------------------- */

static int mkdir_parents(const char *path)
{
	char buf[sizeof(((struct sockaddr_un *)0)->sun_path)];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return 0;
}

/* An existing socket file: live (another agent) or stale (a crash)? */
static int replace_stale(const struct sockaddr_un *sa)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (!connect(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		err = -EADDRINUSE;
	else if (errno == ECONNREFUSED && unlink(sa->sun_path))
		err = -errno;
	close(fd);
	return err;
}

static int set_owner(const char *path, const char *group)
{
	struct group gr, *res = NULL;
	char buf[4096];
	int err;

	if (!group || !*group)
		return chmod(path, 0600) ? -errno : 0;
	err = getgrnam_r(group, &gr, buf, sizeof(buf), &res);
	if (err || !res)
		return err ? -err : -ENOENT;
	if (chown(path, (uid_t)-1, gr.gr_gid) || chmod(path, 0660))
		return -errno;
	return 0;
}

static int listen_at(struct sockserv *s)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	mode_t old;
	int err;

	if (strlen(s->path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, s->path);
	err = mkdir_parents(s->path);
	if (err)
		return err;
	if (!lstat(s->path, &st)) {
		if (!S_ISSOCK(st.st_mode))
			return -EEXIST; /* never unlink a file that is not ours */
		err = replace_stale(&sa);
		if (err)
			return err;
	}
	s->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s->lfd < 0)
		return -errno;
	/* the file is born 0600: no window in which another user could connect */
	old = umask(0177);
	err = bind(s->lfd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (err)
		return err;
	s->bound = true;
	err = set_owner(s->path, s->opts.group);
	if (!err && listen(s->lfd, 16))
		err = -errno;
	return err;
}

int sockserv__new(const struct sockserv_opts *opts, struct sockserv **ret)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = LISTENER_TAG };
	struct sockserv *s;
	int err;

	if (!opts || !opts->path || !*opts->path)
		return -EINVAL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->lfd = s->epfd = -1;
	s->opts = *opts;
	s->opts.max_clients = opts->max_clients ? opts->max_clients : SOCKSERV_MAX_CLIENTS;
	s->opts.max_out = opts->max_out ? opts->max_out : SOCKSERV_MAX_OUT;
	s->opts.idle_ns = opts->idle_ns ? opts->idle_ns : SOCKSERV_IDLE_NS;
	s->opts.group = NULL;
	s->path = strdup(opts->path);
	s->clients = calloc(s->opts.max_clients, sizeof(*s->clients));
	if (!s->path || !s->clients) {
		err = -ENOMEM;
		goto err_free;
	}
	s->opts.group = opts->group; /* used during listen_at only */
	err = listen_at(s);
	s->opts.group = NULL;
	if (err) {
		log_err("cannot listen on the snapshot socket", "path=%s group=\"%s\" err=%d (%s)",
			s->path, opts->group ? opts->group : "", err, strerror(-err));
		goto err_free;
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0 || epoll_ctl(s->epfd, EPOLL_CTL_ADD, s->lfd, &ev)) {
		err = -errno;
		log_err("cannot create the snapshot socket epoll", "err=%d", err);
		goto err_free;
	}
	*ret = s;
	return 0;
err_free:
	sockserv__free(s);
	return err;
}

void sockserv__free(struct sockserv *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; s->clients && i < s->opts.max_clients; i++)
		client_close(s, i);
	free(s->clients);
	if (s->lfd >= 0)
		close(s->lfd);
	if (s->bound)
		unlink(s->path); /* only once we bound it: a live agent's socket stays */
	if (s->epfd >= 0)
		close(s->epfd);
	free(s->path);
	free(s);
}

int sockserv__epoll_fd(const struct sockserv *s)
{
	return s ? s->epfd : -1;
}

unsigned int sockserv__nr_clients(const struct sockserv *s)
{
	return s ? s->nr_clients : 0;
}

uint64_t sockserv__nr_dropped(const struct sockserv *s)
{
	return s ? s->nr_dropped : 0;
}
