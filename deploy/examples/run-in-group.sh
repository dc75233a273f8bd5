#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run a command in cgroup NAME (created if missing), for the README's quick start: the groups
# deploy/examples/bare-metal.json names are kqos-ls and kqos-be.
#   sudo deploy/examples/run-in-group.sh kqos-be stress-ng --cpu 2
# cgroup v2: /sys/fs/cgroup/NAME. v1 or hybrid: NAME in the cpu, cpuacct and cpuset
# controllers (cpuset.cpus and cpuset.mems copied from the root, as v1 wants).
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 NAME COMMAND [ARG...]" >&2; exit 2; }
name=$1
shift
cg=${CGROUP_ROOT:-/sys/fs/cgroup}

if [ -e "$cg/cgroup.controllers" ]; then
	mkdir -p "$cg/$name"
	echo $$ >"$cg/$name/cgroup.procs"
else
	for c in cpu cpuacct cpuset; do
		[ -d "$cg/$c" ] || continue
		mkdir -p "$cg/$c/$name"
		if [ "$c" = cpuset ]; then
			[ -s "$cg/$c/$name/cpuset.cpus" ] || cat "$cg/$c/cpuset.cpus" >"$cg/$c/$name/cpuset.cpus"
			[ -s "$cg/$c/$name/cpuset.mems" ] || cat "$cg/$c/cpuset.mems" >"$cg/$c/$name/cpuset.mems"
		fi
		echo $$ >"$cg/$c/$name/cgroup.procs"
	done
fi
exec "$@"
