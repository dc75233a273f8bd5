// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "top.h"

/* A snapshot line can be megabytes on a large node: grow as needed, up to a sane bound. */
#define LINE_MAX_BYTES (64u << 20)

struct top_conn {
	int fd;
	char *buf;
	size_t len, cap;
};

int top_conn__open(const char *path, struct top_conn **ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct top_conn *c;
	int err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	strcpy(sa.sun_path, path);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa))) {
		err = -errno;
		top_conn__free(c);
		return err;
	}
	*ret = c;
	return 0;
}

void top_conn__free(struct top_conn *c)
{
	if (!c)
		return;
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c);
}

int top_conn__fd(const struct top_conn *c)
{
	return c->fd;
}

static int send_line(struct top_conn *c, const char *req)
{
	char line[64];
	int n = snprintf(line, sizeof(line), "%s\n", req);

	if (n >= (int)sizeof(line))
		return -EINVAL;
	if (send(c->fd, line, (size_t)n, MSG_NOSIGNAL) != n)
		return errno ? -errno : -EIO;
	return 0;
}

int top_conn__request(struct top_conn *c)
{
	return send_line(c, "snapshot");
}

/* Take the first complete line out of the buffer. */
static int take_line(struct top_conn *c, char **ret_line)
{
	char *nl = c->len ? memchr(c->buf, '\n', c->len) : NULL;
	size_t n;

	if (!nl)
		return 0;
	n = (size_t)(nl - c->buf);
	*ret_line = strndup(c->buf, n);
	if (!*ret_line)
		return -ENOMEM;
	memmove(c->buf, nl + 1, c->len - n - 1);
	c->len -= n + 1;
	return 1;
}

int top_conn__read(struct top_conn *c, char **ret_line)
{
	int got = take_line(c, ret_line);

	if (got)
		return got;
	for (;;) {
		ssize_t n;

		if (c->cap - c->len < 65536) {
			size_t cap = c->cap ? c->cap * 2 : 1 << 17;
			char *b;

			if (cap > LINE_MAX_BYTES)
				return -E2BIG;
			b = realloc(c->buf, cap);
			if (!b)
				return -ENOMEM;
			c->buf = b;
			c->cap = cap;
		}
		n = recv(c->fd, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return take_line(c, ret_line);
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		c->len += (size_t)n;
	}
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

int top_conn__get(struct top_conn *c, int timeout_ms, char **ret_line)
{
	return top_conn__call(c, "snapshot", timeout_ms, ret_line);
}

int top_conn__call(struct top_conn *c, const char *req, int timeout_ms, char **ret_line)
{
	long long end = now_ms() + timeout_ms;
	int err = send_line(c, req);

	while (!err) {
		struct pollfd p = { .fd = c->fd, .events = POLLIN };
		long long left = end - now_ms();

		if (left <= 0)
			return -ETIMEDOUT;
		if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
			return -errno;
		err = top_conn__read(c, ret_line);
		if (err == 1)
			return 0;
	}
	return err;
}
