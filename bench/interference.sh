#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/interference.sh: LS latency and BE throughput with a BE CPU hog next door, in real v1
# cgroups, with and without kqosd, side by side in one run (issue 11 §3).
#
# LS: bench/lsprobe (threads that wake on a period, do fixed CPU work, record response delay)
# and nginx on 127.0.0.1 driven by wrk (outside the LS and BE groups). BE: stress-ng --cpu with
# more workers than CPUs. Per round, every (shape, condition) pair in a seeded random order:
#   shapes      a  BE running before LS starts
#               b  a BE burst into an existing, idle BE group while LS serves
#               c  a new BE group matching the glob appears and burns while LS serves
#   conditions  none, uncontrolled, koordlet-like (1 s, cfsQuota 65 %), kqos-weight,
#               kqos-idle, kqos-guard (latency guard; "not available" while kqosd rejects it)
# Figures are printed, never asserted. Exit 0 when every run ran, 1 when some run failed,
# 2 when the bench could not start, 130 when interrupted. See bench/README.md.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-$REPO/.output}
KQOSD=${KQOSD:-$OUTPUT/kqosd}
LSPROBE=${LSPROBE:-$OUTPUT/bench/lsprobe}
KNOBWATCH=${KNOBWATCH:-$OUTPUT/bench/knobwatch}
RESULTS=${RESULTS:-$REPO/bench/results}
ROUNDS=${ROUNDS:-5}
DURATION=${DURATION:-20}   # seconds LS serves in each run
BURST_AT=${BURST_AT:-5}    # shapes b, c: seconds after LS start
SETTLE=${SETTLE:-3}        # seconds between kqosd ready (and BE start in a) and LS start
SHAPES=${SHAPES:-a b c}
CONDS=${CONDS:-none uncontrolled koordlet-like kqos-weight kqos-idle kqos-guard}
NCPU=$(getconf _NPROCESSORS_ONLN)
BE_WORKERS=${BE_WORKERS:-$((2 * NCPU))}
LS_THREADS=${LS_THREADS:-4}
LS_PERIOD=${LS_PERIOD:-2ms}
LS_WORK=${LS_WORK:-200us}
LS_LOOPS=${LS_LOOPS:-}     # spin loops per request; empty: calibrate once at start
LS_WAIT_TARGET=${LS_WAIT_TARGET:-1ms} # kqos-guard: waitTarget of the LS group
KQOS_INTERVAL=${KQOS_INTERVAL:-} # kqos-* conditions; empty: kqosd's default (1s)
NGINX_WORKERS=${NGINX_WORKERS:-$NCPU}
WRK_THREADS=${WRK_THREADS:-1}
WRK_CONNS=${WRK_CONNS:-4}
WRK_THINK_MS=${WRK_THINK_MS:-1} # per-connection pause between requests; 0 = closed loop, flat out
KNOB_POLL_US=${KNOB_POLL_US:-1000}
QUIET_WAIT=${QUIET_WAIT:-30} # seconds to wait for the machine to be quiet before a run
QUIET_BUSY=${QUIET_BUSY:-10} # "quiet": at most this % of CPU busy over 0.5 s
TIMELINE_ROUND=${TIMELINE_ROUND:-1}
KEEP_RAW=${KEEP_RAW:-0} # 1: copy every sample, trace and log to $RESULTS/raw

CG=/sys/fs/cgroup
LS_CG=kqos-bench-ls
BE_PREFIX=kqos-bench-be
ALL_CONDS=(none uncontrolled koordlet-like kqos-weight kqos-idle kqos-guard)

die() {
	echo "interference: $*" >&2
	exit 2
}

# --- prerequisites -------------------------------------------------------------------------------
posint() { [[ $2 =~ ^[1-9][0-9]*$ ]] || die "$1 must be a positive integer, got '$2'"; }
posint ROUNDS "$ROUNDS"
posint DURATION "$DURATION"
posint BE_WORKERS "$BE_WORKERS"
posint LS_THREADS "$LS_THREADS"
posint NGINX_WORKERS "$NGINX_WORKERS"
posint WRK_THREADS "$WRK_THREADS"
posint WRK_CONNS "$WRK_CONNS"
posint KNOB_POLL_US "$KNOB_POLL_US"
[[ $SETTLE =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "SETTLE must be a number of seconds, got '$SETTLE'"
[[ $BURST_AT =~ ^[0-9]+(\.[0-9]+)?$ ]] || die "BURST_AT must be a number of seconds, got '$BURST_AT'"
awk -v b="$BURST_AT" -v d="$DURATION" 'BEGIN { exit !(b < d) }' ||
	die "BURST_AT ($BURST_AT) must be below DURATION ($DURATION)"
[[ $WRK_THINK_MS =~ ^[0-9]+$ ]] || die "WRK_THINK_MS must be a whole number of ms"
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || die "QUIET_WAIT must be a number of seconds, got '$QUIET_WAIT'"
[[ $QUIET_BUSY =~ ^[0-9]+$ ]] || die "QUIET_BUSY must be a percentage, got '$QUIET_BUSY'"
for s in $SHAPES; do [[ $s =~ ^[abc]$ ]] || die "SHAPES: unknown shape '$s' (a b c)"; done
for c in $CONDS; do
	[[ " ${ALL_CONDS[*]} " == *" $c "* ]] || die "CONDS: unknown condition '$c' (${ALL_CONDS[*]})"
done
[ "$(id -u)" -eq 0 ] || die "must run as root (cgroups, BPF)"
[ "${EPOCHREALTIME:-}" ] || die "needs bash >= 5.0 (EPOCHREALTIME)"
for h in cpu cpuacct cpuset; do
	[ -f "$CG/$h/cgroup.procs" ] || die "no cgroup v1 $h hierarchy at $CG/$h (this bench needs v1 or hybrid)"
done
missing=()
for t in stress-ng:stress-ng nginx:nginx wrk:wrk python3:python3 curl:curl gnuplot:gnuplot-nox; do
	command -v "${t%%:*}" >/dev/null || missing+=("${t%%:*} (apt-get install ${t#*:})")
done
if [ ${#missing[@]} -gt 0 ]; then
	printf 'interference: missing prerequisite: %s\n' "${missing[@]}" >&2
	echo "interference: scripts/deps.sh installs the packages" >&2
	exit 2
fi
if [ ! -x "$KQOSD" ] || [ ! -x "$LSPROBE" ] || [ ! -x "$KNOBWATCH" ]; then
	echo "interference: building kqosd and the bench tools (make kqosd bench-tools)" >&2
	make -C "$REPO" OUTPUT="$OUTPUT" kqosd bench-tools >&2 || die "could not build the tools"
fi

# One run at a time: the cgroup names are fixed.
exec 9>/run/kqos-bench-interference.lock
flock -n 9 || die "another interference bench is running (/run/kqos-bench-interference.lock)"

# --- state and cleanup ---------------------------------------------------------------------------
WORK=$(mktemp -d /tmp/kqos-interference.XXXXXX)
chmod 755 "$WORK" # nginx workers run as an unprivileged user and serve $WORK/www
RAW=$WORK/raw
DATA=$WORK/data.tsv # round  shape  condition  key  value
NA=$WORK/na.tsv     # condition  why it is not available
mkdir -p "$RAW" "$RESULTS"
: >"$DATA"
: >"$NA"
LS_PID='' WRK_PID='' BE_PID='' KQOSD_PID='' KW_PID='' NGINX_PID=''
FAILED=0

# kill_wait pid signal seconds: signal, wait up to the grace, then SIGKILL; reaps our children.
kill_wait() {
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill "-$2" "$pid" 2>/dev/null || true
	for ((i = 0; i < $3 * 10; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

# Every process left in a cgroup of ours is one we started (or its child).
empty_cgroup() { # dir
	local i pid
	[ -f "$1/cgroup.procs" ] || return 0
	for ((i = 0; i < 50; i++)); do
		[ -s "$1/cgroup.procs" ] || return 0
		while read -r pid; do
			kill -KILL "$pid" 2>/dev/null || true
		done <"$1/cgroup.procs"
		sleep 0.1
	done
	echo "interference: $1 still has tasks" >&2
	return 1
}

remove_cgroup() { # name
	local h
	for h in cpu cpuacct cpuset; do
		[ -d "$CG/$h/$1" ] || continue
		empty_cgroup "$CG/$h/$1" || true
		rmdir "$CG/$h/$1" 2>/dev/null || echo "interference: could not remove $CG/$h/$1" >&2
	done
}

remove_be_cgroups() {
	local d
	for d in "$CG"/cpu/"$BE_PREFIX"* "$CG"/cpuacct/"$BE_PREFIX"* "$CG"/cpuset/"$BE_PREFIX"*; do
		[ -d "$d" ] && remove_cgroup "$(basename "$d")"
	done
	return 0
}

stop_run_procs() {
	kill_wait "$LS_PID" TERM 2
	kill_wait "$WRK_PID" TERM 2
	kill_wait "$BE_PID" INT 5
	# SIGTERM lets kqosd put back every knob it changed (its journal) before the groups go.
	kill_wait "$KQOSD_PID" TERM 10
	kill_wait "$KW_PID" TERM 2
	LS_PID='' WRK_PID='' BE_PID='' KQOSD_PID='' KW_PID=''
}

# shellcheck disable=SC2317 # reached through the traps below
cleanup() {
	trap - EXIT INT TERM
	stop_run_procs
	kill_wait "$NGINX_PID" TERM 5
	NGINX_PID=
	remove_be_cgroups
	remove_cgroup "$LS_CG"
	if [ "$KEEP_RAW" = 1 ] && [ -d "$RAW" ]; then
		rm -rf "$RESULTS/raw"
		cp -r "$RAW" "$RESULTS/raw" || true
	fi
	rm -rf "$WORK"
	rm -f /run/kqos-bench-interference.lock
}
trap cleanup EXIT
trap 'echo "interference: interrupted" >&2; cleanup; exit 130' INT TERM

record() { # round shape condition key value
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" >>"$DATA"
}

now_us() {
	local t=$EPOCHREALTIME
	echo "${t/./}"
}

# --- analysis (python3; jq is not used) ----------------------------------------------------------
ANA=$WORK/ana.py
cat >"$ANA" <<'PY'
import datetime, json, math, os, random, statistics, subprocess, sys

CONDS = ["none", "uncontrolled", "koordlet-like", "kqos-weight", "kqos-idle", "kqos-guard"]
SHAPES = {
    "a": "BE running before LS starts",
    "b": "BE burst into an existing idle BE group while LS serves",
    "c": "a new BE group (glob match) appears and burns while LS serves",
}
GOAL_P99 = 1.5   # issue 11: LS p99 within 1.5x the no-BE baseline with the guard
GOAL_BE = 0.80   # ... while BE keeps >= 80 % of its uncontrolled throughput
RAW = os.environ.get("RAW", ".")
RESULTS = os.environ.get("RESULTS", ".")

def emit(r, s, c, k, v):
    print(f"{r}\t{s}\t{c}\t{k}\t{v}")

# --- per-run parsers (their output is appended to the data file) ---

def cmd_shuffle(seed, rnd, *items):
    items = list(items)
    random.Random(f"{seed}/{rnd}").shuffle(items)
    print(" ".join(items))

def cmd_lsjson(path, r, s, c):
    j = json.load(open(path))
    for k in ("p50", "p90", "p99", "p999", "max", "mean"):
        emit(r, s, c, "ls_" + k, j[k + "_us"])
    emit(r, s, c, "ls_count", j["count"])
    emit(r, s, c, "ls_start_us", j["start_unix_us"])

def cmd_wrk(path, r, s, c):
    for line in open(path):
        if line.startswith("KQOS_WRK "):
            kv = dict(x.split("=", 1) for x in line.split()[1:])
            dur = int(kv["duration_us"]) / 1e6
            emit(r, s, c, "ngx_rps", f"{int(kv['requests']) / dur:.1f}" if dur > 0 else 0)
            for k in ("p50", "p99", "p999", "max"):
                emit(r, s, c, "ngx_" + k, kv[k + "_us"])
            emit(r, s, c, "ngx_errors", kv["errors"])
            return
    sys.exit(1)

def cmd_yaml_rate(path, r, s, c):
    # stress-ng --yaml: "bogo-ops-per-second-real-time: N" under "- stressor: cpu".
    cur = None
    for line in open(path):
        t = line.strip()
        if t.startswith("- stressor:"):
            cur = t.split(":", 1)[1].strip()
        elif cur == "cpu" and t.startswith("bogo-ops-per-second-real-time:"):
            emit(r, s, c, "be_bogo", t.split(":", 1)[1].strip())
            return
    sys.exit(1)

def knob_events(path):
    """knobwatch lines: (unix_us, init|set, path, value)."""
    ev = []
    try:
        for line in open(path):
            p = line.rstrip("\n").split(" ", 3)
            if len(p) == 4:
                ev.append((int(p[0]), p[1], p[2], p[3]))
    except FileNotFoundError:
        pass
    return ev

def knob_label(path, value):
    return f"{os.path.basename(path)}={value}"

def log_writes(path):
    """kqosd debug lines 'cgroup written' on a BE group: (unix_us, label), ms resolution."""
    out = []
    try:
        lines = open(path, errors="replace").read().splitlines()
    except FileNotFoundError:
        return out
    for line in lines:
        if 'msg="cgroup written"' not in line or "cgroup=/kqos-bench-be" not in line:
            continue
        kv = {}
        for tok in line.split(" "):
            if "=" in tok:
                k, v = tok.split("=", 1)
                kv.setdefault(k, v.strip('"'))
        if kv.get("strategy") == "restore":
            continue
        ts = datetime.datetime.strptime(kv["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
        us = int(ts.replace(tzinfo=datetime.timezone.utc).timestamp() * 1e6)
        out.append((us, f"{kv.get('knob')}={kv.get('value')}"))
    return out

def cmd_react(prefix, t0, tready, end, r, s, c):
    """Burst start (t0) -> first change of a BE knob seen by knobwatch before the LS end (after
    it, kqosd's stop restores the knobs). In shape c the script itself fills the new group's
    cpuset between t0 and tready: those cpuset changes are not kqosd's. Changes before t0 are
    'pre': in force before the burst."""
    t0, tready, end = int(t0), int(tready), int(end)
    ev = [e for e in knob_events(prefix + ".knobs") if e[1] == "set"]
    ev = [e for e in ev if not (e[2].endswith("cpuset.cpus") and t0 <= e[0] <= tready)]
    pre = sorted({knob_label(e[2], e[3]) for e in ev if e[0] < t0})
    post = [e for e in ev if t0 <= e[0] <= end]
    if post:
        emit(r, s, c, "react_ms", f"{(post[0][0] - t0) / 1000:.1f}")
        emit(r, s, c, "react_knob", knob_label(post[0][2], post[0][3]))
    emit(r, s, c, "react_pre", ",".join(pre) if pre else "-")
    lw = [w for w in log_writes(prefix + ".kqosd.log") if t0 - 999 <= w[0] <= end]
    if lw:
        emit(r, s, c, "react_log_ms", f"{max(0, lw[0][0] - t0) / 1000:.1f}")

# --- reporting ---

def load(path):
    d = {}
    for line in open(path):
        r, s, c, k, v = line.rstrip("\n").split("\t")
        d.setdefault((int(r), s, c), {})[k] = v
    return d

def not_available():
    na = {}
    path = os.environ.get("NA_FILE")
    if path and os.path.exists(path):
        for line in open(path):
            c, why = line.rstrip("\n").split("\t", 1)
            na[c] = why
    return na

def num(m, k):
    try:
        return float(m[k])
    except (KeyError, TypeError, ValueError):
        return None

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def med_censored(xs):
    """Median where None = no reaction within the run (counts as infinitely late)."""
    if not xs:
        return None
    m = statistics.median([math.inf if x is None else x for x in xs])
    return m

def f(x, fmt="{:.0f}"):
    if x is None:
        return "-"
    if x == math.inf:
        return "none"
    return fmt.format(x)

def ratio(a, b):
    return a / b if a is not None and b else None

def rounds_of(d):
    return sorted({k[0] for k in d})

def present(d, s, c):
    return any(k[1] == s and k[2] == c for k in d)

def row(d, r, s, c):
    m = d.get((r, s, c))
    return None if m is None or m.get("failed") else m

def series(d, s, c, key, rounds):
    return [num(row(d, r, s, c) or {}, key) for r in rounds]

def per_round_ratio(d, s, c, key, base, rounds):
    out = []
    for r in rounds:
        a = num(row(d, r, s, c) or {}, key)
        b = num(row(d, r, s, base) or {}, key)
        out.append(ratio(a, b))
    return out

def react_series(d, s, c, rounds):
    out = []
    for r in rounds:
        m = row(d, r, s, c)
        out.append(None if m is None else num(m, "react_ms"))
    return out

def cmd_brief(path, r, s, c):
    m = load(path).get((int(r), s, c), {})
    be = f"  BE {f(num(m, 'be_bogo'))} bogo/s" if "be_bogo" in m else ""
    rc = ""
    if "react_pre" in m:
        rc = f"  reaction {f(num(m, 'react_ms'), '{:.1f}')} ms" if "react_ms" in m else "  reaction none"
        if m["react_pre"] != "-":
            rc += f" (before the burst: {m['react_pre']})"
    noisy = "  [noisy]" if "noisy" in m else ""
    print(f"  {s}/{c:14s} LS p50 {f(num(m, 'ls_p50'))} p99 {f(num(m, 'ls_p99'))}"
          f" p99.9 {f(num(m, 'ls_p999'))} max {f(num(m, 'ls_max'))} us"
          f"  nginx {f(num(m, 'ngx_rps'))} req/s p99 {f(num(m, 'ngx_p99'))} us{be}{rc}{noisy}")

def join(xs, fmt="{:.0f}"):
    return ",".join(f(x, fmt) for x in xs)

def shape_table(d, s, rounds, na):
    dur, burst = os.environ["DURATION"], os.environ["BURST_AT"]
    when = "" if s == "a" else f", burst at {burst} s"
    print(f"=== shape {s}: {SHAPES[s]} (LS {dur} s{when}) ===")
    print(f"  {'condition':14s} | {'LS p50':>7s} {'p99':>7s} {'p99.9':>7s} {'max':>7s} us"
          f" {'p99 x none':>10s} | {'nginx r/s':>9s} {'p99 us':>7s} |"
          f" {'BE bogo/s':>9s} {'x unc':>5s} {'cpu x unc':>9s} | reaction ms")
    rows = {}
    for c in CONDS:
        if c in na:
            print(f"  {c:14s} | not available: {na[c]}")
            continue
        if not present(d, s, c):
            continue
        g = lambda k: med(series(d, s, c, k, rounds))
        x = dict(p50=g("ls_p50"), p99=g("ls_p99"), p999=g("ls_p999"), mx=g("ls_max"),
                 rps=g("ngx_rps"), np99=g("ngx_p99"), bogo=g("be_bogo"),
                 p99x=med(per_round_ratio(d, s, c, "ls_p99", "none", rounds)),
                 bex=med(per_round_ratio(d, s, c, "be_bogo", "uncontrolled", rounds)),
                 cpux=med(per_round_ratio(d, s, c, "be_cpu_s", "uncontrolled", rounds)))
        rs = react_series(d, s, c, rounds) if s != "a" and c not in ("none", "uncontrolled") else []
        x["react"] = med_censored(rs) if rs else None
        logr = med([num(row(d, r, s, c) or {}, "react_log_ms") for r in rounds]) if rs else None
        rtxt = f(x["react"], "{:.1f}")
        if rs and logr is not None:
            rtxt += f" (log {logr:.0f})"
        pre = sorted({(row(d, r, s, c) or {}).get("react_pre", "-") for r in rounds} - {"-"})
        if pre and (x["react"] in (None, math.inf)):
            rtxt += f", set before the burst: {';'.join(pre)}"
        fails = sum(1 for r in rounds if (d.get((r, s, c)) or {}).get("failed"))
        ftxt = f"  [{fails} failed]" if fails else ""
        print(f"  {c:14s} | {f(x['p50']):>7s} {f(x['p99']):>7s} {f(x['p999']):>7s} {f(x['mx']):>7s}   "
              f" {f(x['p99x'], '{:.2f}'):>10s} | {f(x['rps']):>9s} {f(x['np99']):>7s} |"
              f" {f(x['bogo']):>9s} {f(x['bex'], '{:.2f}'):>5s} {f(x['cpux'], '{:.2f}'):>9s} | {rtxt}{ftxt}")
        rows[c] = x
    print("  per round (in round order):")
    for c in CONDS:
        if c in na or not present(d, s, c):
            continue
        line = (f"    {c:14s} LS p99 {join(series(d, s, c, 'ls_p99', rounds))}"
                f"  p99.9 {join(series(d, s, c, 'ls_p999', rounds))}"
                f"  max {join(series(d, s, c, 'ls_max', rounds))}"
                f"  nginx p99 {join(series(d, s, c, 'ngx_p99', rounds))}")
        if c != "none":
            line += f"  BE x unc {join(per_round_ratio(d, s, c, 'be_bogo', 'uncontrolled', rounds), '{:.2f}')}"
        if s != "a" and c not in ("none", "uncontrolled"):
            line += f"  reaction {join(react_series(d, s, c, rounds), '{:.1f}')}"
        print(line)
    return rows

def goal_line(d, s, c, rows, rounds, label):
    x = rows.get(c)
    if x is None:
        return None
    ok_p = None if x["p99x"] is None else x["p99x"] <= GOAL_P99
    ok_b = None if x["bex"] is None else x["bex"] >= GOAL_BE
    beat = []
    for r in rounds:
        a = num(row(d, r, s, c) or {}, "ls_p99")
        k = num(row(d, r, s, "koordlet-like") or {}, "ls_p99")
        if a is not None and k is not None:
            beat.append(a < k)
    mark = lambda ok: "" if ok is None else (" ok" if ok else " MISSED")
    if c == "koordlet-like":
        btxt = ""
    elif not beat:
        btxt = "koordlet-like not measured"
    else:
        btxt = f"p99 below koordlet-like in {sum(beat)}/{len(beat)} rounds{mark(all(beat))}"
    print(f"  {label} shape {s}: {c} LS p99 {f(x['p99x'], '{:.2f}')}x none"
          f" (<= {GOAL_P99}{mark(ok_p)}), BE {f(x['bex'], '{:.2f}')}x uncontrolled"
          f" (>= {GOAL_BE:.2f}{mark(ok_b)}){', ' + btxt if btxt else ''}")
    if ok_p is None or ok_b is None or not beat:
        return None  # a figure is missing (a condition not run): not measured, not missed
    return ok_p and ok_b and all(beat)

def cmd_summary(path):
    d = load(path)
    na = not_available()
    rounds = rounds_of(d)
    shapes = [s for s in SHAPES if any(k[1] == s for k in d)]
    print()
    print(f"=== medians over {len(rounds)} rounds; ratios are medians of per-round ratios ===")
    print("LS = bench/lsprobe response delay (completion - scheduled start); nginx = wrk from"
          " outside the groups; BE = stress-ng --cpu bogo ops/s (x unc: against uncontrolled,"
          " same round); cpu x unc: BE CPU time while LS served, from cpuacct.usage;")
    print("reaction = burst start (b: stress-ng exec, c: mkdir of the new group) -> first change"
          " of a BE knob (cpu.shares, cpu.cfs_quota_us, cpu.idle, cpuset.cpus) seen by"
          " bench/knobwatch polling every 1 ms; 'log' = the same from kqosd's 'cgroup written'"
          " debug lines (ms resolution); none = no change within the run")
    all_rows = {}
    for s in shapes:
        print()
        all_rows[s] = shape_table(d, s, rounds, na)
    print()
    print(f"goal (issue 11): LS p99 <= {GOAL_P99}x none with kqos-guard, BE >= {GOAL_BE:.0%} of"
          " uncontrolled, and kqos-guard's p99 below koordlet-like's in every round")
    met = []
    if "kqos-guard" in na:
        print(f"  goal: not measured: kqos-guard not available ({na['kqos-guard']})")
    for s in shapes if "kqos-guard" not in na else []:
        res = goal_line(d, s, "kqos-guard", all_rows[s], rounds, "goal")
        if res is not None:
            met.append(res)
    for s in shapes:
        for c in ("koordlet-like", "kqos-weight", "kqos-idle"):
            goal_line(d, s, c, all_rows[s], rounds, "for reference")
    noisy = sum(1 for m in d.values() if "noisy" in m)
    failed = sum(1 for m in d.values() if m.get("failed"))
    if noisy:
        print(f"warning: {noisy} of {len(d)} runs started on a busy machine; treat with care")
    if failed:
        print(f"warning: {failed} runs failed and are left out")
    goal = "not_measured" if not met else ("met" if all(met) else "missed")
    kv = [f"rounds={len(rounds)}", f"goal={goal}", f"noisy_runs={noisy}", f"failed_runs={failed}"]
    for s in shapes:
        for c, x in all_rows[s].items():
            kv.append(f"{s}.{c}.p99={f(x['p99'])}")
            if c != "none":
                kv.append(f"{s}.{c}.be_x_unc={f(x['bex'], '{:.2f}')}")
            if s != "a" and c not in ("none", "uncontrolled"):
                kv.append(f"{s}.{c}.react_ms={f(x['react'], '{:.1f}')}")
    print()
    print("summary " + " ".join(kv))

# --- pictures (gnuplot) ---

def samples(tag):
    try:
        return [float(x) for x in open(os.path.join(RAW, tag + ".samples"))]
    except FileNotFoundError:
        return []

def cdf_points(xs):
    """(delay_us, nines) with nines = -log10(1 - q), up to the resolution of the sample."""
    xs = sorted(xs)
    n = len(xs)
    pts = []
    top = math.log10(n) if n > 1 else 0
    steps = 400
    for i in range(steps + 1):
        y = top * i / steps
        q = 1 - 10 ** (-y)
        k = min(n - 1, max(0, math.ceil(q * n) - 1))
        pts.append((xs[k], y))
    return pts

def gp_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', "'") + '"'

def plot_cdf(d, rounds, shapes, conds, work):
    gp = [
        'set terminal pngcairo size 1650,560 font "DejaVu Sans,10"',
        f'set output {gp_str(os.path.join(RESULTS, "cdf.png"))}',
        f'set multiplot layout 1,{len(shapes)} title {gp_str(f"LS probe response delay, all samples of {len(rounds)} rounds pooled")}',
        "set logscale x", 'set format x "%g"', "set grid", 'set xlabel "response delay (us)"',
        'set ylabel "percentile"',
        'set ytics ("0" 0, "50" 0.30103, "90" 1, "99" 2, "99.9" 3, "99.99" 4, "99.999" 5)',
        "set key top left",
    ]
    series_of = {}
    for s in shapes:
        for c in CONDS:
            if c not in conds:
                continue
            xs = []
            for r in rounds:
                if row(d, r, s, c) is not None:
                    xs += samples(f"r{r}-{s}-{c}")
            if xs:
                series_of[(s, c)] = xs
    if series_of:
        lo = min(min(xs) for xs in series_of.values())
        hi = max(max(xs) for xs in series_of.values())
        gp.append(f"set xrange [{max(1, lo * 0.8)}:{hi * 1.25}]")
    for s in shapes:
        gp.append(f"set title {gp_str('shape ' + s + ': ' + SHAPES[s])} font ',9'")
        parts = []
        for i, c in enumerate(CONDS):
            if c not in conds:
                continue
            xs = series_of.get((s, c))
            if not xs:
                continue
            path = os.path.join(work, f"cdf-{s}-{c}.dat")
            with open(path, "w") as fh:
                for x, y in cdf_points(xs):
                    fh.write(f"{x} {y}\n")
            parts.append(f"{gp_str(path)} using 1:2 with lines lw 2 lt {i + 1} title {gp_str(c)}")
        gp.append("plot " + (", ".join(parts) if parts else "1/0 notitle"))
    gp.append("unset multiplot")
    return gp

def plot_timeline(d, rnd, s, conds, work):
    settle, dur = float(os.environ["SETTLE"]), float(os.environ["DURATION"])
    panels = [c for c in CONDS if c in conds and row(d, rnd, s, c) is not None
              and os.path.exists(os.path.join(RAW, f"r{rnd}-{s}-{c}.trace"))]
    if not panels:
        return []
    out = os.path.join(RESULTS, f"timeline-{s}.png")
    gp = [
        "reset",
        f'set terminal pngcairo size 1400,{170 * len(panels) + 90} font "DejaVu Sans,9"',
        f"set output {gp_str(out)}",
        f"set multiplot layout {len(panels)},1 title {gp_str(f'round {rnd}, shape {s}: {SHAPES[s]}; LS delay per request, red = burst, blue = BE knob changes')}",
        "set logscale y", 'set format y "%g"', "set grid", f"set xrange [{-settle - 0.5}:{dur + 0.5}]",
        'set ylabel "delay (us)"', "set lmargin 12", "set tmargin 1.5",
    ]
    lo, hi, paths = math.inf, 0.0, {}
    for c in panels:
        ls0 = num(row(d, rnd, s, c), "ls_start_us") or 0
        tag = f"r{rnd}-{s}-{c}"
        paths[c] = os.path.join(work, f"tl-{tag}.dat")
        with open(os.path.join(RAW, tag + ".trace")) as src, open(paths[c], "w") as dst:
            for line in src:
                t, v = line.split()
                lo, hi = min(lo, float(v)), max(hi, float(v))
                dst.write(f"{(int(t) - ls0) / 1e6:.6f} {v}\n")
    if hi > 0:
        gp.append(f"set yrange [{max(1, lo * 0.8)}:{hi * 1.5}]")
    for i, c in enumerate(panels):
        m = row(d, rnd, s, c)
        ls0 = num(m, "ls_start_us") or 0
        tag = f"r{rnd}-{s}-{c}"
        path = paths[c]
        gp += ["unset arrow", "unset label", f"set title {gp_str(c)} offset 0,-0.8"]
        gp.append('set xlabel "seconds since LS start"' if i == len(panels) - 1 else "unset xlabel")
        tb = num(m, "t_mkdir_us") or num(m, "t_burst_us")
        if tb:
            x = (tb - ls0) / 1e6
            gp.append(f'set arrow from {x:.4f}, graph 0 to {x:.4f}, graph 1 nohead lw 2 lc rgb "red"')
        tready = num(m, "t_ready_us")
        ev = [e for e in knob_events(os.path.join(RAW, tag + ".knobs")) if e[1] == "set"]
        ev = [e for e in ev if not (tready and e[2].endswith("cpuset.cpus") and tb <= e[0] <= tready)]
        # Up to the LS end: the knobs kqosd's stop puts back afterwards are not part of the run.
        ev = [e for e in ev if -settle - 0.5 <= (e[0] - ls0) / 1e6 <= dur]
        groups = []  # changes within 20 ms of each other share one mark and one label
        for e in ev:
            if groups and e[0] - groups[-1][0] <= 20000:
                groups[-1][1].append(knob_label(e[2], e[3]))
            else:
                groups.append((e[0], [knob_label(e[2], e[3])]))
        for j, (t, labels) in enumerate(groups):
            x = (t - ls0) / 1e6
            gp.append(f'set arrow from {x:.4f}, graph 0 to {x:.4f}, graph 1 nohead dt 2 lc rgb "blue"')
            if j < 8:
                gp.append(f'set label {gp_str(", ".join(labels))} at {x:.4f}, graph 0.97'
                          ' rotate by 90 right font ",7" tc rgb "blue" offset -0.5,0')
        gp.append(f'plot {gp_str(path)} using 1:2 with points pt 7 ps 0.15 lc rgb "#404040" notitle')
    gp.append("unset multiplot")
    return gp

def cmd_plots(path, rnd):
    d = load(path)
    rounds = rounds_of(d)
    shapes = [s for s in SHAPES if any(k[1] == s for k in d)]
    conds = [c for c in CONDS if any(k[2] == c for k in d)]
    work = os.path.join(RAW, "plot")
    os.makedirs(work, exist_ok=True)
    rnd = int(rnd) if int(rnd) in rounds else rounds[0]
    gp = plot_cdf(d, rounds, shapes, conds, work)
    for s in shapes:
        if s != "a":
            gp += plot_timeline(d, rnd, s, conds, work)
    script = os.path.join(work, "plots.gp")
    with open(script, "w") as fh:
        fh.write("\n".join(gp) + "\n")
    subprocess.run(["gnuplot", script], check=True)
    for name in ["cdf.png"] + [f"timeline-{s}.png" for s in shapes if s != "a"]:
        p = os.path.join(RESULTS, name)
        if os.path.exists(p):
            print(f"picture: {p} ({os.path.getsize(p) // 1024} KiB)")

if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1]](*sys.argv[2:])
PY
ana() {
	SETTLE=$SETTLE DURATION=$DURATION BURST_AT=$BURST_AT RAW=$RAW RESULTS=$RESULTS \
		NA_FILE=$NA python3 "$ANA" "$@"
}

# --- cgroups -------------------------------------------------------------------------------------
make_cgroup() { # name hierarchies...
	local name=$1 h
	shift
	for h in "$@"; do
		mkdir -p "$CG/$h/$name"
		if [ "$h" = cpuset ]; then
			# A v1 cpuset takes no task before it has CPUs and memory nodes.
			cat "$CG/cpuset/cpuset.cpus" >"$CG/cpuset/$name/cpuset.cpus"
			cat "$CG/cpuset/cpuset.mems" >"$CG/cpuset/$name/cpuset.mems"
		fi
	done
}

cpuacct_ns() { # sum of cpuacct.usage over the BE groups (0 when there are none)
	local f sum=0 v
	for f in "$CG"/cpuacct/"$BE_PREFIX"*/cpuacct.usage; do
		[ -r "$f" ] || continue
		read -r v <"$f" || v=0
		sum=$((sum + v))
	done
	echo "$sum"
}

in_cgroup() { # pid controller name: is pid in that v1 cgroup?
	grep -q ":$2:/$3\$" "/proc/$1/cgroup" 2>/dev/null
}

# --- nginx (LS), once per bench ------------------------------------------------------------------
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start_nginx() {
	local i worker
	PORT=$(free_port)
	mkdir -p "$WORK/www" "$WORK/nginx"
	head -c 4096 /dev/zero | tr '\0' 'x' >"$WORK/www/index.html"
	chmod 755 "$WORK/www"
	chmod 644 "$WORK/www/index.html"
	cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes $NGINX_WORKERS;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/error.log warn;
events { worker_connections 1024; }
http {
	access_log off;
	client_body_temp_path $WORK/nginx/body;
	proxy_temp_path $WORK/nginx/proxy;
	fastcgi_temp_path $WORK/nginx/fastcgi;
	uwsgi_temp_path $WORK/nginx/uwsgi;
	scgi_temp_path $WORK/nginx/scgi;
	server {
		listen 127.0.0.1:$PORT;
		location / { root $WORK/www; }
	}
}
EOF
	# The master joins the LS cgroups before exec, so its workers are born there.
	(
		echo "$BASHPID" >"$CG/cpu/$LS_CG/cgroup.procs"
		echo "$BASHPID" >"$CG/cpuacct/$LS_CG/cgroup.procs"
		exec nginx -p "$WORK/nginx" -e "$WORK/nginx/error.log" -c "$WORK/nginx/nginx.conf" \
			-g 'daemon off;'
	) >"$WORK/nginx/stdout.log" 2>&1 &
	NGINX_PID=$!
	for ((i = 0; i < 50; i++)); do
		curl -fs -o /dev/null "http://127.0.0.1:$PORT/" && break
		kill -0 "$NGINX_PID" 2>/dev/null || break
		sleep 0.1
	done
	curl -fs -o /dev/null "http://127.0.0.1:$PORT/" || {
		cat "$WORK/nginx/error.log" "$WORK/nginx/stdout.log" >&2 2>/dev/null || true
		die "nginx did not come up on 127.0.0.1:$PORT"
	}
	for worker in $(pgrep -P "$NGINX_PID"); do
		in_cgroup "$worker" cpu "$LS_CG" || die "nginx worker $worker is not in cpu:/$LS_CG"
	done
	cat >"$WORK/wrk.lua" <<EOF
-- Bounded load: each connection pauses $WRK_THINK_MS ms between requests (0: flat out).
local think = $WRK_THINK_MS
if think > 0 then
	function delay() return think end
end
function done(summary, latency, requests)
	local e = summary.errors
	io.write(string.format("KQOS_WRK requests=%d duration_us=%d errors=%d p50_us=%d p99_us=%d p999_us=%d max_us=%d\n",
		summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
		latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max))
end
EOF
}

# --- kqosd ---------------------------------------------------------------------------------------
# kqos_config condition state_dir: the JSON of one kqosd condition on stdout.
kqos_config() {
	local ls_extra="" nodeslo="" strategies="" interval=""
	case $1 in
	koordlet-like)
		interval='"interval": "1s",'
		nodeslo='"nodeSLO": {"resourceUsedThresholdWithBE": {"enable": true, "cpuSuppressPolicy": "cfsQuota", "cpuSuppressThresholdPercent": 65}},'
		;;
	kqos-weight | kqos-idle)
		nodeslo='"nodeSLO": {"resourceUsedThresholdWithBE": {"enable": true}},'
		strategies="\"strategies\": {\"cpuSuppress\": {\"policy\": \"${1#kqos-}\"}},"
		;;
	kqos-guard)
		strategies='"strategies": {"latencyGuard": {"enable": true, "targets": {"LS": "1ms", "LSR": "500us", "LSE": "200us"}, "quietWindow": "2s"}},'
		ls_extra=", \"waitTarget\": \"$LS_WAIT_TARGET\""
		;;
	esac
	if [ "$1" != koordlet-like ] && [ -n "$KQOS_INTERVAL" ]; then
		interval="\"interval\": \"$KQOS_INTERVAL\","
	fi
	cat <<EOF
{
  $interval
  "logLevel": "debug",
  "stateDir": "$2",
  "export": {"socket": "", "textfileDir": ""},
  "pods": {"source": "static", "groups": [
    {"name": "ls", "cgroup": "/$LS_CG", "qosClass": "LS"$ls_extra},
    {"name": "be", "cgroup": "/$BE_PREFIX*", "qosClass": "BE"}]},
  $nodeslo
  $strategies
  "dryRun": false
}
EOF
}

# A dry start (--once --dry-run) checks each kqosd condition: a config kqosd rejects (the guard's
# keys before the guard lands) makes that condition "not available"; any other failure is fatal.
check_conditions() {
	local c cfg out rc
	for c in $CONDS; do
		case $c in none | uncontrolled) continue ;; esac
		cfg=$WORK/check-$c.json
		kqos_config "$c" "$WORK/check-state" >"$cfg"
		rc=0
		out=$(timeout 60 "$KQOSD" --config "$cfg" --dry-run --once --interval 10ms 2>&1 >/dev/null) ||
			rc=$?
		rm -rf "$WORK/check-state"
		[ "$rc" -eq 0 ] && continue
		if grep -q "^kqosd: $cfg:" <<<"$out"; then
			printf '%s\t%s\n' "$c" "kqosd rejects its config: $(grep -m1 "^kqosd: $cfg:" <<<"$out" |
				sed "s|^kqosd: $cfg:||")" >>"$NA"
			echo "interference: $c not available: $(tail -n1 "$NA" | cut -f2)"
		else
			echo "$out" | tail -n 20 >&2
			die "kqosd failed its dry start for $c (exit $rc)"
		fi
	done
}

is_available() {
	! cut -f1 "$NA" | grep -qx "$1"
}

start_kqosd() { # condition tag
	local cfg=$WORK/kqosd-$1.json i
	rm -rf "$WORK/state"
	kqos_config "$1" "$WORK/state" >"$cfg"
	: >"$RAW/$2.kqosd.log"
	"$KQOSD" --config "$cfg" >"$RAW/$2.kqosd.log" 2>&1 &
	KQOSD_PID=$!
	for ((i = 0; i < 200; i++)); do
		grep -q 'msg="kqosd started"' "$RAW/$2.kqosd.log" && return 0
		kill -0 "$KQOSD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "interference: kqosd ($1) did not start; its log:" >&2
	grep -v libbpf "$RAW/$2.kqosd.log" | tail -n 20 >&2
	kill_wait "$KQOSD_PID" TERM 5
	KQOSD_PID=
	return 1
}

# --- load ----------------------------------------------------------------------------------------
# start_be group tag: stress-ng --cpu in the BE group, until stopped with SIGINT (it then prints
# its metrics). The start time is stamped by the shell that execs stress-ng, inside the group.
start_be() {
	local g=$1
	(
		for h in cpu cpuacct cpuset; do
			echo "$BASHPID" >"$CG/$h/$g/cgroup.procs"
		done
		t=$EPOCHREALTIME
		echo "${t/./}" >"$WORK/be.t0"
		exec stress-ng --cpu "$BE_WORKERS" --timeout $((DURATION + 120))s --metrics-brief \
			--yaml "$RAW/$2.be.yaml"
	) >"$RAW/$2.be.log" 2>&1 &
	BE_PID=$!
}

# start_ls tag: the probe, moved into the LS groups before it starts (it waits on a FIFO),
# and wrk against nginx from outside the LS and BE groups, both for DURATION.
start_ls() {
	local fifo=$WORK/ls.go
	rm -f "$fifo"
	mkfifo "$fifo"
	"$LSPROBE" --threads "$LS_THREADS" --period "$LS_PERIOD" --work "$LS_WORK" --loops "$LS_LOOPS" \
		--duration "$DURATION" --samples "$RAW/$1.samples" --trace "$RAW/$1.trace" \
		--start-fifo "$fifo" >"$RAW/$1.ls.json" 2>"$RAW/$1.ls.err" &
	LS_PID=$!
	echo "$LS_PID" >"$CG/cpu/$LS_CG/cgroup.procs"
	echo "$LS_PID" >"$CG/cpuacct/$LS_CG/cgroup.procs"
	if ! in_cgroup "$LS_PID" cpu "$LS_CG" || ! in_cgroup "$LS_PID" cpuacct "$LS_CG"; then
		echo "interference: lsprobe $LS_PID did not land in $LS_CG" >&2
		return 1
	fi
	timeout 5 sh -c "echo go >'$fifo'" || {
		echo "interference: lsprobe did not open its start FIFO" >&2
		return 1
	}
	wrk -t "$WRK_THREADS" -c "$WRK_CONNS" -d "${DURATION}s" --timeout 2s -s "$WORK/wrk.lua" \
		"http://127.0.0.1:$PORT/" >"$RAW/$1.wrk" 2>&1 &
	WRK_PID=$!
}

# Sleeps until @1 seconds after the LS start (µs stamp @2).
sleep_until_rel() {
	local left
	left=$(awk -v at="$1" -v t0="$2" -v now="$(now_us)" 'BEGIN { d = at - (now - t0) / 1e6; print (d > 0 ? d : 0) }')
	sleep "$left"
}

busy_pct() { # machine-wide non-idle CPU % over 0.5 s
	local -a a b
	local i tot=0 idle
	read -r -a a < <(grep '^cpu ' /proc/stat)
	sleep 0.5
	read -r -a b < <(grep '^cpu ' /proc/stat)
	for ((i = 1; i < ${#a[@]}; i++)); do
		tot=$((tot + b[i] - a[i]))
	done
	idle=$((b[4] - a[4] + b[5] - a[5]))
	echo $((tot > 0 ? (tot - idle) * 100 / tot : 0))
}

# The machine may be shared: wait up to QUIET_WAIT s for other load to go away; measure anyway
# after that, but flag the run as noisy.
wait_quiet() { # round shape condition
	local i busy
	for ((i = 0; i <= QUIET_WAIT; i++)); do
		busy=$(busy_pct)
		[ "$busy" -le "$QUIET_BUSY" ] && return 0
		sleep 0.5
	done
	echo "  warning: $2/$3: machine not quiet (CPU ${busy}% busy)" >&2
	[ "$1" = 0 ] || record "$1" "$2" "$3" noisy "$busy"
}

# --- one run -------------------------------------------------------------------------------------
# run_one round shape condition: returns non-zero when the run could not be measured.
run_one() {
	local r=$1 s=$2 c=$3 tag="r$1-$2-$3" be="" ls0 ls_end t0="" tready="" cpu0 cpu1 be_cpu_ns
	local has_be=1
	[ "$c" = none ] && has_be=0
	wait_quiet "$r" "$s" "$c"
	rm -f "$WORK/be.t0"
	case $s in
	a) be=$BE_PREFIX-a ;;
	b) be=$BE_PREFIX-b ;;
	c) be=$BE_PREFIX-c ;;
	esac
	# Shapes a and b: the BE group exists from the start (in b it stays idle until the burst).
	[ "$s" = c ] || make_cgroup "$be" cpu cpuacct cpuset
	"$KNOBWATCH" -i "$KNOB_POLL_US" -o "$RAW/$tag.knobs" \
		"$CG/cpu/$BE_PREFIX*/cpu.shares" "$CG/cpu/$BE_PREFIX*/cpu.cfs_quota_us" \
		"$CG/cpu/$BE_PREFIX*/cpu.idle" "$CG/cpuset/$BE_PREFIX*/cpuset.cpus" &
	KW_PID=$!
	if [ "$s" = a ] && [ $has_be = 1 ]; then
		start_be "$be" "$tag"
	fi
	case $c in
	none | uncontrolled) ;;
	*) start_kqosd "$c" "$tag" || return 1 ;;
	esac
	sleep "$SETTLE"
	cpu0=$(cpuacct_ns)
	start_ls "$tag" || return 1
	ls0=$(now_us)
	if [ "$s" != a ] && [ $has_be = 1 ]; then
		sleep_until_rel "$BURST_AT" "$ls0"
		if [ "$s" = c ]; then
			t0=$(now_us)
			make_cgroup "$be" cpu cpuacct cpuset
			tready=$(now_us)
			record "$r" "$s" "$c" t_mkdir_us "$t0"
			record "$r" "$s" "$c" t_ready_us "$tready"
		fi
		cpu0=$(cpuacct_ns)
		start_be "$be" "$tag"
	fi
	if ! wait "$LS_PID"; then
		LS_PID=
		echo "interference: lsprobe failed: $(cat "$RAW/$tag.ls.err")" >&2
		return 1
	fi
	LS_PID=''
	cpu1=$(cpuacct_ns)
	ls_end=$(now_us)
	kill_wait "$BE_PID" INT 5
	BE_PID=
	wait "$WRK_PID" || echo "interference: wrk exited non-zero ($tag)" >&2
	WRK_PID=
	kill_wait "$KQOSD_PID" TERM 10
	KQOSD_PID=
	kill_wait "$KW_PID" TERM 2
	KW_PID=
	remove_be_cgroups
	ana lsjson "$RAW/$tag.ls.json" "$r" "$s" "$c" >>"$DATA"
	ana wrk "$RAW/$tag.wrk" "$r" "$s" "$c" >>"$DATA" ||
		echo "interference: no wrk summary ($tag): $(tail -n 3 "$RAW/$tag.wrk")" >&2
	if [ $has_be = 1 ]; then
		be_cpu_ns=$((cpu1 - cpu0))
		record "$r" "$s" "$c" be_cpu_s "$(awk -v n="$be_cpu_ns" 'BEGIN { printf "%.3f", n / 1e9 }')"
		ana yaml_rate "$RAW/$tag.be.yaml" "$r" "$s" "$c" >>"$DATA" ||
			echo "interference: no stress-ng metrics ($tag)" >&2
		# b: stress-ng's exec; c: the mkdir of the new group.
		if [ "$s" != a ] && [ -s "$WORK/be.t0" ]; then
			[ "$s" = c ] || t0=$(cat "$WORK/be.t0")
			record "$r" "$s" "$c" t_burst_us "$t0"
		fi
		if [ "$s" != a ] && [ "$c" != uncontrolled ] && [ -n "$t0" ]; then
			ana react "$RAW/$tag" "$t0" "${tready:-$t0}" "$ls_end" "$r" "$s" "$c" >>"$DATA"
		fi
	fi
	ana brief "$DATA" "$r" "$s" "$c"
}

# --- main ----------------------------------------------------------------------------------------
SEED=${SEED:-$RANDOM}
remove_be_cgroups
remove_cgroup "$LS_CG"
make_cgroup "$LS_CG" cpu cpuacct
echo "kqos interference benchmark: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r), $NCPU CPUs," \
	"loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
echo "kqosd $KQOSD ($("$KQOSD" --version 2>/dev/null | head -n1)); $(stress-ng --version | head -n1);" \
	"$(nginx -v 2>&1); $(wrk --version 2>&1 | head -n1 | cut -d' ' -f1-2)"
check_conditions
if [ -z "$LS_LOOPS" ]; then
	wait_quiet 0 - calibrate
	LS_LOOPS=$("$LSPROBE" --calibrate --work "$LS_WORK" | sed -n 's/.*"loops": \([0-9]*\).*/\1/p')
	[ -n "$LS_LOOPS" ] || die "lsprobe calibration failed"
fi
start_nginx
read -r -a shapes <<<"$SHAPES"
read -r -a conds <<<"$CONDS"
pairs=()
for s in "${shapes[@]}"; do
	for c in "${conds[@]}"; do
		is_available "$c" && pairs+=("$s/$c")
	done
done
[ ${#pairs[@]} -gt 0 ] || die "no condition is available"
echo "rounds $ROUNDS, seed $SEED, ${#pairs[@]} runs per round of ${DURATION}s LS each" \
	"(about $(((${#pairs[@]} * (DURATION + ${SETTLE%.*} + 3) * ROUNDS + 59) / 60)) min)"
echo "LS: lsprobe $LS_THREADS threads x $LS_PERIOD period, $LS_WORK work ($LS_LOOPS loops)" \
	"in cpu,cpuacct:/$LS_CG; nginx $NGINX_WORKERS workers there on 127.0.0.1:$PORT," \
	"wrk -t$WRK_THREADS -c$WRK_CONNS, think ${WRK_THINK_MS} ms (outside LS/BE)"
echo "BE: stress-ng --cpu $BE_WORKERS in /$BE_PREFIX-{a,b,c}; shapes b, c burst at ${BURST_AT}s;" \
	"settle ${SETTLE}s; BE knobs polled every ${KNOB_POLL_US} us"
for ((r = 1; r <= ROUNDS; r++)); do
	read -r -a order <<<"$(ana shuffle "$SEED" "$r" "${pairs[@]}")"
	echo "round $r/$ROUNDS: ${order[*]} (loadavg $(cut -d' ' -f1 /proc/loadavg))"
	for p in "${order[@]}"; do
		if ! run_one "$r" "${p%%/*}" "${p#*/}"; then
			echo "interference: round $r ${p%%/*}/${p#*/} failed" >&2
			record "$r" "${p%%/*}" "${p#*/}" failed 1
			FAILED=$((FAILED + 1))
			stop_run_procs
			remove_be_cgroups
		fi
	done
done
ana summary "$DATA" | tee "$RESULTS/summary.txt"
cp "$DATA" "$RESULTS/data.tsv"
ana plots "$DATA" "$TIMELINE_ROUND" || echo "interference: plotting failed" >&2
[ "$FAILED" -eq 0 ] || exit 1
exit 0
