/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_TESTS_FAULTENV_H
#define KQOS_TESTS_FAULTENV_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * A kqosd of its own for the fault tests (tests/live/test_faults_*.c), on real v1 cgroups that
 * nobody else's kqosd or test sees and that it cannot confuse with anybody else's.
 *
 * The test process moves into a private mount namespace. There a tmpfs at <dir>/root holds
 * the cgroupRoot kqosd is given: cpu, cpuacct and cpuset are bind mounts of the test's own
 * kqos-test-<pid>-top cgroup in each real hierarchy, unified the host's. kqosd sees be1..beN
 * and nothing else: a kubepods tree of another test on this host (which cpu_suppress would take
 * for the besteffort level) stays out of its walk. When the test process dies, its mounts go
 * with the namespace; the cgroups are swept by name (live_sweep_stale()).
 */
#define FAULTENV_MAX_BE	  64
#define FAULTENV_NR_KNOBS 6

enum faultenv_flags {
	FAULTENV_NO_CPUSET = 1 << 0, /* cgroupRoot without the cpuset controller */
};

struct faultenv {
	char dir[64]; /* /tmp/kqos-faults-XXXXXX */
	char root[PATH_MAX]; /* cgroupRoot */
	char state[PATH_MAX]; /* stateDir */
	char cfg[PATH_MAX], errlog[PATH_MAX], sock[PATH_MAX];
	char kqosd[PATH_MAX];
	unsigned int nr_be;
	unsigned int flags;
	pid_t pid; /* the running kqosd, or -1 */
	bool cgroups; /* kqos-test-<pid>-top exists */
	unsigned int nr_mounts;
	char mounts[8][PATH_MAX]; /* to unmount, innermost last */
};

/* The files compared byte for byte: every knob kqos may write on a v1 group. */
struct faultenv_knobs {
	char v[FAULTENV_MAX_BE + 1][FAULTENV_NR_KNOBS][64]; /* [0] is top, [i] be<i> */
};

/*
 * Namespace, cgroups (be<i>: cpu.shares 700+i, quota 50000+100*i, cpuset.cpus "1" for odd i,
 * "0-1" for even), mounts and temp files. 0 or -errno; on error what was made is undone.
 */
int faultenv__new(unsigned int nr_be, unsigned int flags, struct faultenv **ret);
/* Kill kqosd, unmount, remove the cgroups and files. Safe on NULL. */
void faultenv__free(struct faultenv *fe);

/* Mount a tmpfs at the state dir with mount options @opts ("size=8k", "ro"); 0 or -errno. */
int faultenv_mount_state(struct faultenv *fe, const char *opts);
/* Remount the state dir's tmpfs with @opts ("remount,rw" style flags given as mount flags). */
int faultenv_remount_state(struct faultenv *fe, unsigned long flags, const char *opts);

/*
 * The config file, replaced atomically (temp file, rename) so that a reload never reads half
 * of it: interval, stateDir, cgroupRoot, socket, one static BE group "be*"; @slo (a nodeSLO
 * object, "" for none) and @strategies (an object, "" for none) as given; @extra is spliced in
 * as further top-level keys ("" for none). 0 or -errno.
 */
int faultenv_write_cfg(struct faultenv *fe, const char *interval, const char *slo,
		       const char *strategies, const char *extra);
/* The usual enforcing config: cpu_suppress with the kqos @policy ("weight", "idle"). */
int faultenv_write_suppress(struct faultenv *fe, const char *interval, const char *policy,
			    int be_shares, const char *recovery);

/* Start kqosd on the config; with @wait_ms, wait for "kqosd started". The pid, or -1. */
pid_t faultenv_start(struct faultenv *fe, unsigned int wait_ms);
/* SIGTERM and wait: the exit status (128 + signal when killed), or -1. */
int faultenv_stop(struct faultenv *fe);
/* SIGKILL and wait. */
void faultenv_kill(struct faultenv *fe);
/* kqosd is still running (not exited, not a zombie). */
bool faultenv_alive(struct faultenv *fe);

/* A file of be<@i> (0: top) in @ctrl; trailing newline cut. */
void faultenv_read(const struct faultenv *fe, const char *ctrl, unsigned int i, const char *file,
		   char *buf, size_t n);
int faultenv_write(const struct faultenv *fe, const char *ctrl, unsigned int i, const char *file,
		   const char *val);
/* Poll be<@i>'s file until it reads @want or @ms pass. */
bool faultenv_wait_file(const struct faultenv *fe, const char *ctrl, unsigned int i,
			const char *file, const char *want, unsigned int ms);
/* (Re)create be<@i> in every hierarchy with its original values; 0 or -errno. */
int faultenv_add_be(struct faultenv *fe, unsigned int i);
/*
 * be<@i> made again, its values set (cpu.shares @shares, cpuset 0-1) before it matches "be*":
 * made as new<@i> and renamed (cgroup v1 allows it), so that kqosd never sees it half set up.
 */
int faultenv_readd_be(struct faultenv *fe, unsigned int i, const char *shares);
/* Remove be<@i> from every hierarchy (it holds no task). */
int faultenv_remove_be(const struct faultenv *fe, unsigned int i);

/* Every knob of top and each be<i> still present ("" for a removed one). */
void faultenv_knobs_read(const struct faultenv *fe, struct faultenv_knobs *k);
/* Only be<@i>'s (0: top) into @k. */
void faultenv_knobs_read_one(const struct faultenv *fe, unsigned int i, struct faultenv_knobs *k);
/* The first difference as "be3 cpu.shares: '2' != '703'" into @buf; false when equal. */
bool faultenv_knobs_diff(const struct faultenv *fe, const struct faultenv_knobs *a,
			 const struct faultenv_knobs *b, char *buf, size_t n);

/*
 * One request on the snapshot socket: the answer's first line, malloc'd into *@ret (the caller
 * frees it). 0, -ETIMEDOUT after @ms, or -errno.
 */
int faultenv_request(const struct faultenv *fe, const char *req, unsigned int ms, char **ret);
/* Open file descriptors of kqosd, or -1. */
int faultenv_nr_fds(const struct faultenv *fe);
/* The journal's text into @buf ("" when there is none). */
void faultenv_journal(const struct faultenv *fe, char *buf, size_t n);

#endif
