#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make style: clang-format (kernel style, 100 columns) over our C, shellcheck over our scripts,
# and the layering rules the include paths cannot enforce (check-layers.sh).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
rc=0
mapfile -t files < <(git ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '^vmlinux/')
if [ ${#files[@]} -gt 0 ]; then
	if ! clang-format --dry-run -Werror "${files[@]}"; then
		echo "style: clang-format differs (fix with: clang-format -i FILE)" >&2
		rc=1
	fi
fi
if command -v shellcheck >/dev/null; then
	mapfile -t sh < <(git ls-files -co --exclude-standard -- '*.sh' .ci/run)
	if [ ${#sh[@]} -gt 0 ] && ! shellcheck -x "${sh[@]}"; then
		rc=1
	fi
else
	echo "style: shellcheck not installed, skipped" >&2
fi
scripts/check-layers.sh || rc=1
[ $rc -eq 0 ] && echo "style: clean (${#files[@]} C files)"
exit $rc
