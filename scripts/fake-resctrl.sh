#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Build a fake resctrl root (ecosystem.md §1.10) that stays on disk and print its path, e.g.
#   kqosd --resctrl-root "$(scripts/fake-resctrl.sh amd)"
# Profiles: skx2s (default) cdp mbps amd snc2 mon-only legacy-fmt mb8.
# Outside the tests, writes to the tree are plain file writes: the kernel's rules (rejections,
# CLOSID/RMID limits) apply only through the fake backend (resctrl/resctrl_fake.h).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUTPUT:-$PWD/.output}
make --no-print-directory OUTPUT="$out" "$out/libresctrl.a" >/dev/null
bin=$(mktemp)
trap 'rm -f "$bin"' EXIT
${CC:-cc} -std=gnu11 -Iresctrl -o "$bin" -x c - -x none "$out/libresctrl.a" <<'EOF'
#include <stdio.h>
#include <string.h>

#include "resctrl_fake.h"

int main(int argc, char **argv)
{
	struct resctrl_fake *f;
	int err;

	err = resctrl_fake__new(argc > 1 ? argv[1] : NULL, &f);
	if (err) {
		fprintf(stderr, "fake-resctrl: %s\n", strerror(-err));
		return 1;
	}
	puts(resctrl_fake__root(f));
	resctrl_fake__keep(f);
	resctrl_fake__free(f);
	return 0;
}
EOF
"$bin" "$@"
