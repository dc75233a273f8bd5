/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KQOS_RESCTRL_RESCTRL_H
#define KQOS_RESCTRL_RESCTRL_H

/*
 * The resctrl library: capabilities from info/, schemata parse/validate/format, kqos-owned
 * control and monitoring groups, task placement and mon_data counters.
 *
 * Conventions: int functions return 0 (or a documented count) or a negative errno. After a
 * failed mutation, resctrl_last_status() holds the text of info/last_cmd_status ("ok" when the
 * kernel left no reason). Group names given to the library never carry the "kqos-" prefix: the
 * library adds it, and it never creates, removes or lists a directory without it. A NULL
 * control group name means the root (default) group. libc only; debug messages go to the
 * callback installed with resctrl_set_print().
 */

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define RESCTRL_DEFAULT_ROOT "/sys/fs/resctrl"
#define RESCTRL_PREFIX	     "kqos-"
#define RESCTRL_MAX_DOMAINS  32
#define RESCTRL_MAX_SUB	     8
#define RESCTRL_NAME_MAX     64
#define RESCTRL_STATUS_LEN   512

/* --- logging ------------------------------------------------------------------------------ */

typedef int (*resctrl_print_fn_t)(const char *fmt, va_list ap);

/* Debug-level only; NULL silences the library (the default). Returns the previous callback. */
resctrl_print_fn_t resctrl_set_print(resctrl_print_fn_t fn);

/* --- resources and capabilities ----------------------------------------------------------- */

enum resctrl_res {
	RESCTRL_RES_L3,
	RESCTRL_RES_L3CODE,
	RESCTRL_RES_L3DATA,
	RESCTRL_RES_L2,
	RESCTRL_RES_L2CODE,
	RESCTRL_RES_L2DATA,
	RESCTRL_RES_MB,
	RESCTRL_RES_SMBA,
	RESCTRL_RES_MAX,
};

/* Units of MB/SMBA values. */
enum resctrl_mb_unit {
	RESCTRL_MB_NONE,
	RESCTRL_MB_PERCENT, /* Intel: min_bandwidth..100, rounded up to bandwidth_gran */
	RESCTRL_MB_MBPS, /* mount -o mba_MBps: MiB/s, any u32 */
	RESCTRL_MB_AMD, /* multiples of 1/8 GB/s, max 2048 (= unlimited) */
};

struct resctrl_res_info {
	bool is_present;
	bool is_cache; /* CBM resource (L3*, L2*) vs bandwidth (MB, SMBA) */
	unsigned int num_closids; /* as shown in info/<res>/num_closids (CDP already halved) */
	/* cache resources */
	uint64_t cbm_mask;
	unsigned int cbm_len; /* bit length of cbm_mask */
	unsigned int min_cbm_bits;
	uint64_t shareable_bits;
	bool is_sparse; /* info/<res>/sparse_masks = 1 */
	/* bandwidth resources */
	unsigned int min_bw;
	unsigned int bw_gran;
	unsigned int max_bw; /* 100, 2048 (AMD) or UINT32_MAX (MBps) */
	bool is_delay_linear;
	enum resctrl_mb_unit mb_unit;
};

enum resctrl_event {
	RESCTRL_EV_LLC_OCCUPANCY,
	RESCTRL_EV_MBM_TOTAL,
	RESCTRL_EV_MBM_LOCAL,
	RESCTRL_EV_MAX,
};

struct resctrl_caps {
	bool has_alloc; /* at least one allocation resource */
	bool has_mon; /* info/L3_MON present */
	bool has_l3_cdp; /* L3CODE + L3DATA */
	bool has_l2_cdp;
	bool is_amd; /* rule in docs/resctrl.md: MB min_bandwidth 0 + gran 1, or SMBA */
	bool has_mba_mbps; /* root has mba_MBps_event */
	bool has_event[RESCTRL_EV_MAX];
	struct resctrl_res_info res[RESCTRL_RES_MAX];
	unsigned int num_closids; /* usable: minimum over present allocation resources */
	unsigned int num_rmids;
	uint64_t max_threshold_occupancy;
	/* L3 cache ids: from the root schemata, else from mon_data/mon_L3_XX */
	unsigned int nr_domains;
	unsigned int domain_ids[RESCTRL_MAX_DOMAINS];
};

const char *resctrl_res_name(enum resctrl_res res);
/* "L3", "  MB", "L3CODE" (whitespace ignored) -> res; -ENOENT if unknown. */
int resctrl_res_from_name(const char *name, size_t len, enum resctrl_res *ret);
const char *resctrl_event_name(enum resctrl_event ev);

/*
 * Read info/ under a directory fd and fill caps. Pure reads, no handle: the fake uses it too.
 * -ENOENT if there is no info/ directory (resctrl not mounted there).
 */
int resctrl_caps_read(int root_fd, struct resctrl_caps *ret);

/* --- backend: every mutation goes through these ------------------------------------------- */

/*
 * Paths are relative to the root ("kqos-BE/schemata"). Each op returns 0 or -errno and, like
 * the kernel, leaves a reason in info/last_cmd_status on failure. write must be one write().
 */
struct resctrl_backend_ops {
	const char *name;
	int (*write)(void *ctx, int root_fd, const char *path, const char *buf, size_t len);
	int (*mkdir)(void *ctx, int root_fd, const char *path);
	int (*rmdir)(void *ctx, int root_fd, const char *path);
};

extern const struct resctrl_backend_ops resctrl_real_backend;

/* --- handle ------------------------------------------------------------------------------- */

struct resctrl;

/* root NULL = RESCTRL_DEFAULT_ROOT. -ENOENT when resctrl is not mounted there. */
int resctrl_open(const char *root, struct resctrl **ret);
/* The same with another backend (ctx is passed to every op). */
int resctrl_open_backend(const char *root, const struct resctrl_backend_ops *ops, void *ctx,
			 struct resctrl **ret);
void resctrl_close(struct resctrl *r); /* NULL-safe */

/* Borrowed, valid until resctrl_close(). */
const struct resctrl_caps *resctrl_caps(const struct resctrl *r);
const char *resctrl_root(const struct resctrl *r);
/* info/last_cmd_status after the last failed mutation ("" if none); valid until the next call. */
const char *resctrl_last_status(const struct resctrl *r);

/*
 * Advisory flock() on the root directory, as the kernel documentation asks: shared for walks,
 * exclusive for read-modify-write. Retries LOCK_NB until timeout_ms (-1 = forever);
 * -ETIMEDOUT when another holder keeps it.
 */
int resctrl_lock(struct resctrl *r, bool is_exclusive, int timeout_ms);
void resctrl_unlock(struct resctrl *r);

/* --- schemata ----------------------------------------------------------------------------- */

struct resctrl_sline {
	unsigned int nr; /* 0 = resource absent */
	unsigned int ids[RESCTRL_MAX_DOMAINS];
	uint64_t vals[RESCTRL_MAX_DOMAINS];
};

struct resctrl_schemata {
	struct resctrl_sline res[RESCTRL_RES_MAX];
};

/*
 * Pure parsers. Accept padded names ("    L3:"), zero-padded CBMs ("07f"), space-padded numbers
 * ("MB:1=  16"), a trailing ';'. Unknown resources are skipped. -EINVAL on malformed input.
 */
int resctrl_schemata_parse(const char *buf, struct resctrl_schemata *ret);

/*
 * Format the lines of want whose values differ from cur (cur NULL = every line of want). Every
 * line ends with '\n'. Returns the length (0 = nothing to write), -ENOSPC if len is too small.
 */
int resctrl_schemata_format(const struct resctrl_schemata *want, const struct resctrl_schemata *cur,
			    char *buf, size_t len);

/* Value lookup; -ENOENT if the resource or id is absent. */
int resctrl_sline_get(const struct resctrl_sline *l, unsigned int id, uint64_t *ret);
/* Set (or add) one domain. -E2BIG when RESCTRL_MAX_DOMAINS are used. */
int resctrl_sline_set(struct resctrl_sline *l, unsigned int id, uint64_t val);

/*
 * The kernel's checks, with its last_cmd_status text in msg (may be NULL):
 * CBM: mask range, contiguity unless sparse, min_cbm_bits; MB: range (percent/AMD).
 * resctrl_check_mb returns the kernel's rounded-up value in ret_val (may be NULL).
 */
int resctrl_check_cbm(const struct resctrl_res_info *ri, uint64_t cbm, char *msg, size_t len);
int resctrl_check_mb(const struct resctrl_res_info *ri, uint64_t bw, uint64_t *ret_val, char *msg,
		     size_t len);
/* Every line of s against caps: resource present, domain known, value valid. */
int resctrl_schemata_validate(const struct resctrl_caps *caps, const struct resctrl_schemata *s,
			      char *msg, size_t len);

/*
 * koordinator's CAT formula: ways = bit length of cbm_mask, start = ceil(ways*start_pct/100),
 * end = ceil(ways*end_pct/100), mask = 2^end - 2^start. Needs 0 <= start < end <= 100 and a
 * cbm_mask contiguous from bit 0; -EINVAL otherwise, and -ERANGE if the range rounds to no way.
 */
int resctrl_cbm_from_pct(uint64_t cbm_mask, unsigned int start_pct, unsigned int end_pct,
			 uint64_t *ret_cbm);
/*
 * MB value for pct (1..100): percent -> rounded up to bw_gran (koordinator: multiple of 10),
 * at least min_bw; AMD -> 100 = max_bw (2048), else floor(160*pct/100); MBps -> pct passed
 * through unchanged (the caller gives MiB/s there). -EINVAL for pct out of range.
 */
int resctrl_mb_from_pct(const struct resctrl_res_info *mb, unsigned int pct, uint64_t *ret_val);

/* Fill a line of s for res with the same value on every cache id of caps. */
int resctrl_schemata_set_all(struct resctrl_schemata *s, const struct resctrl_caps *caps,
			     enum resctrl_res res, uint64_t val);

/* Read a control group's schemata (ctrl NULL = root). */
int resctrl_schemata_read(struct resctrl *r, const char *ctrl, struct resctrl_schemata *ret);
/*
 * Validate want, read the current schemata, write only the changed lines in one write().
 * Returns 1 if something was written, 0 if nothing differed, -errno (see last_status).
 */
int resctrl_schemata_write(struct resctrl *r, const char *ctrl,
			   const struct resctrl_schemata *want);

/* --- groups ------------------------------------------------------------------------------- */

/* CTRL_MON group kqos-<name>. -EEXIST, -ENOSPC (Out of CLOSIDs/RMIDs), -EBUSY (RMIDs in limbo). */
int resctrl_group_create(struct resctrl *r, const char *name);
/* rmdir; tasks go back to the root group, MON children disappear. */
int resctrl_group_remove(struct resctrl *r, const char *name);
/* MON group kqos-<name> under ctrl (NULL = root). */
int resctrl_mon_group_create(struct resctrl *r, const char *ctrl, const char *name);
int resctrl_mon_group_remove(struct resctrl *r, const char *ctrl, const char *name);

/*
 * Names (without the prefix) of the kqos- CTRL_MON groups, or of the kqos- MON groups of ctrl
 * (NULL = root). Returns the number found, which may exceed max (only max are stored).
 */
/* @err says the root itself is gone (unmounted, or a FUSE server that died), not one file. */
bool resctrl_err_unreachable(int err);
int resctrl_group_list(struct resctrl *r, char (*names)[RESCTRL_NAME_MAX], size_t max);
int resctrl_mon_group_list(struct resctrl *r, const char *ctrl, char (*names)[RESCTRL_NAME_MAX],
			   size_t max);

/* --- tasks -------------------------------------------------------------------------------- */

struct resctrl_tids {
	pid_t *v;
	size_t nr;
	size_t cap;
};

/* Free v (NULL-safe); the struct can be reused afterwards. */
void resctrl_tids_fini(struct resctrl_tids *t);
/* bsearch in a sorted set (resctrl_tasks_read sorts). */
bool resctrl_tids_contains(const struct resctrl_tids *t, pid_t tid);

/*
 * Read a group's tasks file with one read loop into t (grown as needed, kept between calls),
 * sorted ascending. mon NULL = the control group itself.
 */
int resctrl_tasks_read(struct resctrl *r, const char *ctrl, const char *mon,
		       struct resctrl_tids *t);

struct resctrl_tasks_result {
	size_t nr_moved;
	size_t nr_gone; /* ESRCH: exited between listing and moving */
	int first_err; /* first other failure (0 if none); its text in last_status */
};

/*
 * Move tids into the group, one tid per write() (the kernel stops a list at the first bad tid).
 * ESRCH is counted, not an error. Returns 0 when every tid moved or was gone, else first_err.
 */
int resctrl_tasks_add(struct resctrl *r, const char *ctrl, const char *mon, const pid_t *tids,
		      size_t nr, struct resctrl_tasks_result *ret);

/* --- monitoring --------------------------------------------------------------------------- */

enum resctrl_mon_state {
	RESCTRL_MON_OK,
	RESCTRL_MON_UNAVAILABLE, /* "Unavailable": fresh RMID, BMEC change, AMD idle RMID */
	RESCTRL_MON_ERROR, /* "Error" */
	RESCTRL_MON_UNASSIGNED, /* "Unassigned": ABMC without a counter */
	RESCTRL_MON_MISSING, /* file absent or unparsable */
};

struct resctrl_mon_dom {
	unsigned int id; /* L3 cache id (XX of mon_L3_XX) */
	enum resctrl_mon_state state;
	uint64_t bytes;
	unsigned int nr_sub; /* SNC: mon_sub_L3_YY entries */
	unsigned int sub_ids[RESCTRL_MAX_SUB];
	uint64_t sub_bytes[RESCTRL_MAX_SUB];
	enum resctrl_mon_state sub_state[RESCTRL_MAX_SUB];
};

struct resctrl_mon_value {
	enum resctrl_event ev;
	unsigned int nr;
	struct resctrl_mon_dom dom[RESCTRL_MAX_DOMAINS];
	bool is_sum_valid; /* every domain OK */
	uint64_t sum; /* over OK domains; meaningful only if is_sum_valid */
};

/* Parse one mon_data file's text: 0 + bytes, or -ENODATA with *ret_state set. */
int resctrl_mon_parse(const char *buf, uint64_t *ret_bytes, enum resctrl_mon_state *ret_state);

/*
 * Read ev for every mon_L3_XX of a group (ctrl NULL = root, mon NULL = the control group).
 * Returns 0 if is_sum_valid, -ENODATA if some domain has no value (the rest is still filled),
 * -EOPNOTSUPP if the event is not in mon_features, -ENOENT if the group does not exist.
 */
int resctrl_mon_read(struct resctrl *r, const char *ctrl, const char *mon, enum resctrl_event ev,
		     struct resctrl_mon_value *ret);

/*
 * Wrap- and reset-safe counter delta: cur >= prev is a plain delta; cur < prev is a 64-bit
 * wrap only when prev is within 2^40 of the top and cur below 2^40, otherwise a reset
 * (group recreated, BMEC change) -> -ERANGE. Never returns a huge bogus delta.
 */
int resctrl_counter_delta(uint64_t prev, uint64_t cur, uint64_t *ret_delta);

/* Turns a counter into a rate; zero-initialise before the first sample. */
struct resctrl_rate {
	bool has_prev;
	uint64_t prev_bytes;
	uint64_t prev_ns;
};

/*
 * Feed one reading (state from the file) at now_ns. Returns 0 with bytes/s in ret_bps, or
 * -ENODATA when there is no rate yet: first sample, no value, reset, or time not advancing.
 * A "no value" reading forgets the baseline so the next good reading starts afresh.
 */
int resctrl_rate_update(struct resctrl_rate *rt, enum resctrl_mon_state state, uint64_t bytes,
			uint64_t now_ns, double *ret_bps);

#endif
