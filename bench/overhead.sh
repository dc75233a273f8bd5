#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/overhead.sh: kqos against libbpf-tools' runqlat, side by side in one run.
#
# Per round, in a random order of conditions:
#   stats/kqos, stats/kqospmu,  kernel.bpf_stats_enabled=1, in-kernel ns per event
#   stats/runqlat               (Δrun_time_ns / Δrun_cnt from `bpftool -j prog show`)
#   tput/none, tput/kqos,       bpf_stats off, stress-ng --switch bogo ops/s
#   tput/kqospmu, tput/runqlat
# kqoswatch is kqosd whose latency guard watches the load's cgroup with a 1 us wait target.
# kqospmu is kqosd with 3 perf counters (software events: context-switches, task-clock, cpu-clock).
# No two tools ever run at the same time. Figures are printed, never asserted: exit 0 when
# the measurement ran, non-zero only when it could not run at all. See bench/README.md.
#
# Environment: ROUNDS (5), LOAD_SECS (5), STRESSORS (2), QUIET_WAIT (30), QUIET_BUSY (10),
# OUTPUT (.output), KQOSD, RUNQLAT, SEED.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
LOAD_SECS=${LOAD_SECS:-5}
STRESSORS=${STRESSORS:-2}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-$REPO/.output}
KQOSD=${KQOSD:-$OUTPUT/kqosd}
RUNQLAT=${RUNQLAT:-/usr/sbin/runqlat}
LOAD_TIMEOUT=10 # seconds to wait for a tool's programs to appear
QUIET_WAIT=${QUIET_WAIT:-30} # seconds to wait for the machine to be quiet before a condition
QUIET_BUSY=${QUIET_BUSY:-10} # "quiet": at most this % of CPU busy and no foreign sched_* programs

# Targets from perf-anchors.md §5 G1/G2, printed next to the figures.
TARGET_NS=300
TARGET_RATIO=0.6
TARGET_TPUT=0.90
TARGET_PMU_NS=450 # issue 5: kqos with 3 counters
PMU_EVENTS=3

die() {
	echo "overhead: $*" >&2
	exit 2
}

# --- prerequisites -------------------------------------------------------------------------------
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$ROUNDS'"
[[ $LOAD_SECS =~ ^[1-9][0-9]*$ ]] || die "LOAD_SECS must be a positive integer, got '$LOAD_SECS'"
[[ $STRESSORS =~ ^[1-9][0-9]*$ ]] || die "STRESSORS must be a positive integer, got '$STRESSORS'"
[[ $QUIET_WAIT =~ ^[0-9]+$ ]] || die "QUIET_WAIT must be a number of seconds, got '$QUIET_WAIT'"
[[ $QUIET_BUSY =~ ^[0-9]+$ ]] || die "QUIET_BUSY must be a percentage, got '$QUIET_BUSY'"
[ "$(id -u)" -eq 0 ] || die "must run as root (bpf, sysctl kernel.bpf_stats_enabled)"
missing=()
command -v bpftool >/dev/null || missing+=("bpftool (apt-get install bpftool)")
command -v stress-ng >/dev/null || missing+=("stress-ng (apt-get install stress-ng)")
command -v python3 >/dev/null || missing+=("python3 (apt-get install python3)")
[ -x "$RUNQLAT" ] || missing+=("$RUNQLAT (apt-get install libbpf-tools)")
[ -r /proc/sys/kernel/bpf_stats_enabled ] || missing+=("kernel.bpf_stats_enabled sysctl (kernel >= 5.8)")
if [ ${#missing[@]} -gt 0 ]; then
	printf 'overhead: missing prerequisite: %s\n' "${missing[@]}" >&2
	echo "overhead: scripts/deps.sh installs the packages" >&2
	exit 2
fi
if [ ! -x "$KQOSD" ]; then
	echo "overhead: $KQOSD not built, running make kqosd" >&2
	make -C "$REPO" OUTPUT="$OUTPUT" kqosd >&2 || die "could not build $KQOSD"
fi

# --- state and cleanup ---------------------------------------------------------------------------
STATS_ORIG=$(cat /proc/sys/kernel/bpf_stats_enabled)
WORK=$(mktemp -d /tmp/kqos-overhead.XXXXXX)
DATA=$WORK/data.tsv # round  condition  key  value
TOOL_PID=
LOAD_PID=
LOAD_CG=/sys/fs/cgroup/cpu/kqos-bench-sw
mkdir -p "$LOAD_CG" || die "cannot make the load's cgroup $LOAD_CG"

cleanup() {
	local pid
	trap - EXIT INT TERM
	for pid in "$LOAD_PID" "$TOOL_PID"; do
		if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
			kill -TERM "$pid" 2>/dev/null || true
			wait "$pid" 2>/dev/null || true
		fi
	done
	echo "$STATS_ORIG" >/proc/sys/kernel/bpf_stats_enabled 2>/dev/null || true
	[ -d "$LOAD_CG" ] && rmdir "$LOAD_CG" 2>/dev/null
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'echo "overhead: interrupted" >&2; cleanup; exit 130' INT TERM

set_stats() {
	echo "$1" >/proc/sys/kernel/bpf_stats_enabled
}

record() { # round condition key value
	printf '%s\t%s\t%s\t%s\n' "$@" >>"$DATA"
}

# --- the analysis, in python3 (no jq dependency) -------------------------------------------------
cat >"$WORK/ana.py" <<'PY'
import json, os, random, statistics, sys

def norm(name):
    # Program names are truncated to 15 characters: sched_wakeup_ne.
    return "sched_wakeup_new" if name.startswith("sched_wakeup_ne") else name

def owned_ids(pid):
    """Program ids held by pid: bpf-prog fds and the prog_id of bpf_link fds (/proc fdinfo)."""
    ids = set()
    d = f"/proc/{pid}/fdinfo"
    try:
        fds = os.listdir(d)
    except OSError:
        return ids
    for fd in fds:
        try:
            with open(f"{d}/{fd}") as f:
                for line in f:
                    if line.startswith("prog_id:"):
                        ids.add(int(line.split()[1]))
        except OSError:
            pass
    return ids

def progs(snap, pid, comm):
    """{name: [prog,...]} for sched_* programs owned by pid (fdinfo, or bpftool's pids array)."""
    mine = owned_ids(pid)
    out = {}
    for p in snap:
        owners = p.get("pids") or []
        if p["id"] not in mine and not any(o.get("pid") == pid or o.get("comm") == comm
                                           for o in owners):
            continue
        n = norm(p.get("name", ""))
        if n in ("sched_switch", "sched_wakeup", "sched_wakeup_new"):
            out.setdefault(n, []).append(p)
    return out

def cmd_loaded(snapfile, pid, comm, need):
    # need: comma-separated program names that must be loaded. kqosd loads sched_wakeup only
    # where the kernel has no CONFIG_SCHED_INFO, so for kqosd only sched_switch is required.
    snap = json.load(open(snapfile))
    got = progs(snap, int(pid), comm)
    sys.exit(0 if all(n in got for n in need.split(",")) else 1)

def cmd_foreign(snapfile):
    # sched_* programs of other processes (other tests running on the machine pollute throughput).
    snap = json.load(open(snapfile))
    print(sum(1 for p in snap if norm(p.get("name", "")).startswith("sched_")))

def cmd_delta(before, after, pid, comm, rnd, cond):
    pid = int(pid)
    b = {p["id"]: p for p in json.load(open(before))}
    a = progs(json.load(open(after)), pid, comm)
    for name, ps in a.items():
        rt = cnt = 0
        for p in ps:
            q = b.get(p["id"], {})
            rt += p.get("run_time_ns", 0) - q.get("run_time_ns", 0)
            cnt += p.get("run_cnt", 0) - q.get("run_cnt", 0)
        print(f"{rnd}\t{cond}\t{name}.rt\t{rt}")
        print(f"{rnd}\t{cond}\t{name}.cnt\t{cnt}")

def cmd_shuffle(seed, rnd, *conds):
    r = random.Random(f"{seed}-{rnd}")
    c = list(conds)
    r.shuffle(c)
    print(" ".join(c))

def cmd_yaml_rate(path):
    # stress-ng --yaml: "bogo-ops-per-second-real-time: N" under "- stressor: switch".
    cur = None
    for line in open(path):
        s = line.strip()
        if s.startswith("- stressor:"):
            cur = s.split(":", 1)[1].strip()
        elif cur == "switch" and s.startswith("bogo-ops-per-second-real-time:"):
            print(s.split(":", 1)[1].strip())
            return
    sys.exit(1)

# --- reporting ---

def load(path):
    d = {}
    for line in open(path):
        r, c, k, v = line.rstrip("\n").split("\t")
        d.setdefault(int(r), {}).setdefault(c, {})[k] = float(v)
    return d

def cost(m):
    """Per-tool in-kernel figures from Δrun_time/Δrun_cnt of one stats run."""
    if not m or m.get("sched_switch.cnt", 0) <= 0:
        return None
    sw_rt, sw_n = m["sched_switch.rt"], m["sched_switch.cnt"]
    r = {"sw_ns": sw_rt / sw_n, "sw_n": sw_n, "rt": sw_rt}
    for k, tag in (("sched_wakeup", "wk"), ("sched_wakeup_new", "wn")):
        # A program that is not loaded (kqosd with sched_info) has no .cnt key: None, not 0.
        loaded = k + ".cnt" in m
        n, rt = m.get(k + ".cnt", 0), m.get(k + ".rt", 0)
        r[tag + "_loaded"] = loaded
        r[tag + "_ns"] = rt / n if n > 0 else None
        r[tag + "_ratio"] = n / sw_n if loaded else None
        r[tag + "_n"] = n
        r["rt"] += rt
    # ns per context switch = switch + wakeup_ns * (wakeups / switches) (+ the same for wakeup_new)
    # = total run time of the tool's sched_* programs / switches; only sched_switch when the tool
    # has no wakeup programs.
    r["per_switch"] = r["rt"] / sw_n
    return r

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def f(x, fmt="{:.0f}"):
    return "n/a" if x is None else fmt.format(x)

def mark(ok):
    return "" if ok is None else ("  ok" if ok else "  MISSED")

TOOLS = ("none", "kqos", "kqospmu", "runqlat", "kqoswatch")

def round_figures(rd):
    """(kqos, runqlat, ratio, tput, tput x none, ctxt, kqospmu, kqospmu - kqos ns/switch)"""
    k, q = cost(rd.get("stats/kqos")), cost(rd.get("stats/runqlat"))
    kp = cost(rd.get("stats/kqospmu"))
    kw = cost(rd.get("stats/kqoswatch"))
    t = {c: rd.get("tput/" + c, {}).get("bogo") for c in TOOLS}
    cx = {c: rd.get("tput/" + c, {}).get("ctxt") for c in TOOLS}
    ratio = k["per_switch"] / q["per_switch"] if k and q else None
    tr = {c: (t[c] / t["none"] if t[c] and t["none"] else None) for c in TOOLS[1:]}
    pmu = kp["per_switch"] - k["per_switch"] if k and kp else None
    wr = kw["per_switch"] / k["per_switch"] if k and kw else None
    return k, q, ratio, t, tr, cx, kp, pmu, kw, wr

def prog_part(c, tag, label, rfmt):
    if not c[tag + "_loaded"]:
        return f"  {label} not loaded"
    return f"  {label} {f(c[tag + '_ns'], '{:6.0f}')} ns x {f(c[tag + '_ratio'], rfmt)}"

def tool_line(name, c):
    if not c:
        return f"  {name:8s} no stats"
    return (f"  {name:8s} switch {c['sw_ns']:6.0f} ns"
            + prog_part(c, "wk", "wakeup", "{:.2f}") + prog_part(c, "wn", "wakeup_new", "{:.4f}")
            + f"  => {c['per_switch']:6.0f} ns/switch  ({c['sw_n']/1e6:.2f} M switch events)")

def cmd_round(path, rnd):
    rnd = int(rnd)
    rd = load(path).get(rnd, {})
    k, q, ratio, t, tr, cx, kp, pmu, kw, wr = round_figures(rd)
    print(f"round {rnd} results:")
    print(tool_line("kqos", k))
    print(tool_line("kqospmu", kp))
    print(tool_line("kqoswatch", kw))
    print(f"  kqoswatch/kqos ns/switch {f(wr, '{:.2f}')} (every wait of the load watched, 1 us target)")
    print(tool_line("runqlat", q))
    print(f"  ratio kqos/runqlat ns/switch {f(ratio, '{:.2f}')}")
    print(f"  kqos+{os.environ['PMU_EVENTS']} counters {f(kp and kp['per_switch'])} ns/switch"
          f" against kqos {f(k and k['per_switch'])}: counters cost {f(pmu, '{:+.0f}')} ns/switch")
    for c in TOOLS:
        extra = "" if c == "none" else f"  x none {f(tr[c], '{:.3f}')}"
        cpu = rd.get("tput/" + c, {}).get("tool_cpu_us")
        cpu_s = "" if cpu is None else f"  tool CPU {cpu / 1000:.1f} ms"
        print(f"  tput {c:8s} {f(t[c])} bogo ops/s  ({f(cx[c])} ctxt/s machine-wide){extra}{cpu_s}")
    noisy = sorted(c for c, m in rd.items() if m.get("noisy"))
    if noisy:
        print(f"  noisy (machine not quiet before the run): {' '.join(noisy)}")

def cmd_summary(path):
    d = load(path)
    rounds = sorted(d)
    rows = [round_figures(d[r]) for r in rounds]
    comp = lambda key, i: [row[i][key] if row[i] else None for row in rows]
    keys = ("sw_ns", "wk_ns", "wn_ns", "wk_ratio", "per_switch")
    kq = {x: med(comp(x, 0)) for x in keys}
    rq = {x: med(comp(x, 1)) for x in keys}
    kp = {x: med(comp(x, 6)) for x in keys}
    kw = {x: med(comp(x, 8)) for x in keys}
    wr = med([row[9] for row in rows])
    # kqosd loads no wakeup programs on kernels with CONFIG_SCHED_INFO.
    kq_wk_loaded = any(row[0]["wk_loaded"] for row in rows if row[0])
    ratio = med([row[2] for row in rows])
    pmu = med([row[7] for row in rows])
    tput = {c: med([row[3][c] for row in rows]) for c in TOOLS}
    ctxt = {c: med([row[5][c] for row in rows]) for c in TOOLS}
    tr = {c: med([row[4][c] for row in rows]) for c in TOOLS[1:]}
    npmu = os.environ["PMU_EVENTS"]
    print()
    print(f"=== medians over {len(rounds)} rounds (ratios and counter cost: median of per-round"
          " figures) ===")
    print("in-kernel cost (bpf_stats on), ns per event:")
    print(f"  {'tool':8s} {'switch':>7s} {'wakeup':>7s} {'wk/sw':>6s} {'wk_new':>7s} {'ns/switch':>10s}")
    for name, c in (("kqos", kq), ("kqospmu", kp), ("kqoswatch", kw), ("runqlat", rq)):
        print(f"  {name:8s} {f(c['sw_ns']):>7s} {f(c['wk_ns']):>7s} {f(c['wk_ratio'], '{:.2f}'):>6s}"
              f" {f(c['wn_ns']):>7s} {f(c['per_switch']):>10s}")
    ok_ns = None if kq["per_switch"] is None else kq["per_switch"] <= float(os.environ["TARGET_NS"])
    ok_wk = None if kq["wk_ns"] is None else kq["wk_ns"] <= 100
    ok_ratio = None if ratio is None else ratio <= float(os.environ["TARGET_RATIO"])
    ok_pmu = None if kp["per_switch"] is None else kp["per_switch"] <= float(os.environ["TARGET_PMU_NS"])
    print(f"  kqos ns/switch    {f(kq['per_switch']):>6s}   target <= {os.environ['TARGET_NS']}{mark(ok_ns)}")
    if kq_wk_loaded:
        print(f"  kqos wakeup ns    {f(kq['wk_ns']):>6s}   target <= 100{mark(ok_wk)}")
    else:
        print("  kqos wakeup: not loaded (sched_info)")
    print(f"  kqos/runqlat      {f(ratio, '{:.2f}'):>6s}   target <= {os.environ['TARGET_RATIO']}{mark(ok_ratio)}")
    print(f"  {'kqos+' + npmu + ' counters':17s} {f(kp['per_switch']):>6s}   (kqos without counters"
          f" {f(kq['per_switch'])}, counters {f(pmu, '{:+.0f}')} ns/switch)")
    print(f"  kqos with {npmu} counters <= {os.environ['TARGET_PMU_NS']} ns/switch{mark(ok_pmu)}")
    ok_w = None if wr is None else wr <= 1.1
    print(f"  kqos with LS watches on the load (1 us target: every wait looked up) x kqos"
          f" {f(wr, '{:.2f}')}   target <= 1.1{mark(ok_w)}")
    print("context-switch throughput (bpf_stats off), stress-ng --switch bogo ops/s:")
    for c in TOOLS:
        x = "" if c == "none" else f"  x none {f(tr[c], '{:.3f}')}"
        print(f"  {c:8s} {f(tput[c]):>9s}  ({f(ctxt[c])} ctxt/s){x}")
    ok_t = None if tr["kqos"] is None else tr["kqos"] >= float(os.environ["TARGET_TPUT"])
    closer = None
    if tr["kqos"] is not None and tr["runqlat"] is not None and tr["runqlat"] < 1:
        closer = (1 - tr["kqos"]) <= (1 - tr["runqlat"]) / 2
    print(f"  kqos x none       {f(tr['kqos'], '{:.3f}'):>6s}   target >= {os.environ['TARGET_TPUT']}{mark(ok_t)}")
    print(f"  kqos loss <= half of runqlat's loss{mark(closer)}")
    noisy = sum(1 for r in rounds for m in d[r].values() if m.get("noisy"))
    runs = sum(len(d[r]) for r in rounds)
    if noisy:
        print(f"warning: {noisy} of {runs} runs started on a busy machine; treat with care")
    print()
    print("summary"
          f" rounds={len(rounds)}"
          f" kqos_ns_per_switch={f(kq['per_switch'])}"
          f" kqos_switch_ns={f(kq['sw_ns'])}"
          f" kqos_wakeup_ns={f(kq['wk_ns']) if kq_wk_loaded else 'not_loaded'}"
          f" runqlat_ns_per_switch={f(rq['per_switch'])}"
          f" runqlat_switch_ns={f(rq['sw_ns'])}"
          f" runqlat_wakeup_ns={f(rq['wk_ns'])}"
          f" wakeup_per_switch={f(kq['wk_ratio'] if kq_wk_loaded else rq['wk_ratio'], '{:.2f}')}"
          f" ratio={f(ratio, '{:.2f}')}"
          f" none_bogo_ops_s={f(tput['none'])}"
          f" kqos_tput_ratio={f(tr['kqos'], '{:.3f}')}"
          f" runqlat_tput_ratio={f(tr['runqlat'], '{:.3f}')}"
          f" kqospmu_ns_per_switch={f(kp['per_switch'])}"
          f" kqospmu_tput_ratio={f(tr['kqospmu'], '{:.3f}')}"
          f" kqoswatch_ns_per_switch={f(kw['per_switch'])}"
          f" kqoswatch_x_kqos={f(wr, '{:.2f}')}"
          f" kqoswatch_tput_ratio={f(tr['kqoswatch'], '{:.3f}')}"
          f" noisy_runs={noisy}")

if __name__ == "__main__":
    globals()["cmd_" + sys.argv[1]](*sys.argv[2:])
PY
ana() {
	TARGET_NS=$TARGET_NS TARGET_RATIO=$TARGET_RATIO TARGET_TPUT=$TARGET_TPUT \
		TARGET_PMU_NS=$TARGET_PMU_NS PMU_EVENTS=$PMU_EVENTS python3 "$WORK/ana.py" "$@"
}

# --- tools ---------------------------------------------------------------------------------------
snapshot() {
	bpftool -j prog show >"$1"
}

perf_fds() { # number of perf_event fds a pid holds
	local fd n=0
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1))
	done
	echo "$n"
}

# tool_comm kqos|kqospmu|runqlat: the process name, which also names the tool's log in $WORK.
tool_comm() {
	case $1 in
	kqos | kqospmu | kqoswatch) echo kqosd ;;
	*) echo "$1" ;;
	esac
}

# start_tool kqos|kqospmu|runqlat: starts it in the background, sets TOOL_PID, waits for its
# programs: sched_switch and sched_wakeup for runqlat; sched_switch only for kqosd, which loads
# its wakeup programs only on kernels without CONFIG_SCHED_INFO. kqospmu also waits for the perf
# event fds of its counters. --socket "" keeps kqosd from creating /run/kqos/kqos.sock.
start_tool() {
	local comm need=sched_switch i nfd=0 want=0
	comm=$(tool_comm "$1")
	case $1 in
	kqos)
		"$KQOSD" --interval 1s --log-level warn --socket "" >"$WORK/kqosd.log" 2>&1 &
		;;
	kqospmu)
		"$KQOSD" --config "$PMU_CONFIG" --interval 1s --log-level warn --socket "" \
			>"$WORK/kqosd.log" 2>&1 &
		want=$((PMU_EVENTS * $(getconf _NPROCESSORS_ONLN)))
		;;
	kqoswatch)
		"$KQOSD" --config "$WATCH_CONFIG" --interval 1s --log-level warn --socket "" \
			>"$WORK/kqosd.log" 2>&1 &
		;;
	runqlat)
		"$RUNQLAT" 60 >"$WORK/runqlat.log" 2>&1 &
		need=sched_switch,sched_wakeup
		;;
	esac
	TOOL_PID=$!
	for ((i = 0; i < LOAD_TIMEOUT * 10; i++)); do
		if ! kill -0 "$TOOL_PID" 2>/dev/null; then
			echo "overhead: $1 exited early; its output:" >&2
			cat "$WORK/$comm.log" >&2
			TOOL_PID=
			return 1
		fi
		snapshot "$WORK/probe.json"
		[ "$want" -eq 0 ] || nfd=$(perf_fds "$TOOL_PID")
		if [ "$nfd" -ge "$want" ] && ana loaded "$WORK/probe.json" "$TOOL_PID" "$comm" "$need"; then
			# A fallback kqosd loads its wakeup programs with sched_switch, in one object load.
			sleep 0.2
			return 0
		fi
		sleep 0.1
	done
	if [ "$nfd" -lt "$want" ]; then
		echo "overhead: $1 opened $nfd perf event fds within ${LOAD_TIMEOUT}s, expected $want;" \
			"its output:" >&2
		cat "$WORK/$comm.log" >&2
	else
		echo "overhead: $1 programs ($need) did not appear in bpftool within ${LOAD_TIMEOUT}s" >&2
	fi
	stop_tool
	return 1
}

stop_tool() {
	[ -n "$TOOL_PID" ] || return 0
	kill -TERM "$TOOL_PID" 2>/dev/null || true
	wait "$TOOL_PID" 2>/dev/null || true
	TOOL_PID=
}

cpu_us() { # on-CPU time of a pid's main thread in µs (/proc/PID/schedstat, first field in ns)
	local ns _
	read -r ns _ <"/proc/$1/schedstat" || return 1
	echo $((ns / 1000))
}

ctxt() {
	awk '$1 == "ctxt" { print $2 }' /proc/stat
}

# run_load round condition: stress-ng --switch, records bogo ops/s and machine-wide ctxt/s.
run_load() {
	local c0 c1 t0 t1 rate
	c0=$(ctxt)
	t0=$(date +%s%N)
	# in its own cpu cgroup for every condition: the one kqoswatch watches
	sh -c 'echo $$ >"$1/cgroup.procs" && shift && exec "$@"' sh "$LOAD_CG" \
		stress-ng --switch "$STRESSORS" --timeout "${LOAD_SECS}s" --metrics-brief \
		--yaml "$WORK/load.yaml" >"$WORK/load.log" 2>&1 &
	LOAD_PID=$!
	if ! wait "$LOAD_PID"; then
		LOAD_PID=
		echo "overhead: stress-ng failed:" >&2
		cat "$WORK/load.log" >&2
		return 1
	fi
	LOAD_PID=
	t1=$(date +%s%N)
	c1=$(ctxt)
	rate=$(ana yaml_rate "$WORK/load.yaml") || {
		echo "overhead: no switch metrics in stress-ng output" >&2
		return 1
	}
	record "$1" "$2" bogo "$rate"
	record "$1" "$2" ctxt "$(((c1 - c0) * 1000000000 / (t1 - t0)))"
}

busy_pct() { # machine-wide non-idle CPU % over 0.5 s
	local -a a b
	read -r -a a < <(grep '^cpu ' /proc/stat)
	sleep 0.5
	read -r -a b < <(grep '^cpu ' /proc/stat)
	local i tot=0 idle
	for ((i = 1; i < ${#a[@]}; i++)); do
		tot=$((tot + b[i] - a[i]))
	done
	idle=$((b[4] - a[4] + b[5] - a[5]))
	echo $((tot > 0 ? (tot - idle) * 100 / tot : 0))
}

# The machine may be shared: wait up to QUIET_WAIT s for other load and other processes' sched_*
# BPF programs to go away. Measure anyway after that, but flag the condition as noisy.
wait_quiet() { # round condition
	local i busy n
	for ((i = 0; i <= QUIET_WAIT; i++)); do
		snapshot "$WORK/pre.json"
		n=$(ana foreign "$WORK/pre.json")
		busy=$(busy_pct)
		if [ "$n" -eq 0 ] && [ "$busy" -le "$QUIET_BUSY" ]; then
			return 0
		fi
		sleep 0.5
	done
	echo "  warning: $2: machine not quiet (CPU ${busy}% busy, $n foreign sched_* programs)" >&2
	record "$1" "$2" noisy 1
}

# run_condition round stats|tput/none|kqos|kqospmu|runqlat
run_condition() {
	local rnd=$1 cond=$2 kind=${2%%/*} tool=${2#*/} comm c0
	wait_quiet "$rnd" "$cond"
	if [ "$kind" = stats ]; then set_stats 1; else set_stats 0; fi
	if [ "$tool" != none ]; then
		start_tool "$tool" || return 1
	fi
	comm=$(tool_comm "$tool")
	snapshot "$WORK/before.json"
	[ "$tool" = none ] || c0=$(cpu_us "$TOOL_PID")
	run_load "$rnd" "$cond" || {
		stop_tool
		return 1
	}
	if [ "$tool" != none ]; then
		snapshot "$WORK/after.json"
		record "$rnd" "$cond" tool_cpu_us "$(($(cpu_us "$TOOL_PID") - c0))"
		if [ "$kind" = stats ]; then
			ana delta "$WORK/before.json" "$WORK/after.json" "$TOOL_PID" "$comm" \
				"$rnd" "$cond" >>"$DATA"
		fi
		stop_tool
	fi
	set_stats 0
	printf '  %-14s %s bogo ops/s\n' "$cond" "$(awk -F'\t' -v r="$rnd" -v c="$cond" \
		'$1 == r && $2 == c && $3 == "bogo" { printf "%.0f", $4 }' "$DATA")"
}

# --- main ----------------------------------------------------------------------------------------
SEED=${SEED:-$RANDOM}
CONDS=(stats/kqos stats/kqospmu stats/kqoswatch stats/runqlat tput/none tput/kqos tput/kqospmu
	tput/kqoswatch tput/runqlat)
: >"$DATA"
# kqospmu: 3 software counters (no hardware PMU on the development VM; hardware events are off).
PMU_CONFIG=$WORK/kqos-pmu.json
cat >"$PMU_CONFIG" <<'JSON'
{"pmu": {"cycles": "", "instructions": "", "llcMisses": "", "extra": ["context-switches", "task-clock", "cpu-clock"]}}
JSON
# kqoswatch: the latency guard watches the load's cgroup with a 1 us target, so every wait of
# the load takes the watch path (lookup, clock, rate limit): its worst case.
WATCH_CONFIG=$WORK/kqos-watch.json
cat >"$WATCH_CONFIG" <<'JSON'
{"pods": {"source": "static", "groups": [{"name": "sw", "cgroup": "/kqos-bench-sw", "qosClass": "LS", "waitTarget": "1us"}]},
 "strategies": {"latencyGuard": {"enable": true}}}
JSON
echo "kqos overhead benchmark: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uname -r), $(nproc) CPUs"
echo "kqosd $KQOSD ($("$KQOSD" --version 2>/dev/null | head -n1)); runqlat $RUNQLAT;" \
	"$(stress-ng --version 2>/dev/null | head -n1)"
echo "rounds $ROUNDS, load stress-ng --switch $STRESSORS --timeout ${LOAD_SECS}s, seed $SEED," \
	"loadavg $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= ROUNDS; r++)); do
	read -r -a order <<<"$(ana shuffle "$SEED" "$r" "${CONDS[@]}")"
	echo "round $r/$ROUNDS: ${order[*]} (loadavg $(cut -d' ' -f1 /proc/loadavg))"
	for c in "${order[@]}"; do
		run_condition "$r" "$c" || die "round $r condition $c could not run"
	done
	ana round "$DATA" "$r"
done
ana summary "$DATA"
