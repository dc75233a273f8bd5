// SPDX-License-Identifier: GPL-2.0
/* Group life cycle on the fake tree: classes, masks, live tasks, limits, limbo, restart. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "resctrl.h"
#include "resctrl_fake.h"

/* forked children must never hang the run */
TestSuite(resctrl_group, .timeout = 30);

static struct resctrl_fake *fake;
static struct resctrl *rc;
static pid_t child = -1;

static void open_profile(const char *profile)
{
	cr_assert_eq(resctrl_fake__new(profile, &fake), 0, "profile %s", profile);
	cr_assert_eq(resctrl_fake__open(fake, &rc), 0, "profile %s", profile);
}

static void setup(void)
{
	open_profile(NULL);
}

static void teardown(void)
{
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	child = -1;
	resctrl_close(rc);
	resctrl_fake__free(fake);
	rc = NULL;
	fake = NULL;
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	/* the child must not reach a cr_assert: with --full-stats it reports and blocks */
	if (!pid) {
		pause();
		_exit(0);
	}
	cr_assert_geq(pid, 0);
	return pid;
}

/* A pid that certainly does not exist any more. */
static pid_t dead_pid(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	cr_assert_geq(pid, 0);
	waitpid(pid, NULL, 0);
	return pid;
}

static bool listed(char (*names)[RESCTRL_NAME_MAX], int nr, const char *name)
{
	int i;

	for (i = 0; i < nr; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

Test(resctrl_group, class_life_cycle, .init = setup, .fini = teardown)
{
	static const char *const classes[] = { "LSR", "LS", "BE" };
	const struct resctrl_caps *c = resctrl_caps(rc);
	struct resctrl_tasks_result res;
	struct resctrl_tids tids = { 0 };
	struct resctrl_schemata s = { 0 };
	char names[8][RESCTRL_NAME_MAX];
	struct resctrl_mon_value mv;
	uint64_t cbm, v;
	pid_t batch[2];
	size_t i;

	for (i = 0; i < 3; i++)
		cr_assert_eq(resctrl_group_create(rc, classes[i]), 0, "%s", classes[i]);
	cr_assert_eq(resctrl_group_create(rc, "BE"), -EEXIST);
	/* somebody else's group: never listed, never touched */
	cr_assert_eq(resctrl_fake_backend.mkdir(fake, -1, "COS1"), 0);
	cr_assert_eq(resctrl_group_list(rc, names, 8), 3);
	for (i = 0; i < 3; i++)
		cr_assert(listed(names, 3, classes[i]), "%s", classes[i]);

	/* BE: koordinator default L3 0-30 %, MB 25 % (rounded to 30 by the kernel) */
	cr_assert_eq(resctrl_cbm_from_pct(c->res[RESCTRL_RES_L3].cbm_mask, 0, 30, &cbm), 0);
	cr_assert_eq(resctrl_schemata_set_all(&s, c, RESCTRL_RES_L3, cbm), 0);
	cr_assert_eq(resctrl_mb_from_pct(&c->res[RESCTRL_RES_MB], 25, &v), 0);
	cr_assert_eq(resctrl_schemata_set_all(&s, c, RESCTRL_RES_MB, v), 0);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 1, "%s", resctrl_last_status(rc));
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 0, "second write must be a no-op");
	cr_assert_eq(resctrl_schemata_read(rc, "BE", &s), 0);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_L3], 1, &v), 0);
	cr_assert_eq(v, 0xf);

	/* tasks: a live child moves, an exited one is counted, not fatal */
	child = spawn_sleeper();
	batch[0] = child;
	batch[1] = dead_pid();
	cr_assert_eq(resctrl_tasks_add(rc, "BE", NULL, batch, 2, &res), 0);
	cr_assert_eq(res.nr_moved, 1);
	cr_assert_eq(res.nr_gone, 1);
	cr_assert_eq(resctrl_tasks_read(rc, "BE", NULL, &tids), 0);
	cr_assert_eq(tids.nr, 1);
	cr_assert(resctrl_tids_contains(&tids, child));

	/* a per-pod MON group inside BE; the CTRL_MON group still lists the task */
	cr_assert_eq(resctrl_mon_group_create(rc, "BE", "pod1"), 0);
	cr_assert_eq(resctrl_tasks_add(rc, "BE", "pod1", &child, 1, &res), 0);
	cr_assert_eq(resctrl_tasks_read(rc, "BE", "pod1", &tids), 0);
	cr_assert(resctrl_tids_contains(&tids, child));
	cr_assert_eq(resctrl_tasks_read(rc, "BE", NULL, &tids), 0);
	cr_assert(resctrl_tids_contains(&tids, child));
	cr_assert_eq(resctrl_mon_group_list(rc, "BE", names, 8), 1);
	cr_assert_str_eq(names[0], "pod1");

	/* monitoring of the class group */
	cr_assert_eq(resctrl_fake__set_occupancy(fake, "kqos-BE/mon_groups/kqos-pod1", 0, 4096), 0);
	cr_assert_eq(resctrl_mon_read(rc, "BE", NULL, RESCTRL_EV_LLC_OCCUPANCY, &mv), 0);
	cr_assert_eq(mv.sum, 4096);

	/* delete: the task falls back to the root group */
	cr_assert_eq(resctrl_group_remove(rc, "BE"), 0);
	cr_assert_eq(resctrl_tasks_read(rc, NULL, NULL, &tids), 0);
	cr_assert(resctrl_tids_contains(&tids, child));
	cr_assert_eq(resctrl_group_remove(rc, "BE"), -ENOENT);
	cr_assert_eq(resctrl_group_list(rc, names, 8), 2);
	resctrl_tids_fini(&tids);
	resctrl_tids_fini(&tids);
}

Test(resctrl_group, recovers_after_restart, .init = setup, .fini = teardown)
{
	char names[4][RESCTRL_NAME_MAX];
	struct resctrl_schemata s = { 0 };
	uint64_t v;

	cr_assert_eq(resctrl_group_create(rc, "LS"), 0);
	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "pod-a"), 0);
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 0, 0x3c);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 1);
	resctrl_close(rc);
	rc = NULL;

	cr_assert_eq(resctrl_fake__open(fake, &rc), 0);
	cr_assert_eq(resctrl_group_list(rc, names, 4), 2);
	cr_assert(listed(names, 2, "LS") && listed(names, 2, "BE"));
	cr_assert_eq(resctrl_mon_group_list(rc, "LS", names, 4), 1);
	cr_assert_str_eq(names[0], "pod-a");
	cr_assert_eq(resctrl_schemata_read(rc, "BE", &s), 0);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_L3], 0, &v), 0);
	cr_assert_eq(v, 0x3c);
	/* list reports the full count even when the caller's array is short */
	cr_assert_eq(resctrl_group_list(rc, names, 1), 2);
}

Test(resctrl_group, mon_group_cannot_take_foreign_task, .init = setup, .fini = teardown)
{
	struct resctrl_tasks_result res;

	child = spawn_sleeper();
	cr_assert_eq(resctrl_group_create(rc, "LS"), 0);
	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "pod1"), 0);
	cr_assert_eq(resctrl_tasks_add(rc, "BE", NULL, &child, 1, &res), 0);
	cr_assert_eq(resctrl_tasks_add(rc, "LS", "pod1", &child, 1, &res), -EINVAL);
	cr_assert_eq(res.first_err, -EINVAL);
	cr_assert_eq(res.nr_moved, 0);
	cr_assert_str_eq(resctrl_last_status(rc), "Can't move task to different control group");
}

Test(resctrl_group, unknown_task_is_esrch_with_status, .init = setup, .fini = teardown)
{
	struct resctrl_tasks_result res;
	char want[64];
	pid_t pid = dead_pid();

	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_tasks_add(rc, "BE", NULL, &pid, 1, &res), 0);
	cr_assert_eq(res.nr_gone, 1);
	snprintf(want, sizeof(want), "No task %d", (int)pid);
	cr_assert_str_eq(resctrl_last_status(rc), want);
}

Test(resctrl_group, reads_thousands_of_tids, .init = setup, .fini = teardown)
{
	struct resctrl_tids tids = { 0 };
	char path[4096];
	FILE *f;
	int i;

	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	snprintf(path, sizeof(path), "%s/kqos-BE/tasks", resctrl_fake__root(fake));
	f = fopen(path, "w");
	cr_assert_not_null(f);
	for (i = 20000; i > 0; i -= 4)
		fprintf(f, "%d\n", i);
	fclose(f);
	cr_assert_eq(resctrl_tasks_read(rc, "BE", NULL, &tids), 0);
	cr_assert_eq(tids.nr, 5000);
	cr_assert_eq(tids.v[0], 4);
	cr_assert_eq(tids.v[4999], 20000);
	cr_assert(resctrl_tids_contains(&tids, 8000));
	cr_assert_not(resctrl_tids_contains(&tids, 8001));
	resctrl_tids_fini(&tids);
}

static void fill_closids(const char *profile, unsigned int usable)
{
	char name[16];
	unsigned int i;

	open_profile(profile);
	cr_assert_eq(resctrl_caps(rc)->num_closids, usable, "%s", profile);
	/* the root group holds CLOSID 0 */
	for (i = 1; i < usable; i++) {
		snprintf(name, sizeof(name), "g%u", i);
		cr_assert_eq(resctrl_group_create(rc, name), 0, "%s: %s: %s", profile, name,
			     resctrl_last_status(rc));
	}
	cr_assert_eq(resctrl_group_create(rc, "one-too-many"), -ENOSPC, "%s", profile);
	cr_assert_str_eq(resctrl_last_status(rc), "Out of CLOSIDs");
	cr_assert_eq(resctrl_group_remove(rc, "g1"), 0);
	resctrl_fake__age_limbo(fake);
	cr_assert_eq(resctrl_group_create(rc, "one-too-many"), 0, "%s", profile);
	teardown();
}

Test(resctrl_group, closid_limit_skx2s_cdp_mb8)
{
	fill_closids("skx2s", 16);
	fill_closids("cdp", 8);
	fill_closids("mb8", 8);
}

Test(resctrl_group, rmid_limit_and_limbo, .init = setup, .fini = teardown)
{
	cr_assert_eq(resctrl_fake__set_num_rmids(fake, 4), 0);
	cr_assert_eq(resctrl_group_create(rc, "LS"), 0);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "a"), 0);
	cr_assert_eq(resctrl_mon_group_create(rc, NULL, "b"), 0);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "c"), -ENOSPC);
	cr_assert_str_eq(resctrl_last_status(rc), "Out of RMIDs");
	cr_assert_eq(resctrl_mon_group_remove(rc, NULL, "b"), 0);
	cr_assert_eq(resctrl_fake__nr_limbo(fake), 1);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "c"), -EBUSY, "freed RMID still dirty");
	cr_assert_str_eq(resctrl_last_status(rc), "Out of RMIDs");
	resctrl_fake__age_limbo(fake);
	cr_assert_eq(resctrl_mon_group_create(rc, "LS", "c"), 0);
	/* removing a CTRL_MON group frees its MON groups' RMIDs too */
	cr_assert_eq(resctrl_group_remove(rc, "LS"), 0);
	cr_assert_eq(resctrl_fake__nr_limbo(fake), 3);
}

Test(resctrl_group, mon_only_refuses_ctrl_groups)
{
	char names[2][RESCTRL_NAME_MAX];

	open_profile("mon-only");
	cr_assert_eq(resctrl_group_create(rc, "BE"), -EPERM);
	cr_assert_eq(resctrl_mon_group_create(rc, NULL, "pod1"), 0);
	cr_assert_eq(resctrl_mon_group_list(rc, NULL, names, 2), 1);
	cr_assert_str_eq(names[0], "pod1");
	teardown();
}

Test(resctrl_group, rejects_bad_names, .init = setup, .fini = teardown)
{
	char longname[RESCTRL_NAME_MAX + 1];

	memset(longname, 'x', RESCTRL_NAME_MAX);
	longname[RESCTRL_NAME_MAX] = '\0';
	cr_assert_eq(resctrl_group_create(rc, ""), -EINVAL);
	cr_assert_eq(resctrl_group_create(rc, "a/b"), -EINVAL);
	cr_assert_eq(resctrl_group_create(rc, ".."), -EINVAL);
	cr_assert_eq(resctrl_group_create(rc, NULL), -EINVAL);
	cr_assert_eq(resctrl_group_create(rc, longname), -EINVAL);
	cr_assert_eq(resctrl_group_remove(rc, NULL), -EINVAL, "never rmdir the root");
}

Test(resctrl_group, flock_shared_and_exclusive, .init = setup, .fini = teardown)
{
	struct resctrl *other;

	cr_assert_eq(resctrl_fake__open(fake, &other), 0);
	cr_assert_eq(resctrl_lock(rc, false, 0), 0);
	cr_assert_eq(resctrl_lock(other, false, 0), 0, "two readers");
	resctrl_unlock(other);
	cr_assert_eq(resctrl_lock(rc, true, 0), 0);
	cr_assert_eq(resctrl_lock(other, false, 50), -ETIMEDOUT);
	resctrl_unlock(rc);
	cr_assert_eq(resctrl_lock(other, true, 50), 0);
	resctrl_unlock(other);
	resctrl_close(other);
}

static int nr_printed;

static int count_print(const char *fmt, va_list ap)
{
	char buf[512];

	vsnprintf(buf, sizeof(buf), fmt, ap);
	cr_assert(strstr(buf, "resctrl"), "%s", buf);
	nr_printed++;
	return 0;
}

Test(resctrl_group, failures_reach_the_print_callback, .init = setup, .fini = teardown)
{
	resctrl_print_fn_t old = resctrl_set_print(count_print);

	nr_printed = 0;
	cr_assert_eq(resctrl_group_remove(rc, "absent"), -ENOENT);
	cr_assert_gt(nr_printed, 0);
	cr_assert_eq(resctrl_set_print(old), count_print);
}

/* The real backend only does syscalls: on a plain directory, writes and mkdir just land. */
Test(resctrl_group, real_backend_does_plain_syscalls, .init = setup, .fini = teardown)
{
	struct resctrl_schemata s = { 0 };
	struct resctrl *real;
	char path[4096], buf[256];
	struct stat st;
	FILE *f;
	size_t n;

	cr_assert_eq(resctrl_open(resctrl_fake__root(fake), &real), 0);
	cr_assert_eq(resctrl_group_create(real, "BE"), 0);
	snprintf(path, sizeof(path), "%s/kqos-BE", resctrl_fake__root(fake));
	cr_assert_eq(stat(path, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	resctrl_sline_set(&s.res[RESCTRL_RES_MB], 1, 50);
	cr_assert_eq(resctrl_schemata_write(real, NULL, &s), 1);
	snprintf(path, sizeof(path), "%s/schemata", resctrl_fake__root(fake));
	f = fopen(path, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	/* a plain file keeps only what was written: the requested domain, newline-terminated */
	cr_assert_str_eq(buf, "MB:1=50\n");
	cr_assert_eq(resctrl_group_remove(real, "BE"), 0);
	resctrl_close(real);
}
