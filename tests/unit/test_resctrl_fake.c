// SPDX-License-Identifier: GPL-2.0
/* The fake tree per profile: capabilities, schemata round trips, the §1.5 rejection table. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "resctrl.h"
#include "resctrl_fake.h"

static struct resctrl_fake *fake;
static struct resctrl *rc;
static int root_fd = -1;

static void open_profile(const char *profile)
{
	cr_assert_eq(resctrl_fake__new(profile, &fake), 0, "profile %s", profile);
	cr_assert_eq(resctrl_fake__open(fake, &rc), 0, "profile %s", profile);
	root_fd = open(resctrl_fake__root(fake), O_RDONLY | O_DIRECTORY);
	cr_assert_geq(root_fd, 0);
}

static void close_profile(void)
{
	if (root_fd >= 0)
		close(root_fd);
	root_fd = -1;
	resctrl_close(rc);
	resctrl_fake__free(fake);
	rc = NULL;
	fake = NULL;
}

static void setup(void)
{
	open_profile(NULL);
	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
}

static void read_file(const char *rel, char *buf, size_t len)
{
	char path[4096];
	size_t n;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", resctrl_fake__root(fake), rel);
	f = fopen(path, "r");
	cr_assert_not_null(f, "%s", rel);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

static const char *status(void)
{
	static char buf[512];
	size_t n;

	read_file("info/last_cmd_status", buf, sizeof(buf));
	n = strlen(buf);
	if (n && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return buf;
}

/* A raw write through the fake backend, as `echo -n "$buf" > kqos-BE/schemata` would do. */
static int raw_write(const char *path, const char *buf)
{
	return resctrl_fake_backend.write(fake, root_fd, path, buf, strlen(buf));
}

Test(resctrl_fake, every_profile_opens_and_round_trips_root_schemata)
{
	const char *const *p;

	for (p = resctrl_fake_profiles; *p; p++) {
		struct resctrl_schemata s, again;
		char buf[4096], text[4096];

		open_profile(*p);
		if (!resctrl_caps(rc)->has_alloc) {
			cr_expect_eq(resctrl_schemata_read(rc, NULL, &s), -ENOENT, "%s", *p);
			close_profile();
			continue;
		}
		read_file("schemata", text, sizeof(text));
		cr_assert_eq(resctrl_schemata_parse(text, &s), 0, "%s: '%s'", *p, text);
		cr_assert_gt(resctrl_schemata_format(&s, NULL, buf, sizeof(buf)), 0, "%s", *p);
		cr_assert_eq(resctrl_schemata_parse(buf, &again), 0, "%s: '%s'", *p, buf);
		cr_assert_eq(memcmp(&s, &again, sizeof(s)), 0, "%s: '%s' vs '%s'", *p, text, buf);
		/* the formatted text is accepted by the kernel rules and changes nothing */
		cr_assert_eq(raw_write("schemata", buf), 0, "%s: %s", *p, status());
		cr_assert_eq(resctrl_schemata_write(rc, NULL, &s), 0, "%s", *p);
		close_profile();
	}
}

Test(resctrl_fake, capabilities_per_profile)
{
	const struct resctrl_caps *c;

	open_profile("skx2s");
	c = resctrl_caps(rc);
	cr_assert(c->has_alloc && c->has_mon && !c->is_amd && !c->has_l3_cdp);
	cr_assert_eq(c->num_closids, 16);
	cr_assert_eq(c->num_rmids, 176);
	cr_assert_eq(c->nr_domains, 2);
	cr_assert_eq(c->domain_ids[1], 1);
	cr_assert_eq(c->res[RESCTRL_RES_L3].cbm_mask, 0x7ff);
	cr_assert_eq(c->res[RESCTRL_RES_L3].cbm_len, 11);
	cr_assert_eq(c->res[RESCTRL_RES_MB].mb_unit, RESCTRL_MB_PERCENT);
	cr_assert_eq(c->res[RESCTRL_RES_MB].min_bw, 10);
	cr_assert(c->has_event[RESCTRL_EV_LLC_OCCUPANCY] && c->has_event[RESCTRL_EV_MBM_LOCAL]);
	close_profile();

	open_profile("cdp");
	c = resctrl_caps(rc);
	cr_assert(c->has_l3_cdp);
	cr_assert_not(c->res[RESCTRL_RES_L3].is_present);
	cr_assert_eq(c->num_closids, 8, "CDP halves the CLOSIDs (16 -> 8)");
	close_profile();

	open_profile("mbps");
	c = resctrl_caps(rc);
	cr_assert(c->has_mba_mbps);
	cr_assert_eq(c->res[RESCTRL_RES_MB].mb_unit, RESCTRL_MB_MBPS);
	close_profile();

	open_profile("amd");
	c = resctrl_caps(rc);
	cr_assert(c->is_amd);
	cr_assert_eq(c->res[RESCTRL_RES_MB].mb_unit, RESCTRL_MB_AMD);
	cr_assert_eq(c->res[RESCTRL_RES_MB].max_bw, 2048);
	cr_assert(c->res[RESCTRL_RES_SMBA].is_present);
	cr_assert(c->res[RESCTRL_RES_L3].is_sparse);
	cr_assert_eq(c->res[RESCTRL_RES_L3].min_cbm_bits, 0);
	close_profile();

	open_profile("mon-only");
	c = resctrl_caps(rc);
	cr_assert(!c->has_alloc && c->has_mon);
	cr_assert_eq(c->num_closids, 0);
	cr_assert_eq(c->nr_domains, 2, "domains come from mon_data");
	close_profile();

	open_profile("mb8");
	cr_assert_eq(resctrl_caps(rc)->num_closids, 8, "minimum over L3 (16) and MB (8)");
	close_profile();
}

Test(resctrl_fake, open_fails_without_resctrl)
{
	struct resctrl *r = NULL;

	cr_assert_eq(resctrl_open("/nonexistent-resctrl", &r), -ENOENT);
	cr_assert_eq(resctrl_open("/proc/self", &r), -ENOENT, "no info/ there");
	resctrl_close(NULL);
	resctrl_fake__free(NULL);
	cr_assert_eq(resctrl_fake__new("nope", &fake), -EINVAL);
}

struct reject {
	const char *buf;
	int err;
	const char *status;
};

Test(resctrl_fake, rejects_like_the_kernel, .init = setup, .fini = close_profile)
{
	static const struct reject cases[] = {
		{ "L3\n", -EINVAL, "Missing ':'" },
		{ "L3:\n", -EINVAL, "Missing 'L3' value" },
		{ "L4:0=1\n", -EINVAL, "Unknown or unsupported resource name 'L4'" },
		{ "L2:0=1\n", -EINVAL, "Unknown or unsupported resource name 'L2'" },
		{ "L3:x=7\n", -EINVAL, "Missing '=' or non-numeric domain" },
		{ "L3:7\n", -EINVAL, "Missing '=' or non-numeric domain" },
		{ "L3:5=7\n", -EINVAL, "ok" },
		{ "L3:0=7;0=f\n", -EINVAL, "Duplicate domain 0" },
		{ "L3:0=xyz\n", -EINVAL, "Non-hex character in the mask xyz" },
		{ "L3:0=0\n", -EINVAL, "Mask out of range" },
		{ "L3:0=fff\n", -EINVAL, "Mask out of range" },
		{ "L3:0=f7\n", -EINVAL, "The mask f7 has non-consecutive 1-bits" },
		{ "MB:0=abc\n", -EINVAL, "Invalid MB value abc" },
		{ "MB:0=5\n", -EINVAL, "MB value 5 out of range [10,100]" },
		{ "L3:0=0x3c;1=3\n", 0, "ok" },
		{ "    L3:1=7ff;\n  MB:0=25\n", 0, "ok" },
	};
	char sch[512];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_expect_eq(raw_write("kqos-BE/schemata", cases[i].buf), cases[i].err, "'%s'",
			     cases[i].buf);
		cr_expect_str_eq(status(), cases[i].status, "'%s'", cases[i].buf);
	}
	read_file("kqos-BE/schemata", sch, sizeof(sch));
	cr_assert_str_eq(sch, "    L3:0=3c;1=7ff\n    MB:0=30;1=100\n");
}

Test(resctrl_fake, no_newline_leaves_status_untouched, .init = setup, .fini = close_profile)
{
	cr_assert_eq(raw_write("kqos-BE/schemata", "L3\n"), -EINVAL);
	cr_assert_eq(raw_write("kqos-BE/schemata", "L3:0=f"), -EINVAL);
	cr_assert_str_eq(status(), "Missing ':'");
}

Test(resctrl_fake, failed_write_changes_nothing, .init = setup, .fini = close_profile)
{
	char sch[512];

	cr_assert_eq(raw_write("kqos-BE/schemata", "L3:0=3\nMB:0=5\n"), -EINVAL);
	read_file("kqos-BE/schemata", sch, sizeof(sch));
	cr_assert_str_eq(sch, "    L3:0=7ff;1=7ff\n    MB:0=100;1=100\n");
}

Test(resctrl_fake, library_validates_before_writing, .init = setup, .fini = close_profile)
{
	struct resctrl_schemata s = { 0 };

	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 0, 0xf7);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), -EINVAL);
	cr_assert_str_eq(resctrl_last_status(rc), "The mask f7 has non-consecutive 1-bits");
	cr_assert_str_eq(status(), "ok", "nothing reached the backend");
}

Test(resctrl_fake, legacy_format_and_wording)
{
	struct resctrl_schemata s = { 0 };
	char sch[512];

	open_profile("legacy-fmt");
	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 0, 0x7f);
	resctrl_sline_set(&s.res[RESCTRL_RES_MB], 1, 50);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 1);
	read_file("kqos-BE/schemata", sch, sizeof(sch));
	cr_assert_str_eq(sch, "L3:0=07f;1=7ff\nMB:0=100;1= 50\n");
	cr_assert_eq(resctrl_schemata_read(rc, "BE", &s), 0);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 0, "padded values compare equal");
	cr_assert_eq(raw_write("kqos-BE/schemata", "L3:0=f7\n"), -EINVAL);
	cr_assert_str_eq(status(), "mask f7 has non-consecutive 1-bits");
	close_profile();
}

Test(resctrl_fake, cdp_and_amd_lines)
{
	struct resctrl_schemata s = { 0 };
	const struct resctrl_caps *c;
	uint64_t v;

	open_profile("cdp");
	c = resctrl_caps(rc);
	cr_assert_eq(resctrl_group_create(rc, "LS"), 0);
	cr_assert_eq(resctrl_schemata_set_all(&s, c, RESCTRL_RES_L3DATA, 0x3c), 0);
	cr_assert_eq(resctrl_schemata_write(rc, "LS", &s), 1);
	cr_assert_eq(resctrl_schemata_read(rc, "LS", &s), 0);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_L3DATA], 1, &v), 0);
	cr_assert_eq(v, 0x3c);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_L3CODE], 1, &v), 0);
	cr_assert_eq(v, 0x7ff);
	memset(&s, 0, sizeof(s));
	resctrl_sline_set(&s.res[RESCTRL_RES_L3], 0, 0xf);
	cr_assert_eq(resctrl_schemata_write(rc, "LS", &s), -EINVAL, "no plain L3 under CDP");
	close_profile();

	open_profile("amd");
	c = resctrl_caps(rc);
	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	memset(&s, 0, sizeof(s));
	cr_assert_eq(resctrl_mb_from_pct(&c->res[RESCTRL_RES_MB], 20, &v), 0);
	cr_assert_eq(resctrl_schemata_set_all(&s, c, RESCTRL_RES_MB, v), 0);
	cr_assert_eq(resctrl_schemata_set_all(&s, c, RESCTRL_RES_SMBA, 16), 0);
	/* sparse masks and empty masks are legal on AMD */
	cr_assert_eq(resctrl_schemata_set_all(&s, c, RESCTRL_RES_L3, 0xf0f), 0);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 1, "%s", resctrl_last_status(rc));
	cr_assert_eq(raw_write("kqos-BE/schemata", "L3:1=0\n"), 0, "%s", status());
	cr_assert_eq(raw_write("kqos-BE/schemata", "MB:0=2049\n"), -EINVAL);
	cr_assert_str_eq(status(), "MB value 2049 out of range [0,2048]");
	cr_assert_eq(resctrl_schemata_read(rc, "BE", &s), 0);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_MB], 0, &v), 0);
	cr_assert_eq(v, 32);
	close_profile();
}

Test(resctrl_fake, mbps_passes_values_through)
{
	struct resctrl_schemata s = { 0 };
	uint64_t v;

	open_profile("mbps");
	cr_assert_eq(resctrl_group_create(rc, "BE"), 0);
	cr_assert_eq(resctrl_schemata_read(rc, "BE", &s), 0);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_MB], 0, &v), 0);
	cr_assert_eq(v, 4294967295ULL, "new groups start unlimited");
	memset(&s, 0, sizeof(s));
	resctrl_sline_set(&s.res[RESCTRL_RES_MB], 0, 1234);
	cr_assert_eq(resctrl_schemata_write(rc, "BE", &s), 1);
	cr_assert_eq(resctrl_schemata_read(rc, "BE", &s), 0);
	cr_assert_eq(resctrl_sline_get(&s.res[RESCTRL_RES_MB], 0, &v), 0);
	cr_assert_eq(v, 1234);
	close_profile();
}

Test(resctrl_fake, tasks_comma_list_stops_at_first_bad_tid, .init = setup, .fini = close_profile)
{
	char buf[64], tasks[256];
	pid_t me = getpid();

	/* pid 999999999 cannot exist (pid_max is at most 2^22) */
	snprintf(buf, sizeof(buf), "%d,999999999,1", (int)me);
	cr_assert_eq(raw_write("kqos-BE/tasks", buf), -ESRCH);
	cr_assert_str_eq(status(), "No task 999999999");
	read_file("kqos-BE/tasks", tasks, sizeof(tasks));
	snprintf(buf, sizeof(buf), "%d\n", (int)me);
	cr_assert_str_eq(tasks, buf, "earlier moves stay, later ones never happen");
	cr_assert_eq(raw_write("kqos-BE/tasks", "abc\n"), -EINVAL);
	cr_assert_str_eq(status(), "Task list parsing error pid abc");
}

Test(resctrl_fake, allocation_only_tree, .fini = close_profile)
{
	struct resctrl_mon_value mv;
	struct resctrl *r2;
	char cmd[4200];

	open_profile(NULL);
	/* CAT/MBA without CQM/MBM: the kernel shows no L3_MON and no mon_data */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/info/L3_MON' '%s/mon_data'",
		 resctrl_fake__root(fake), resctrl_fake__root(fake));
	cr_assert_eq(system(cmd), 0);
	cr_assert_eq(resctrl_open(resctrl_fake__root(fake), &r2), 0);
	cr_assert(resctrl_caps(r2)->has_alloc);
	cr_assert_not(resctrl_caps(r2)->has_mon);
	cr_assert_eq(resctrl_caps(r2)->nr_domains, 2);
	cr_assert_eq(resctrl_mon_read(r2, NULL, NULL, RESCTRL_EV_LLC_OCCUPANCY, &mv), -EOPNOTSUPP);
	resctrl_close(r2);
}

Test(resctrl_fake, keep_leaves_the_tree_on_disk)
{
	char root[4096], cmd[4200];

	cr_assert_eq(resctrl_fake__new("amd", &fake), 0);
	snprintf(root, sizeof(root), "%s", resctrl_fake__root(fake));
	resctrl_fake__keep(fake);
	resctrl_fake__free(fake);
	fake = NULL;
	cr_assert_eq(access(root, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

/* --- serving a directory (resctrl_fake__new_dir) ----------------------------------------- */

static void slurp_root(const struct resctrl_fake *f, const char *rel, char *buf, size_t len)
{
	char path[4096];
	size_t n = 0;
	FILE *fp;

	snprintf(path, sizeof(path), "%s/%s", resctrl_fake__root(f), rel);
	fp = fopen(path, "r");
	if (fp) {
		n = fread(buf, 1, len - 1, fp);
		fclose(fp);
	}
	buf[n] = '\0';
}

/* Every profile's tree, served from a directory, is the same resctrl to the library. */
Test(resctrl_fake_dir, every_profile_round_trips)
{
	for (size_t i = 0; resctrl_fake_profiles[i]; i++) {
		const char *name = resctrl_fake_profiles[i];
		struct resctrl *r1, *r2;
		struct resctrl_fake *src, *dup;
		char a[4096], b[4096];

		cr_assert_eq(resctrl_fake__new(name, &src), 0);
		cr_assert_eq(resctrl_fake__new_dir(resctrl_fake__root(src), &dup), 0, "%s", name);
		cr_assert_eq(resctrl_fake__open(src, &r1), 0);
		cr_assert_eq(resctrl_fake__open(dup, &r2), 0, "%s", name);
		cr_assert_eq(memcmp(resctrl_caps(r1), resctrl_caps(r2),
				    sizeof(struct resctrl_caps)),
			     0, "%s: caps differ", name);
		slurp_root(src, "schemata", a, sizeof(a));
		slurp_root(dup, "schemata", b, sizeof(b));
		cr_assert_str_eq(b, a, "%s", name);
		slurp_root(src, "mon_data/mon_L3_01/llc_occupancy", a, sizeof(a));
		slurp_root(dup, "mon_data/mon_L3_01/llc_occupancy", b, sizeof(b));
		cr_assert_str_eq(b, a, "%s", name);
		/* a group made on the copy looks like one made on the profile */
		if (resctrl_caps(r1)->has_alloc) {
			cr_assert_eq(resctrl_group_create(r1, "g"), 0);
			cr_assert_eq(resctrl_group_create(r2, "g"), 0, "%s", name);
			slurp_root(src, "g/schemata", a, sizeof(a));
			slurp_root(dup, "g/schemata", b, sizeof(b));
			cr_assert_str_eq(b, a, "%s", name);
		}
		resctrl_close(r1);
		resctrl_close(r2);
		resctrl_fake__free(dup);
		resctrl_fake__free(src);
	}
}

Test(resctrl_fake_dir, not_a_resctrl_tree)
{
	char dir[] = "/tmp/kqos-notrdt-XXXXXX";
	struct resctrl_fake *f = NULL;

	cr_assert_not_null(mkdtemp(dir));
	cr_assert_eq(resctrl_fake__new_dir(dir, &f), -ENOENT);
	cr_assert_eq(resctrl_fake__new_dir("/nonexistent-kqos", &f), -ENOENT);
	rmdir(dir);
}
