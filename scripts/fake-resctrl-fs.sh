#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Mount the FUSE resctrl fake (tests/fuse/resctrl_fs.c) so that kqosd runs against it
# unmodified, as it would against the kernel:
#   scripts/fake-resctrl-fs.sh DIR MOUNTPOINT       serve a copy of any resctrl tree DIR
#   scripts/fake-resctrl-fs.sh PROFILE MOUNTPOINT   a profile of scripts/fake-resctrl.sh
#   scripts/fake-resctrl-fs.sh --stop MOUNTPOINT    unmount
# DIR's info/, root schemata and mon_data are copied (DIR is never written) and the kernel's
# rules follow what its info/ says. Groups made with mkdir get their files, schemata writes are
# checked (info/last_cmd_status), tasks move between groups, CLOSID and RMID limits apply.
# FAKE_RESCTRL_FAULTS=FILE passes --faults FILE: injected EBUSY, ENOSPC, EINVAL... (the
# format is in tests/fuse/resctrl_fs.c and docs/resctrl.md).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${OUTPUT:-$PWD/.output}
if [ "${1:-}" = "--stop" ]; then
	[ $# -eq 2 ] || { echo "usage: $0 --stop MOUNTPOINT" >&2; exit 2; }
	fusermount3 -u "$2"
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: $0 DIR|PROFILE MOUNTPOINT | --stop MOUNTPOINT" >&2; exit 2; }
make --no-print-directory OUTPUT="$out" "$out/tests/fuse/kqos-fake-resctrl-fs" >/dev/null
mkdir -p "$2"
faults=()
[ -n "${FAKE_RESCTRL_FAULTS:-}" ] && faults=(--faults "$FAKE_RESCTRL_FAULTS")
"$out/tests/fuse/kqos-fake-resctrl-fs" "${faults[@]}" "$1" "$2"
# the daemon is up when the mount serves info/ (a monitoring-only tree has no root schemata)
for _ in $(seq 50); do
	[ -f "$2/info/last_cmd_status" ] && exit 0
	sleep 0.1
done
echo "fake-resctrl-fs: $2 did not come up" >&2
exit 1
