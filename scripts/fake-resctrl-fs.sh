#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Mount the FUSE resctrl fake (tests/fuse/resctrl_fs.c) so that kqosd runs against it
# unmodified, as it would against the kernel:
#   scripts/fake-resctrl-fs.sh PROFILE MOUNTPOINT   mount (profiles as scripts/fake-resctrl.sh)
#   scripts/fake-resctrl-fs.sh --stop MOUNTPOINT    unmount
# Groups made with mkdir get their files, schemata writes are checked with the kernel's rules
# (info/last_cmd_status), tasks move between groups, CLOSID and RMID limits apply.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUTPUT:-$PWD/.output}
if [ "${1:-}" = "--stop" ]; then
	[ $# -eq 2 ] || { echo "usage: $0 --stop MOUNTPOINT" >&2; exit 2; }
	fusermount3 -u "$2"
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: $0 PROFILE MOUNTPOINT | --stop MOUNTPOINT" >&2; exit 2; }
make --no-print-directory OUTPUT="$out" "$out/tests/fuse/kqos-fake-resctrl-fs" >/dev/null
mkdir -p "$2"
"$out/tests/fuse/kqos-fake-resctrl-fs" "$1" "$2"
# the daemon is up when the mount serves the root's schemata
for _ in $(seq 50); do
	[ -f "$2/schemata" ] && exit 0
	sleep 0.1
done
echo "fake-resctrl-fs: $2 did not come up" >&2
exit 1
