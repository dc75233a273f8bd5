// SPDX-License-Identifier: GPL-2.0
#include <criterion/criterion.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fake_cgroup.h"
#include "cputopo.h"

static char root[] = "/tmp/kqos-sysfs-XXXXXX";
static char *dir;

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/kqos-sysfs-XXXXXX");
	dir = mkdtemp(root);
	cr_assert_not_null(dir);
}

static void teardown(void)
{
	if (dir)
		fake_rmtree(dir);
	dir = NULL;
}

__attribute__((format(printf, 2, 3))) static void put(const char *content, const char *fmt, ...)
{
	char rel[PATH_MAX / 2], path[PATH_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	cr_assert_eq(fake_write_file(path, content), 0, "%s", path);
}

__attribute__((format(printf, 2, 3))) static void put_int(int v, const char *fmt, ...)
{
	char buf[16], rel[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(rel, sizeof(rel), fmt, ap);
	va_end(ap);
	snprintf(buf, sizeof(buf), "%d\n", v);
	put(buf, "%s", rel);
}

/*
 * 2 sockets x 2 cores x 2 threads, Intel-style numbering: cpu = thread * 4 + socket * 2 + core,
 * so the HT pairs are (0,4) (1,5) (2,6) (3,7). NUMA node = socket = L3 id. cpu8 is present but
 * offline.
 */
static void build_two_socket(bool with_node_dir)
{
	static const int level[] = { 1, 1, 2, 3 };
	char sib[16];

	put("0-7\n", "devices/system/cpu/online");
	put("0-8\n", "devices/system/cpu/possible");
	for (int c = 0; c < 8; c++) {
		int socket = (c / 2) % 2, core = c % 2;

		put_int(core, "devices/system/cpu/cpu%d/topology/core_id", c);
		put_int(socket, "devices/system/cpu/cpu%d/topology/physical_package_id", c);
		snprintf(sib, sizeof(sib), "%d,%d\n", c % 4, c % 4 + 4);
		put(sib, "devices/system/cpu/cpu%d/topology/thread_siblings_list", c);
		for (int i = 0; i < 4; i++) {
			put_int(level[i], "devices/system/cpu/cpu%d/cache/index%d/level", c, i);
			put_int(level[i] == 3 ? socket : c % 4,
				"devices/system/cpu/cpu%d/cache/index%d/id", c, i);
		}
		if (!with_node_dir)
			put("", "devices/system/cpu/cpu%d/node%d/online", c, socket);
	}
	/* offline cpu8: garbage in its files must not matter */
	put("garbage", "devices/system/cpu/cpu8/topology/core_id");
	if (with_node_dir) {
		put("0-1,4-5\n", "devices/system/node/node0/cpulist");
		put("2-3,6-7\n", "devices/system/node/node1/cpulist");
		put("0-1\n", "devices/system/node/online");
	}
}

static void check_two_socket(void)
{
	struct topology *t = NULL;
	struct cpumask m, want;
	const struct topo_cpu *c;

	cr_assert_eq(topology__load(dir, &t), 0);
	cr_assert_eq(t->nr_cpus, 8);
	cr_assert_eq(cpumask_count(&t->online), 8);
	cr_assert_eq(t->nr_sockets, 2);
	cr_assert_eq(t->nr_nodes, 2);
	cr_assert_eq(t->nr_cores, 4);
	cr_assert_eq(t->nr_l3, 2);
	cr_assert(t->has_smt);
	c = topology__cpu(t, 6);
	cr_assert_not_null(c);
	cr_assert_eq(c->socket_id, 1);
	cr_assert_eq(c->core_id, 0);
	cr_assert_eq(c->node_id, 1);
	cr_assert_eq(c->l3_id, 1);
	cpulist_parse("2,6", &want);
	cr_assert(cpumask_equal(&c->siblings, &want));
	cr_assert_null(topology__cpu(t, 8));
	topology__node_cpus(t, 0, &m);
	cpulist_parse("0-1,4-5", &want);
	cr_assert(cpumask_equal(&m, &want));
	topology__socket_cpus(t, 1, &m);
	cpulist_parse("2-3,6-7", &want);
	cr_assert(cpumask_equal(&m, &want));
	topology__l3_cpus(t, 1, &m);
	cr_assert(cpumask_equal(&m, &want));
	topology__l3_cpus(t, TOPO_ID_NONE, &m);
	cr_assert(cpumask_empty(&m));
	topology__free(t);
}

Test(topology, two_sockets_ht_numa_l3, .init = setup, .fini = teardown)
{
	build_two_socket(true);
	check_two_socket();
}

Test(topology, numa_from_cpu_node_links, .init = setup, .fini = teardown)
{
	build_two_socket(false);
	check_two_socket();
}

Test(topology, minimal_sysfs_without_numa_or_caches, .init = setup, .fini = teardown)
{
	struct topology *t = NULL;

	put("0-1\n", "devices/system/cpu/online");
	put("0\n", "devices/system/cpu/cpu0/topology/core_id");
	put("0\n", "devices/system/cpu/cpu0/topology/physical_package_id");
	put("1\n", "devices/system/cpu/cpu1/topology/core_id");
	put("0\n", "devices/system/cpu/cpu1/topology/physical_package_id");
	cr_assert_eq(topology__load(dir, &t), 0);
	cr_assert_eq(t->nr_cpus, 2);
	cr_assert_eq(t->nr_nodes, 1);
	cr_assert_eq(t->cpus[1].node_id, 0);
	cr_assert_eq(t->cpus[1].l3_id, TOPO_ID_NONE);
	cr_assert_eq(t->nr_l3, 0);
	cr_assert_eq(t->nr_cores, 2);
	cr_assert_not(t->has_smt);
	cr_assert_eq(cpumask_count(&t->cpus[0].siblings), 1);
	topology__free(t);
}

Test(topology, malformed_and_missing, .init = setup, .fini = teardown)
{
	struct topology *t = NULL;

	cr_assert_eq(topology__load(dir, &t), -ENOENT);
	put("0-1x\n", "devices/system/cpu/online");
	cr_assert_eq(topology__load(dir, &t), -EINVAL);
	put("0\n", "devices/system/cpu/online");
	put("zero\n", "devices/system/cpu/cpu0/topology/core_id");
	cr_assert_eq(topology__load(dir, &t), -EINVAL);
	put("0\n", "devices/system/cpu/cpu0/topology/core_id");
	put("1-\n", "devices/system/cpu/cpu0/topology/thread_siblings_list");
	cr_assert_eq(topology__load(dir, &t), -EINVAL);
	cr_assert_null(t);
	topology__free(NULL);
}

Test(topology, this_host)
{
	struct topology *t = NULL;
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	cr_assert_eq(topology__load(NULL, &t), 0);
	cr_assert_eq((long)t->nr_cpus, n);
	cr_assert_geq(t->nr_sockets, 1);
	cr_assert_geq(t->nr_nodes, 1);
	cr_assert_geq(t->nr_cores, 1);
	for (size_t i = 0; i < t->nr_cpus; i++) {
		cr_assert_geq(t->cpus[i].core_id, 0);
		cr_assert_geq(t->cpus[i].socket_id, 0);
		cr_assert_geq(t->cpus[i].node_id, 0);
		cr_assert(cpumask_test(&t->cpus[i].siblings, (unsigned int)t->cpus[i].cpu));
	}
	topology__free(t);
}

/* ---- cpu_manager_state ---- */

static char state_path[PATH_MAX];

static void put_state(const char *json)
{
	snprintf(state_path, sizeof(state_path), "%s/cpu_manager_state", dir);
	cr_assert_eq(fake_write_file(state_path, json), 0);
}

Test(cpumgr_state, valid_static, .init = setup, .fini = teardown)
{
	struct cpumgr_state *st = NULL;
	struct cpumask m, want;

	put_state("{\"policyName\":\"static\",\"defaultCpuSet\":\"0,2-7\",\"entries\":{"
		  "\"0f1e2d3c-aaaa-bbbb-cccc-0123456789ab\":{\"app\":\"1\",\"side\":\"8-9\"},"
		  "\"11111111-2222-3333-4444-555555555555\":{\"db\":\"10\"}},"
		  "\"checksum\":2764424633}");
	cr_assert_eq(cpumgr_state__load(state_path, &st), 0);
	cr_assert_not_null(st);
	cr_assert_str_eq(st->policy, "static");
	cpulist_parse("0,2-7", &want);
	cr_assert(cpumask_equal(&st->default_cpus, &want));
	cr_assert_eq(st->nr_entries, 3);
	cr_assert_str_eq(st->entries[0].pod_uid, "0f1e2d3c-aaaa-bbbb-cccc-0123456789ab");
	cr_assert_str_eq(st->entries[0].container, "app");
	cr_assert_str_eq(st->entries[1].container, "side");
	cr_assert_str_eq(st->entries[2].container, "db");
	cr_assert(st->has_checksum);
	cr_assert_eq(st->checksum, 2764424633ULL);
	cpumgr_state__exclusive_cpus(st, &m);
	cpulist_parse("1,8-10", &want);
	cr_assert(cpumask_equal(&m, &want));
	cpumgr_state__put(st);
}

Test(cpumgr_state, policy_none_without_entries, .init = setup, .fini = teardown)
{
	struct cpumgr_state *st = NULL;

	put_state("{\"policyName\":\"none\",\"defaultCpuSet\":\"\",\"checksum\":1353318690}\n");
	cr_assert_eq(cpumgr_state__load(state_path, &st), 0);
	cr_assert_str_eq(st->policy, "none");
	cr_assert(cpumask_empty(&st->default_cpus));
	cr_assert_eq(st->nr_entries, 0);
	cpumgr_state__put(st);
}

Test(cpumgr_state, missing_or_empty_is_no_state, .init = setup, .fini = teardown)
{
	struct cpumgr_state *st = (struct cpumgr_state *)1;

	snprintf(state_path, sizeof(state_path), "%s/nope", dir);
	cr_assert_eq(cpumgr_state__load(state_path, &st), 0);
	cr_assert_null(st);
	put_state("");
	cr_assert_eq(cpumgr_state__load(state_path, &st), 0);
	cr_assert_null(st);
	cpumgr_state__put(NULL);
}

Test(cpumgr_state, malformed, .init = setup, .fini = teardown)
{
	static const char *const bad[] = {
		"{",
		"[]",
		"{\"defaultCpuSet\":\"0\"}",
		"{\"policyName\":7,\"defaultCpuSet\":\"0\"}",
		"{\"policyName\":\"static\"}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"3-1\"}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"checksum\":\"x\"}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":[]}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"ab\":\"1\"}}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"ab\":{\"c\":1}}}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"ab\":{\"c\":\"x\"}}}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"../x\":{\"c\":\"1\"}}}",
		"{\"policyName\":\"static\",\"defaultCpuSet\":\"0\",\"entries\":{\"ab\":{\"\":\"1\"}}}",
		"{\"policyName\":\"a\",\"policyName\":\"b\",\"defaultCpuSet\":\"0\"}",
	};
	struct cpumgr_state *st = NULL;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		put_state(bad[i]);
		cr_assert_eq(cpumgr_state__load(state_path, &st), -EINVAL, "accepted: %s", bad[i]);
		cr_assert_null(st);
	}
}
