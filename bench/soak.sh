#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/soak.sh: the churn soak (issue 15 §2). Three kqosd run side by side, each with its own
# socket and state dir:
#   glob  bare-metal groups with glob patterns (LS ls-*, BE be-*), cpusetRules on: the LS
#         matches get the LS pool written, so their originals are journaled
#   pods  a PodList file whose pods come and go, batchResource and cpusetRules on: BE pods get
#         shares and quota, LS containers the LS pool, all journaled
#   v2    cgroupMode v2: its collector keys on the unified tree's ids, walk source, no strategy
# bench/soakload (bench/soakload.c, tests/lib/soak.c) creates and destroys CGROUPS cgroups over
# DURATION s with short-lived tasks in them, samples every kqosd each second (BPF hash map
# entries found by map id through /proc/PID/fdinfo, RSS, fds, journal), reads a snapshot from
# every socket each PROBE_MS, and prints the table, the figures and a PASS/FAIL line per bound.
# Exit 0 when every bound held, 1 when one broke, 2 when the soak could not run, 130 when
# interrupted. A bench: not part of make test. See bench/README.md and docs/testing.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-$REPO/.output}
KQOSD=${KQOSD:-$OUTPUT/kqosd}
SOAKLOAD=${SOAKLOAD:-$OUTPUT/bench/soakload}
DURATION=${DURATION:-60}     # seconds of churn
CGROUPS=${CGROUPS:-1000}     # cgroups created and destroyed over DURATION
LIVE=${LIVE:-50}             # of them at once
INTERVAL=${INTERVAL:-1s}     # kqosd's tick (its default)
REAP=${REAP:-2s}             # collector.reapInterval
WARMUP=${WARMUP:-5}          # seconds of baseline before the churn
SETTLE=${SETTLE:-30}         # at most this many seconds for maps and journal to come back
PROBE_MS=${PROBE_MS:-100}    # a snapshot read per socket every PROBE_MS
READ_BOUND_MS=${READ_BOUND_MS:-$((2 * PROBE_MS))}
MAP_SLACK=${MAP_SLACK:-16}   # entries above baseline still "back" (other work on the host)
RSS_GROWTH_KB=${RSS_GROWTH_KB:-4096}
DAEMONS=${DAEMONS:-glob pods v2}
KEEP=${KEEP:-0}              # 1: keep the temp dir (configs, logs) and print its path

die() {
	echo "soak: $*" >&2
	exit 2
}

[ "$(id -u)" -eq 0 ] || die "needs root (BPF, cgroups)"
[ -x "$KQOSD" ] || die "$KQOSD not built (make kqosd)"
[ -x "$SOAKLOAD" ] || die "$SOAKLOAD not built (make soak builds it)"
for v in DURATION CGROUPS LIVE WARMUP SETTLE PROBE_MS; do
	[[ ${!v} =~ ^[1-9][0-9]*$ ]] || die "$v must be a positive integer, got '${!v}'"
done

CG=/sys/fs/cgroup
# kqos-test-<live pid>-*: a crashed run is swept by the live tests, a running one never is
TOP=kqos-test-$$-soak
TMP=$(mktemp -d /tmp/kqos-soak-XXXXXX)
declare -A PID=()

# shellcheck disable=SC2317 # reached through the traps below
cleanup() {
	trap - EXIT INT TERM
	local d c
	for d in "${!PID[@]}"; do
		kill -TERM "${PID[$d]}" 2>/dev/null || true
	done
	for d in "${!PID[@]}"; do
		wait "${PID[$d]}" 2>/dev/null || true
	done
	for c in cpu cpuacct cpuset memory unified; do
		[ -d "$CG/$c/$TOP" ] || continue
		find "$CG/$c/$TOP" -depth -type d -exec rmdir {} + 2>/dev/null || true
	done
	if [ "$KEEP" = 1 ]; then
		echo "soak: kept $TMP"
	else
		rm -rf "$TMP"
	fi
}
trap cleanup EXIT
trap 'echo "soak: interrupted" >&2; cleanup; exit 130' INT TERM

config() {
	local d=$1 common
	common="\"interval\": \"$INTERVAL\", \"stateDir\": \"$TMP/$d/state\", \"logLevel\": \"info\",
 \"export\": {\"socket\": \"$TMP/$d/sock\"}, \"collector\": {\"reapInterval\": \"$REAP\"}"
	case $d in
	glob)
		cat <<-EOF
			{$common,
			 "pods": {"source": "static", "groups": [
			   {"name": "soak-ls", "cgroup": "/$TOP/ls-*", "qosClass": "LS"},
			   {"name": "soak-be", "cgroup": "/$TOP/be-*", "qosClass": "BE"}]},
			 "strategies": {"cpusetRules": {"enable": true}}}
		EOF
		;;
	pods)
		cat <<-EOF
			{$common,
			 "pods": {"source": "file", "file": {"path": "$TMP/pods.json", "interval": "200ms"}},
			 "strategies": {"batchResource": {"enable": true}, "cpusetRules": {"enable": true}}}
		EOF
		;;
	v2)
		cat <<-EOF
			{$common, "cgroupMode": "v2", "pods": {"source": "cgroup"}}
		EOF
		;;
	*) die "unknown daemon '$d' in DAEMONS (glob, pods, v2)" ;;
	esac
}

# The PodList must exist before the file source's first poll; the churn rewrites it.
echo '{"apiVersion":"v1","kind":"PodList","items":[]}' >"$TMP/pods.json"
args=()
for d in $DAEMONS; do
	mkdir -p "$TMP/$d/state"
	config "$d" >"$TMP/$d/kqosd.json"
	"$KQOSD" --config "$TMP/$d/kqosd.json" 2>"$TMP/$d/kqosd.log" &
	PID[$d]=$!
done
for d in $DAEMONS; do
	for _ in $(seq 100); do
		[ -S "$TMP/$d/sock" ] && grep -q 'kqosd started' "$TMP/$d/kqosd.log" && break
		kill -0 "${PID[$d]}" 2>/dev/null || break
		sleep 0.1
	done
	[ -S "$TMP/$d/sock" ] || {
		tail -n 20 "$TMP/$d/kqosd.log" >&2
		die "kqosd '$d' did not start"
	}
	mount=$CG/cpu
	[ "$d" = v2 ] && mount=$CG/unified
	args+=(--daemon "$d:${PID[$d]}:$TMP/$d/sock:$TMP/$d/state/journal:$mount")
done

echo "# kqosd $("$KQOSD" --version 2>&1 | head -n 1), interval $INTERVAL, reapInterval $REAP," \
	"daemons: $DAEMONS; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
rc=0
"$SOAKLOAD" --top "$TOP" --cgroups "$CGROUPS" --duration "$DURATION" --live "$LIVE" \
	--pods-file "$TMP/pods.json" --warmup "$WARMUP" --settle "$SETTLE" --probe-ms "$PROBE_MS" \
	--read-bound-ms "$READ_BOUND_MS" --map-slack "$MAP_SLACK" \
	--rss-growth-kb "$RSS_GROWTH_KB" "${args[@]}" || rc=$?

# SIGTERM restores every journaled original and removes the journal; then the logs' errors.
for d in $DAEMONS; do
	st=0
	kill -TERM "${PID[$d]}" 2>/dev/null || true
	wait "${PID[$d]}" || st=$?
	unset "PID[$d]"
	errs=$(grep -c 'level=error' "$TMP/$d/kqosd.log" || true)
	warns=$(grep -c 'level=warn' "$TMP/$d/kqosd.log" || true)
	echo "# $d: exit $st after SIGTERM, log: $errs error and $warns warn lines"
	if [ "$st" -ne 0 ]; then
		echo "FAIL $d: kqosd exit status $st after SIGTERM"
		[ "$rc" -eq 0 ] && rc=1
	fi
	if [ -e "$TMP/$d/state/journal" ]; then
		echo "FAIL $d: journal left after SIGTERM: $(grep -vc '^#' "$TMP/$d/state/journal")" \
			"lines"
		[ "$rc" -eq 0 ] && rc=1
	fi
	grep -E 'level=(error|warn)' "$TMP/$d/kqosd.log" | sed 's/^/#   /' | sort | uniq -c |
		sort -rn | head -n 5 || true
done
exit "$rc"
