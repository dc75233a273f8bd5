#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# bench/scale.sh: kqosd's own cost at 100, 1000 and 5000 running cgroups, every 1 s and 100 ms,
# next to the BPF batch-read floor measured in the same run; with BASE, side by side with
# another kqosd build (the one before a change).
#
# Load (bench/scaleload.c): N pods in a PodList file, each with one container cgroup whose
# thread wakes every WAKE_MS, laid out as kubelet's cgroupfs driver does on v1 (cpu, cpuacct).
# kqosd runs with pods.source "file" on that list, dry-run (it decides, never writes).
#
# Per round, sizes in a random order; per size, every (binary, interval) in a random order:
# start kqosd, wait WARM s, then over MEASURE s its CPU (all threads' schedstat run time), its
# RSS (and the anonymous part of it: the rest is shared library text) at the end and, where it answers, its stage timers (status request). The floor is
# bench/mapfloor: a per-CPU hash of the same entries and value size, batch-read 256 keys a call.
# Medians over ROUNDS with the per-round values; nothing is asserted.
#
# Environment: ROUNDS (5), SIZES ("100 1000 5000"), WAKES ("20 20 100", ms per size: 5000
# threads every 20 ms would need more than 2 CPUs), INTERVALS ("1s 100ms"), WARM (5),
# MEASURE (10), KQOSD (.output/kqosd), BASE (a second kqosd binary; BASE_REV=git-rev builds one
# into a worktree), SEED, OUTPUT.
set -euo pipefail

ROUNDS=${ROUNDS:-5}
SIZES=${SIZES:-"100 1000 5000"}
WAKES=${WAKES:-"20 20 100"}
INTERVALS=${INTERVALS:-"1s 100ms"}
WARM=${WARM:-5}
MEASURE=${MEASURE:-10}
REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUTPUT=${OUTPUT:-$REPO/.output}
KQOSD=${KQOSD:-$OUTPUT/kqosd}
BASE=${BASE:-}
SEED=${SEED:-$RANDOM}
VALUE_SIZE=136      # sizeof(struct kqos_cg_stats): the 17 u64 counters a tick reads
VALUE_SIZE_OLD=1160 # the same with the 256-slot u32 histogram, as every tick read it before cg_hist

die() {
	echo "scale: $*" >&2
	exit 2
}

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || die "ROUNDS must be a positive integer, got '$ROUNDS'"
[[ $WARM =~ ^[0-9]+$ && $MEASURE =~ ^[1-9][0-9]*$ ]] || die "WARM and MEASURE are seconds"
[ "$(id -u)" -eq 0 ] || die "must run as root (BPF, cgroups)"
read -ra sizes <<<"$SIZES"
read -ra wakes <<<"$WAKES"
read -ra intervals <<<"$INTERVALS"
[ ${#sizes[@]} -eq ${#wakes[@]} ] || die "WAKES needs one value per size in SIZES"
command -v python3 >/dev/null || die "python3 missing (apt-get install python3)"
make -C "$REPO" --no-print-directory OUTPUT="$OUTPUT" "$KQOSD" "$OUTPUT/bench/scaleload" \
	"$OUTPUT/bench/mapfloor" >&2 || die "could not build kqosd and the bench tools"
if [ -z "$BASE" ] && [ -n "${BASE_REV:-}" ]; then
	wt=$REPO/.bench-base-$BASE_REV
	[ -d "$wt" ] || git -C "$REPO" worktree add --detach "$wt" "$BASE_REV" >&2
	make -C "$wt" --no-print-directory OUTPUT="$wt/.output" "$wt/.output/kqosd" >&2 || die "could not build kqosd at $BASE_REV"
	BASE=$wt/.output/kqosd
fi
bins=(now)
[ -n "$BASE" ] && bins+=(base)

WORK=$(mktemp -d /tmp/kqos-scale.XXXXXX)
DATA=$WORK/data.tsv # round size interval bin key value
ROOT=kqos-scale-$$
LOAD_PID=
KQ_PID=

stop_pid() {
	local pid=$1
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	trap - EXIT INT TERM
	stop_pid "$KQ_PID"
	stop_pid "$LOAD_PID"
	rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

shuffle() {
	python3 -c 'import random,sys; r=random.Random(int(sys.argv[1])); a=sys.argv[2:]; r.shuffle(a); print(" ".join(a))' "$@"
}

start_load() { # N WAKE_MS
	"$OUTPUT/bench/scaleload" "$1" "$ROOT" "$WORK/pods.json" "$2" >"$WORK/load.out" 2>&1 &
	LOAD_PID=$!
	for _ in $(seq 600); do
		grep -q ready "$WORK/load.out" 2>/dev/null && return 0
		kill -0 "$LOAD_PID" 2>/dev/null || break
		sleep 0.1
	done
	cat "$WORK/load.out" >&2
	die "the load of $1 pods did not come up"
}

write_config() { # INTERVAL
	cat >"$WORK/kqosd.json" <<EOF
{"interval": "$1", "dryRun": true, "logLevel": "warn", "stateDir": "$WORK/state",
 "export": {"socket": "$WORK/kqos.sock"},
 "pods": {"source": "file", "file": {"path": "$WORK/pods.json"}, "maxPods": 100000}}
EOF
}

cpu_ns() { # PID: time on CPU of all its threads, ns (schedstat: finer than utime's ticks)
	cat /proc/"$1"/task/*/schedstat | awk '{s += $1} END {print s}'
}

status_stages() { # socket: "stage mean_us" lines
	python3 - "$WORK/kqos.sock" <<'EOF' 2>/dev/null || true
import json, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(3)
s.connect(sys.argv[1])
s.sendall(b"status\n")
buf = b""
while not buf.endswith(b"\n"):
    c = s.recv(65536)
    if not c:
        break
    buf += c
st = json.loads(buf).get("stages", {})
for k, v in st.items():
    print(k, v.get("mean_us", 0))
EOF
}

run_one() { # ROUND SIZE INTERVAL BIN
	local r=$1 n=$2 iv=$3 bin=$4 exe=$KQOSD a b rss anon
	[ "$bin" = base ] && exe=$BASE
	write_config "$iv"
	rm -f "$WORK/kqos.sock"
	"$exe" --config "$WORK/kqosd.json" 2>"$WORK/kqosd.log" &
	KQ_PID=$!
	sleep "$WARM"
	kill -0 "$KQ_PID" 2>/dev/null || { cat "$WORK/kqosd.log" >&2; die "$bin kqosd exited"; }
	a=$(cpu_ns "$KQ_PID")
	sleep "$MEASURE"
	b=$(cpu_ns "$KQ_PID")
	rss=$(awk '/^VmRSS/ {print $2}' "/proc/$KQ_PID/status")
	anon=$(awk '/^RssAnon/ {print $2}' "/proc/$KQ_PID/status")
	{
		printf '%s\t%s\t%s\t%s\tcpu_pct\t%s\n' "$r" "$n" "$iv" "$bin" \
			"$(python3 -c "print(($b - $a) * 100 / 1e9 / $MEASURE)")"
		printf '%s\t%s\t%s\t%s\trss_mb\t%s\n' "$r" "$n" "$iv" "$bin" \
			"$(python3 -c "print($rss / 1024)")"
		printf '%s\t%s\t%s\t%s\tanon_mb\t%s\n' "$r" "$n" "$iv" "$bin" \
			"$(python3 -c "print($anon / 1024)")"
	} >>"$DATA"
	status_stages | while read -r stage us; do
		printf '%s\t%s\t%s\t%s\tstage_%s\t%s\n' "$r" "$n" "$iv" "$bin" "$stage" "$us" >>"$DATA"
	done
	stop_pid "$KQ_PID"
	KQ_PID=
	echo "scale: round $r n=$n $iv $bin done" >&2
}

echo "scale: seed $SEED, rounds $ROUNDS, sizes ${sizes[*]} (wake ${wakes[*]} ms), intervals ${intervals[*]}, warm ${WARM}s, measure ${MEASURE}s" >&2
for ((r = 1; r <= ROUNDS; r++)); do
	for i in $(shuffle $((SEED + r)) "${!sizes[@]}"); do
		n=${sizes[$i]}
		start_load "$n" "${wakes[$i]}"
		{
			printf '%s\t%s\t-\t-\tfloor_us\t%s\n' "$r" "$n" \
				"$("$OUTPUT/bench/mapfloor" "$n" "$VALUE_SIZE" 30)"
			printf '%s\t%s\t-\t-\tfloor_old_us\t%s\n' "$r" "$n" \
				"$("$OUTPUT/bench/mapfloor" "$n" "$VALUE_SIZE_OLD" 30)"
		} >>"$DATA"
		conds=()
		for iv in "${intervals[@]}"; do
			for bin in "${bins[@]}"; do conds+=("$iv/$bin"); done
		done
		for c in $(shuffle $((SEED * 7 + r * 31 + i)) "${conds[@]}"); do
			run_one "$r" "$n" "${c%/*}" "${c#*/}"
		done
		stop_pid "$LOAD_PID"
		LOAD_PID=
	done
done

python3 - "$DATA" "$MEASURE" "${sizes[*]}" "${intervals[*]}" "${bins[*]}" <<'EOF'
import collections, statistics, sys

path, measure, sizes, intervals, bins = sys.argv[1], float(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5].split()
d = collections.defaultdict(list)
for line in open(path):
    r, n, iv, b, k, v = line.rstrip("\n").split("\t")
    d[(n, iv, b, k)].append(float(v))

def secs(iv):
    return float(iv[:-2]) / 1000 if iv.endswith("ms") else float(iv[:-1])

def med(vals):
    return statistics.median(vals) if vals else float("nan")

def per_round(vals, fmt):
    return "[" + " ".join(fmt % v for v in vals) + "]"

print("kqosd's own cost: median of %d rounds [per-round values]" % len(d[(sizes[0], intervals[0], bins[0], "cpu_pct")]))
print("floor: the batch read of N counter entries (136 B per CPU); with the histogram in the entry (1160 B), as before cg_hist:")
for n in sizes:
    print("  %-6s %.3f us/cgroup (with histograms %.3f)" % (n, med(d[(n, "-", "-", "floor_us")]), med(d[(n, "-", "-", "floor_old_us")])))
print("%-6s %-6s %-5s %8s %-32s %7s %-30s %7s %9s %9s %7s" % ("pods", "every", "bin", "cpu%", "[rounds]", "RSS_MB", "[rounds]", "anon_MB", "us/cg/tick", "floor_us", "x_floor"))
for n in sizes:
    floor = med(d[(n, "-", "-", "floor_us")])
    for iv in intervals:
        for b in bins:
            cpu = d[(n, iv, b, "cpu_pct")]
            rss = d[(n, iv, b, "rss_mb")]
            per = med(cpu) / 100 * secs(iv) / int(n) * 1e6  # CPU s per tick per cgroup, in us
            anon = med(d[(n, iv, b, "anon_mb")])
            print("%-6s %-6s %-5s %8.2f %-32s %7.1f %-30s %7.1f %9.2f %9.3f %7.1f" % (n, iv, b, med(cpu), per_round(cpu, "%.2f"), med(rss), per_round(rss, "%.1f"), anon, per, floor, per / floor if floor else float("nan")))
if len(bins) > 1:
    print()
    print("now / base (median CPU and RSS)")
    for n in sizes:
        for iv in intervals:
            c = [med(d[(n, iv, b, "cpu_pct")]) for b in ("now", "base")]
            m = [med(d[(n, iv, b, "rss_mb")]) for b in ("now", "base")]
            print("%-6s %-6s cpu %.2f%% vs %.2f%% (x%.2f)  rss %.1f vs %.1f MB (x%.2f)" % (n, iv, c[0], c[1], c[0] / c[1] if c[1] else float("nan"), m[0], m[1], m[0] / m[1] if m[1] else float("nan")))
print()
print("stage timers of 'now' (CPU us per tick, mean since start, median of rounds)")
stages = ["collect", "build", "decide", "apply", "export", "tick", "wall"]
print("%-6s %-6s " % ("pods", "every") + " ".join("%9s" % s for s in stages))
for n in sizes:
    for iv in intervals:
        print("%-6s %-6s " % (n, iv) + " ".join("%9.1f" % med(d[(n, iv, "now", "stage_" + s)]) for s in stages))
print()
print("growth: us per cgroup per tick of 'now' by size (flat = linear total cost)")
for iv in intervals:
    row = []
    for n in sizes:
        row.append("%s: %.2f" % (n, med(d[(n, iv, "now", "cpu_pct")]) / 100 * secs(iv) / int(n) * 1e6))
    print("%-6s %s" % (iv, "  ".join(row)))
EOF
