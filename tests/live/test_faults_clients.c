// SPDX-License-Identifier: GPL-2.0
/*
 * Socket clients against the real kqosd: 64 at once on the snapshot socket, half of them slow
 * (reading a byte at a time), never reading, or sending garbage. The good ones still get whole
 * snapshots, kqosd stays up, and its fd count goes back to where it was.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <criterion/criterion.h>
#include <jansson.h>

#include "faultenv.h"
#include "live.h"

#define NR_CLIENTS 64

enum role { GOOD, SLOW, NEVER_READS, GARBAGE_LONG, GARBAGE_LINES, HANG_UP };

static struct faultenv *fe;
static pid_t kids[NR_CLIENTS];

static void teardown(void)
{
	for (int i = 0; i < NR_CLIENTS; i++)
		live_kill(kids[i]);
	memset(kids, 0, sizeof(kids));
	faultenv__free(fe);
	fe = NULL;
}

static unsigned int ms_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (unsigned int)(t.tv_sec * 1000 + t.tv_nsec / 1000000);
}

static int dial(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memcpy(sa.sun_path, fe->sock, strlen(fe->sock) + 1);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A whole snapshot: JSON that parses, with the agent and our cgroups in it. */
static bool full_snapshot(const char *line)
{
	json_t *root = json_loads(line, 0, NULL);
	bool ok = root && json_object_get(root, "agent") &&
		  json_is_array(json_object_get(root, "cgroups")) && strstr(line, "/be1");

	json_decref(root);
	return ok;
}

/* Exit status 0: a whole snapshot within 20 s, retrying while the daemon has no room. */
static int good(void)
{
	for (unsigned int t0 = ms_now(); ms_now() - t0 < 20000; usleep(20000)) {
		char *line = NULL;
		int ok;

		if (faultenv_request(fe, "snapshot\n", 5000, &line))
			continue;
		if (strstr(line, "too many clients") || strstr(line, "no snapshot yet")) {
			free(line);
			continue;
		}
		ok = full_snapshot(line);
		free(line);
		return ok ? 0 : 2;
	}
	return 3;
}

/* One byte per read, with a pause now and then; a whole snapshot at the end. */
static int slow(void)
{
	size_t len = 0, cap = 1 << 16;
	char *buf = malloc(cap), c = 0;
	int fd = dial();

	if (fd < 0 || !buf || write(fd, "snapshot\n", 9) != 9)
		return 4;
	while (c != '\n' && read(fd, &c, 1) == 1) {
		if (len + 1 == cap && !(buf = realloc(buf, cap *= 2)))
			return 4;
		buf[len++] = c;
		if (len % 512 == 0)
			usleep(1000);
	}
	buf[len] = '\0';
	if (strstr(buf, "too many clients"))
		return 0; /* turned away at once: fine for a slow one */
	return full_snapshot(buf) ? 0 : 5;
}

static int never_reads(void)
{
	int fd = dial();

	if (fd < 0 || write(fd, "watch\n", 6) != 6)
		return 6;
	pause();
	return 0;
}

static int garbage(enum role r, unsigned int seed)
{
	char junk[4096];
	int fd = dial();

	if (fd < 0)
		return 7;
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (char)rand_r(&seed);
	if (r == GARBAGE_LONG) {
		/* past the 1 KiB request bound, no newline */
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = junk[i] == '\n' ? 'x' : junk[i];
	} else if (r == GARBAGE_LINES) {
		for (size_t i = 0; i < sizeof(junk); i += 37)
			junk[i] = '\n';
	} else {
		/* half a request, then gone */
		close(fd);
		fd = dial();
		if (fd >= 0 && write(fd, "snap", 4) != 4)
			return 7;
		close(fd);
		return 0;
	}
	if (send(fd, junk, sizeof(junk), MSG_NOSIGNAL) < 0 && errno != EPIPE && errno != ECONNRESET)
		return 8;
	usleep(200000);
	close(fd);
	return 0;
}

static enum role role_of(int i)
{
	static const enum role bad[] = { SLOW,		NEVER_READS, SLOW,	  GARBAGE_LONG,
					 GARBAGE_LINES, SLOW,	     NEVER_READS, HANG_UP };

	return i % 2 ? bad[(i / 2) % 8] : GOOD; /* good and bad interleaved */
}

static pid_t spawn(int i)
{
	enum role r = role_of(i);
	pid_t pid = fork();
	int rc;

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	switch (r) {
	case GOOD:
		rc = good();
		break;
	case SLOW:
		rc = slow();
		break;
	case NEVER_READS:
		rc = never_reads();
		break;
	default:
		rc = garbage(r, (unsigned int)i);
		break;
	}
	_exit(rc);
}

/* The least of a few samples: a tick may hold a cgroup file open for a moment. */
static int fds_now(void)
{
	int least = faultenv_nr_fds(fe);

	for (int k = 0; k < 5; k++) {
		int n;

		live_sleep_ms(20);
		n = faultenv_nr_fds(fe);
		if (n >= 0 && n < least)
			least = n;
	}
	return least;
}

Test(faults_clients, sixty_four_clients_half_of_them_bad, .fini = teardown, .timeout = 60)
{
	int base, now = -1, st, bad_exit = 0;
	char *line = NULL;

	if (!live_require_root())
		return;
	live_sweep_stale();
	cr_assert_eq(faultenv__new(2, 0, &fe), 0, "fault env");
	cr_assert_eq(faultenv_write_suppress(fe, "100ms", "weight", 2, "restore"), 0);
	cr_assert_gt(faultenv_start(fe, 10000), 0, "kqosd did not start");
	cr_assert(faultenv_wait_file(fe, "cpu", 1, "cpu.shares", "2", 5000), "no enforcement");
	cr_assert_eq(faultenv_request(fe, "status\n", 5000, &line), 0);
	free(line);
	base = fds_now();
	cr_assert_gt(base, 0);

	for (int i = 0; i < NR_CLIENTS; i++) {
		kids[i] = spawn(i);
		cr_assert_gt(kids[i], 0);
	}
	/* everyone but the never-readers ends on their own */
	for (int i = 0; i < NR_CLIENTS; i++) {
		if (role_of(i) == NEVER_READS)
			continue;
		cr_assert_eq(waitpid(kids[i], &st, 0), kids[i]);
		kids[i] = 0;
		if (!WIFEXITED(st) || WEXITSTATUS(st)) {
			bad_exit++;
			cr_expect_fail("client %d (role %d): status %d", i, role_of(i), st);
		}
	}
	cr_expect_eq(bad_exit, 0);
	cr_expect(faultenv_alive(fe), "kqosd died");
	for (int i = 0; i < NR_CLIENTS; i++)
		live_kill(kids[i]);
	memset(kids, 0, sizeof(kids));

	/* the daemon lets go of every client */
	for (unsigned int t0 = ms_now(); ms_now() - t0 < 5000; live_sleep_ms(50)) {
		now = fds_now();
		if (now <= base)
			break;
	}
	cr_expect_leq(now, base, "fds %d after the clients, %d before", now, base);
	cr_assert_eq(faultenv_request(fe, "snapshot\n", 5000, &line), 0, "no answer afterwards");
	cr_expect(full_snapshot(line), "no whole snapshot afterwards");
	free(line);
	cr_expect_eq(faultenv_stop(fe), 0);
}
