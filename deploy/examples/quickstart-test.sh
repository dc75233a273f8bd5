#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make quickstart-test: the README's quick start as a new user runs it, as root on this host:
# deploy/examples/bare-metal.json as shipped (socket, journal and textfile moved to a temp dir so
# a running agent is not disturbed), an LS and a BE busy loop started with run-in-group.sh,
# kqos-top watching, BE's cpu.shares pushed to 2, and back to its old value after SIGTERM.
# It leaves nothing behind; it refuses to run if kqos-ls or kqos-be already exist (yours).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

OUTPUT=${OUTPUT:-$PWD/.output}
CG=/sys/fs/cgroup
passed=0
failed=0
pids=()
kqosd=
work=

ok() {
	passed=$((passed + 1))
	echo "ok $((passed + failed)) - $*"
}

not_ok() {
	failed=$((failed + 1))
	echo "not ok $((passed + failed)) - $*"
}

check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else not_ok "$what"; fi
}

# The group's directories: every v1 controller run-in-group.sh uses, or the v2 one.
group_dirs() {
	if [ -e "$CG/cgroup.controllers" ]; then
		echo "$CG/$1"
	else
		for c in cpu cpuacct cpuset; do [ -d "$CG/$c" ] && echo "$CG/$c/$1"; done
	fi
}

shares_file() {
	if [ -e "$CG/cgroup.controllers" ]; then echo "$CG/kqos-be/cpu.weight"; else
		echo "$CG/cpu/kqos-be/cpu.shares"; fi
}

cleanup() {
	local d p
	[ -n "$kqosd" ] && kill -KILL "$kqosd" 2>/dev/null && wait "$kqosd" 2>/dev/null
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for g in kqos-ls kqos-be; do
		for d in $(group_dirs "$g"); do
			[ -d "$d" ] && xargs -r kill -KILL <"$d/cgroup.procs" 2>/dev/null
			rmdir "$d" 2>/dev/null
		done
	done
	[ -n "$work" ] && rm -rf "$work"
	echo "$passed passed, $failed failed"
}

wait_for() {
	local ms=$1
	shift
	for ((t = 0; t < ms; t += 100)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

shows_groups() {
	grep -q '^ls  *LS' <<<"$1" && grep -q '^be  *BE' <<<"$1"
}

healthy() {
	"$OUTPUT/kqos-top" --check -s "$work/kqos.sock" >/dev/null 2>&1
}

shares_are() {
	[ "$(cat "$(shares_file)")" = "$1" ]
}

main() {
	local before out
	[ "$(id -u)" = 0 ] || { not_ok "needs root"; exit 1; }
	for g in kqos-ls kqos-be; do
		for d in $(group_dirs "$g"); do
			[ -e "$d" ] && { not_ok "$d exists already: not touching it"; exit 1; }
		done
	done
	trap cleanup EXIT
	trap 'not_ok interrupted; exit 1' INT TERM
	work=$(mktemp -d /tmp/kqos-quickstart-XXXXXX)

	# 1. run it
	deploy/examples/run-in-group.sh kqos-ls sh -c 'while :; do :; done' &
	pids+=($!)
	deploy/examples/run-in-group.sh kqos-be sh -c 'while :; do :; done' &
	pids+=($!)
	wait_for 3000 test -e "$(shares_file)" || { not_ok "run-in-group.sh made no group"; exit 1; }
	before=$(cat "$(shares_file)")
	"$OUTPUT/kqosd" --config deploy/examples/bare-metal.json --socket "$work/kqos.sock" \
		--state-dir "$work/state" --textfile-dir "$work/textfile" 2>"$work/log" &
	kqosd=$!
	check "kqosd starts with deploy/examples/bare-metal.json" \
		wait_for 10000 healthy

	# 2. watch
	out=$("$OUTPUT/kqos-top" -b -n 1 -s "$work/kqos.sock" 2>&1)
	check "kqos-top shows the ls and be groups" shows_groups "$out"

	# 3. BE pushed back, then restored
	check "BE's $(basename "$(shares_file)") pushed from $before to 2 next to busy LS" \
		wait_for 20000 shares_are 2
	kill -TERM "$kqosd"
	wait "$kqosd"
	check "kqosd exits 0 on SIGTERM" test $? = 0
	kqosd=
	check "BE's value is $before again" shares_are "$before"
	[ $failed -eq 0 ] || sed 's/^/# /' "$work/log"
	[ $failed -eq 0 ]
}

main "$@"
