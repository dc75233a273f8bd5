// SPDX-License-Identifier: GPL-2.0
/*
 * resctrl info/ files and the root schemata: the parts of one input (split at "\n--\n") are
 * the files below, an empty part is a missing file. The capabilities read from them then judge
 * the schemata and the koordinator percent formulas, as the enforcer does with a live mount.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz.h"
#include "resctrl.h"

static const char *const files[] = {
	"info/L3/num_closids",
	"info/L3/cbm_mask",
	"info/L3/min_cbm_bits",
	"info/L3/shareable_bits",
	"info/L3/sparse_masks",
	"info/MB/num_closids",
	"info/MB/min_bandwidth",
	"info/MB/bandwidth_gran",
	"info/MB/delay_linear",
	"info/L3_MON/mon_features",
	"info/L3_MON/num_rmids",
	"info/L3CODE/num_closids",
	"schemata",
};

#define NR_FILES (sizeof(files) / sizeof(files[0]))

static int root_fd = -1;
/* what each file holds now: most inputs change one part, so most files need no write */
static char *held[NR_FILES];
static size_t held_len[NR_FILES];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_quiet();
	if (fuzz_write_file("info/.keep", "", 0))
		abort();
	root_fd = open(fuzz_tmpdir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (root_fd < 0)
		abort();
	return 0;
}

static void put(unsigned int i, const struct fuzz_part *p)
{
	if (held[i] && held_len[i] == p->size && !memcmp(held[i], p->data, p->size))
		return;
	free(held[i]);
	held[i] = NULL;
	if (!p->size) {
		unlinkat(root_fd, files[i], 0);
		return;
	}
	if (fuzz_write_file(files[i], p->data, p->size))
		abort();
	held[i] = malloc(p->size);
	if (!held[i])
		abort();
	memcpy(held[i], p->data, p->size);
	held_len[i] = p->size;
}

static void judge(const struct resctrl_caps *caps, const struct fuzz_part *text)
{
	const struct resctrl_res_info *l3 = &caps->res[RESCTRL_RES_L3];
	const struct resctrl_res_info *mb = &caps->res[RESCTRL_RES_MB];
	struct resctrl_schemata s;
	char msg[256], *buf = fuzz_cstr(text->data, text->size);
	uint64_t v;

	if (!resctrl_schemata_parse(buf, &s)) {
		resctrl_schemata_validate(caps, &s, msg, sizeof(msg));
		for (unsigned int i = 0; i < s.res[RESCTRL_RES_L3].nr; i++)
			resctrl_check_cbm(l3, s.res[RESCTRL_RES_L3].vals[i], msg, sizeof(msg));
		for (unsigned int i = 0; i < s.res[RESCTRL_RES_MB].nr; i++)
			resctrl_check_mb(mb, s.res[RESCTRL_RES_MB].vals[i], &v, msg, sizeof(msg));
	}
	/* the percentages come from annotations and config: sweep a few edges */
	for (unsigned int pct = 0; pct <= 101; pct += 17) {
		if (!resctrl_cbm_from_pct(l3->cbm_mask, pct / 2, pct, &v) &&
		    (v & ~l3->cbm_mask || !v))
			__builtin_trap();
		if (mb->is_present)
			resctrl_mb_from_pct(mb, pct, &v);
	}
	if (caps->nr_domains && !resctrl_schemata_set_all(&s, caps, RESCTRL_RES_L3, 1))
		resctrl_schemata_validate(caps, &s, msg, sizeof(msg));
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_part part[NR_FILES];
	struct resctrl_caps caps;

	fuzz_split(data, size, part, NR_FILES);
	for (unsigned int i = 0; i < NR_FILES; i++)
		put(i, &part[i]);
	if (resctrl_caps_read(root_fd, &caps))
		__builtin_trap(); /* info/ exists */
	judge(&caps, &part[NR_FILES - 1]);
	return 0;
}
