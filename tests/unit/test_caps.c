// SPDX-License-Identifier: GPL-2.0
/* The start-up capability check: which are missing, what stands in for what, the message. */
#include <criterion/criterion.h>
#include <string.h>
#include <linux/capability.h>

#include "caps.h"

#define BIT(c) (1ULL << (c))
#define NEEDED (BIT(CAP_BPF) | BIT(CAP_PERFMON) | BIT(CAP_DAC_READ_SEARCH))

static char buf[512];

Test(caps, the_least_set_is_enough)
{
	cr_assert_eq(caps_missing(NEEDED, false, buf, sizeof(buf)), 0);
	cr_assert_str_empty(buf);
	cr_assert_eq(caps_missing(~0ULL, true, buf, sizeof(buf)), 0);
}

Test(caps, each_missing_one_is_named_with_its_purpose)
{
	static const struct {
		int cap;
		const char *name, *why;
	} one[] = {
		{ CAP_BPF, "CAP_BPF", "load BPF programs" },
		{ CAP_PERFMON, "CAP_PERFMON", "tracing programs" },
		{ CAP_DAC_READ_SEARCH, "CAP_DAC_READ_SEARCH", "open_by_handle_at" },
	};

	for (size_t i = 0; i < sizeof(one) / sizeof(one[0]); i++) {
		cr_assert_eq(caps_missing(NEEDED & ~BIT(one[i].cap), false, buf, sizeof(buf)), 1);
		cr_assert_not_null(strstr(buf, one[i].name), "%s", buf);
		cr_assert_not_null(strstr(buf, one[i].why), "%s", buf);
	}
	cr_assert_eq(caps_missing(0, false, buf, sizeof(buf)), 3);
	cr_assert_not_null(strstr(buf, "CAP_BPF (create maps, load BPF programs), CAP_PERFMON"));
}

Test(caps, sys_admin_stands_in_for_bpf_and_perfmon_only)
{
	cr_assert_eq(caps_missing(BIT(CAP_SYS_ADMIN) | BIT(CAP_DAC_READ_SEARCH), false, buf,
				  sizeof(buf)),
		     0);
	cr_assert_eq(caps_missing(BIT(CAP_SYS_ADMIN), false, buf, sizeof(buf)), 1);
	cr_assert_not_null(strstr(buf, "CAP_DAC_READ_SEARCH"));
}

Test(caps, chown_only_for_a_socket_group)
{
	cr_assert_eq(caps_missing(NEEDED, true, buf, sizeof(buf)), 1);
	cr_assert_not_null(strstr(buf, "CAP_CHOWN"));
	cr_assert_eq(caps_missing(NEEDED | BIT(CAP_CHOWN), true, buf, sizeof(buf)), 0);
}

Test(caps, a_short_buffer_is_cut_not_overrun)
{
	char small[8];

	cr_assert_eq(caps_missing(0, true, small, sizeof(small)), 4);
	cr_assert_eq(strlen(small), sizeof(small) - 1);
}

Test(caps, reads_this_process)
{
	uint64_t eff = 0;

	cr_assert_eq(caps_effective(&eff), 0);
}
