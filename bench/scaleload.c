// SPDX-License-Identifier: GPL-2.0
/*
 * scaleload: N pods for bench/scale.sh, as a kubelet with the cgroupfs driver lays them out on
 * a v1 node, each with one container whose thread wakes every WAKE_MS.
 *
 *   scaleload N ROOT PODLIST [WAKE_MS]
 *
 * ROOT is a directory name made in every v1 controller kqos reads (cpu, cpuacct, cpuset,
 * memory); the tree is ROOT/kubepods/{pod<uid>,burstable/pod<uid>,besteffort/pod<uid>}/<id>,
 * a third of the pods in each class. PODLIST is written in kubelet's /pods shape. One thread per container,
 * each moved into its own cgroup (v1 places threads, not processes): 5000 threads cost far less
 * than 5000 processes. Prints "ready" when every thread runs where it belongs, then runs until
 * SIGTERM/SIGINT and removes the whole tree.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define CG "/sys/fs/cgroup"

/*
 * kubelet makes a pod's dirs in every controller; kqos reads cpu (the walk, cpu.stat), cpuacct,
 * cpuset (effective CPUs) and memory (memory.stat). Threads go into the first NCTRL_TASKS: a v1
 * memory cgroup holds processes, not threads, and a v1 cpuset takes none before it has CPUs.
 */
static const char *const ctrls[] = { "cpu", "cpuacct", "cpuset", "memory" };
#define NCTRL	    (sizeof(ctrls) / sizeof(ctrls[0]))
#define NCTRL_TASKS 2

static const char *root;
static int wake_ms = 20;

static const char *class_dir(int i)
{
	static const char *const dirs[] = { "", "burstable/", "besteffort/" };

	return dirs[i % 3];
}

static void pod_uid(int i, char *buf, size_t n)
{
	snprintf(buf, n, "5ca1e000-0000-4000-8000-%012d", i);
}

static void ctr_id(int i, char *buf, size_t n)
{
	snprintf(buf, n, "%064x", i + 1);
}

/* ROOT/kubepods/<class>pod<uid>[/<cid>] below controller @c */
static void pod_path(const char *c, int i, bool ctr, char *buf, size_t n)
{
	char uid[64], cid[80];

	pod_uid(i, uid, sizeof(uid));
	ctr_id(i, cid, sizeof(cid));
	snprintf(buf, n, CG "/%s/%s/kubepods/%spod%s%s%s", c, root, class_dir(i), uid,
		 ctr ? "/" : "", ctr ? cid : "");
}

static int mk(const char *p)
{
	if (mkdir(p, 0755) && errno != EEXIST) {
		fprintf(stderr, "scaleload: mkdir %s: %s\n", p, strerror(errno));
		return -errno;
	}
	return 0;
}

static int mk_tree(int n)
{
	static const char *const top[] = { "", "/kubepods", "/kubepods/burstable",
					   "/kubepods/besteffort" };
	char p[512];
	int err;

	for (size_t c = 0; c < NCTRL; c++) {
		for (size_t t = 0; t < sizeof(top) / sizeof(top[0]); t++) {
			snprintf(p, sizeof(p), CG "/%s/%s%s", ctrls[c], root, top[t]);
			if ((err = mk(p)))
				return err;
		}
		for (int i = 0; i < n; i++) {
			pod_path(ctrls[c], i, false, p, sizeof(p));
			if ((err = mk(p)))
				return err;
			pod_path(ctrls[c], i, true, p, sizeof(p));
			if ((err = mk(p)))
				return err;
		}
	}
	return 0;
}

static void rm_tree(int n)
{
	static const char *const top[] = { "/kubepods/besteffort", "/kubepods/burstable",
					   "/kubepods", "" };
	char p[512];

	for (size_t c = 0; c < NCTRL; c++) {
		for (int i = 0; i < n; i++) {
			pod_path(ctrls[c], i, true, p, sizeof(p));
			rmdir(p);
			pod_path(ctrls[c], i, false, p, sizeof(p));
			rmdir(p);
		}
		for (size_t t = 0; t < sizeof(top) / sizeof(top[0]); t++) {
			snprintf(p, sizeof(p), CG "/%s/%s%s", ctrls[c], root, top[t]);
			rmdir(p);
		}
	}
}

static const char *const qos[] = { "Guaranteed", "Burstable", "BestEffort" };

static int write_podlist(const char *path, int n)
{
	char tmp[512], uid[64], cid[80];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return -errno;
	fputs("{\"kind\":\"PodList\",\"apiVersion\":\"v1\",\"items\":[", f);
	for (int i = 0; i < n; i++) {
		pod_uid(i, uid, sizeof(uid));
		ctr_id(i, cid, sizeof(cid));
		fprintf(f,
			"%s{\"metadata\":{\"name\":\"scale-%d\",\"namespace\":\"bench\",\"uid\":\"%s\"},"
			"\"spec\":{\"containers\":[{\"name\":\"c\"}]},"
			"\"status\":{\"phase\":\"Running\",\"qosClass\":\"%s\","
			"\"containerStatuses\":[{\"name\":\"c\",\"containerID\":\"containerd://%s\"}]}}",
			i ? "," : "", i, uid, qos[i % 3], cid);
	}
	fputs("]}\n", f);
	if (fclose(f))
		return -EIO;
	return rename(tmp, path) ? -errno : 0;
}

static int put_tid(const char *cgdir, pid_t tid)
{
	char p[600], v[32];
	FILE *f;
	int err = 0;

	snprintf(p, sizeof(p), "%s/tasks", cgdir);
	snprintf(v, sizeof(v), "%d\n", tid);
	f = fopen(p, "w");
	if (!f)
		return -errno;
	if (fputs(v, f) < 0)
		err = -EIO;
	if (fclose(f))
		err = -errno;
	return err;
}

static pthread_barrier_t placed;

/* A container's one thread: into its cgroups, then a short wake every wake_ms. */
static void *waker(void *arg)
{
	int i = (int)(long)arg;
	pid_t tid = (pid_t)syscall(SYS_gettid);
	struct timespec next, d = { 0, 0 };
	char p[512];

	for (size_t c = 0; c < NCTRL_TASKS; c++) {
		pod_path(ctrls[c], i, true, p, sizeof(p));
		if (put_tid(p, tid)) {
			fprintf(stderr, "scaleload: cannot place thread %d in %s\n", tid, p);
			exit(1);
		}
	}
	pthread_barrier_wait(&placed);
	clock_gettime(CLOCK_MONOTONIC, &next);
	/* spread the first wakes over one period, so the load is even rather than one burst */
	next.tv_nsec += (long)(i % wake_ms) * 1000000L;
	for (;;) {
		next.tv_nsec += (long)wake_ms * 1000000L;
		while (next.tv_nsec >= 1000000000L) {
			next.tv_nsec -= 1000000000L;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
		clock_gettime(CLOCK_MONOTONIC, &d); /* a little work, a switch in and out */
	}
	return NULL;
}

/* The threads live in a child, so the parent can remove the tree once they are gone. */
static void run_worker(int n)
{
	pthread_attr_t attr;
	pthread_t t;

	pthread_barrier_init(&placed, NULL, (unsigned int)n + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t, &attr, waker, (void *)(long)i)) {
			fprintf(stderr, "scaleload: thread %d: %s\n", i, strerror(errno));
			exit(1);
		}
	}
	pthread_barrier_wait(&placed);
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_stop };
	int n, err, status;
	pid_t w;

	if (argc < 4 || (n = atoi(argv[1])) <= 0) {
		fprintf(stderr, "usage: %s N ROOT PODLIST [WAKE_MS]\n", argv[0]);
		return 2;
	}
	root = argv[2];
	if (argc > 4 && (wake_ms = atoi(argv[4])) <= 0) {
		fprintf(stderr, "scaleload: WAKE_MS must be a positive number, got '%s'\n",
			argv[4]);
		return 2;
	}
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL); /* a worker that died ends the run too */
	err = mk_tree(n);
	if (!err)
		err = write_podlist(argv[3], n);
	if (err) {
		fprintf(stderr, "scaleload: setup failed: %s\n", strerror(-err));
		rm_tree(n);
		return 1;
	}
	w = fork();
	if (w == 0)
		run_worker(n);
	while (!stop && waitpid(w, &status, WNOHANG) == 0)
		pause();
	kill(w, SIGKILL);
	waitpid(w, &status, 0);
	rm_tree(n);
	return 0;
}
