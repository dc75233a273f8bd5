// SPDX-License-Identifier: GPL-2.0
/*
 * The snapshot socket's request lines. Each input is what one client sends, in chunks the size
 * of the first byte, to a real sockserv on a unix socket; the client then half-closes and reads
 * every answer. The server must answer, never block, and drop the client at EOF.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "fuzz.h"
#include "sockserv.h"

/* a client that neither reads nor closes must be dropped within this many dispatches */
#define MAX_ROUNDS 64

static struct sockserv *srv;
static struct sockaddr_un addr = { .sun_family = AF_UNIX };

static const char *snapshot_json(void *ctx, size_t *ret_len)
{
	static const char json[] = "{\"seq\":1,\"pods\":[]}";

	*ret_len = sizeof(json) - 1;
	return json;
}

static char *status_json(void *ctx)
{
	return strdup("{\"status\":\"ok\"}");
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	struct sockserv_opts o = {
		.json = snapshot_json,
		.status = status_json,
		.max_out = 1 << 16,
	};

	fuzz_quiet();
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/kqos.sock", fuzz_tmpdir());
	o.path = addr.sun_path;
	if (sockserv__new(&o, &srv))
		abort();
	return 0;
}

static void drain(int fd)
{
	char buf[4096];

	while (recv(fd, buf, sizeof(buf), MSG_DONTWAIT) > 0)
		;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t chunk, off = 0;
	int fd, rounds;

	if (!size)
		return 0;
	chunk = data[0] ? data[0] : 256;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof(addr)))
		abort();
	sockserv__dispatch(srv);
	for (off = 1; off < size; off += chunk) {
		size_t n = size - off < chunk ? size - off : chunk;

		/* the server may have hung up already (a line too long): that is an answer too */
		if (send(fd, data + off, n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0 && errno != EAGAIN)
			break;
		sockserv__dispatch(srv);
		sockserv__publish(srv);
		drain(fd);
	}
	shutdown(fd, SHUT_WR);
	for (rounds = 0; sockserv__nr_clients(srv) && rounds < MAX_ROUNDS; rounds++) {
		sockserv__dispatch(srv);
		drain(fd);
	}
	if (sockserv__nr_clients(srv))
		__builtin_trap();
	close(fd);
	return 0;
}
