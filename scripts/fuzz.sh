#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz: run each libFuzzer harness given for FUZZ_SECONDS against a scratch copy of its
# checked-in corpus (tests/fuzz/corpus/<name>/), so that a run never churns the tree. One
# harness at a time, one job: the machine is shared. Fails when any harness crashes, leaks,
# times out or runs out of memory; the input that did it is kept under $FUZZ_OUT/artifacts/.
#   FUZZ_RUNS=N   stop each harness after N executions instead (FUZZ_SECONDS still caps it)
# Each harness's log is kept as $FUZZ_OUT/logs/<name>.log.
# tests/fuzz/<name>.options holds a harness's own libFuzzer flags, one a line (-max_len=4096).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
secs=${FUZZ_SECONDS:-10}
out=${FUZZ_OUT:-.output-fuzz}
runs=${FUZZ_RUNS:-}
work=$(mktemp -d "$([ -w /dev/shm ] && echo /dev/shm || echo /tmp)/kqos-fuzz-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
rc=0 bad=()

# A JSON list seed longer than the harness's -max_len would reach the harness cut short, as a
# syntax error: its items also go in as one-item lists, so what the fixture holds stays in play.
split_items() {
	python3 - "$@" <<'PY'
import json, os, sys
max_len, out = int(sys.argv[1]), sys.argv[2]
for path in sys.argv[3:]:
    if os.path.getsize(path) <= max_len:
        continue
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
        items = doc["items"]
    except (ValueError, KeyError, TypeError):
        continue
    for i, item in enumerate(items):
        one = dict(doc, items=[item])
        with open(f"{out}/{os.path.basename(path)}.item{i}", "w") as f:
            json.dump(one, f, separators=(",", ":"))
PY
}

printf '%-22s %10s %6s %6s %8s %s\n' harness execs cov secs exec/s result
for bin in "$@"; do
	name=${bin##*/}
	corpus=tests/fuzz/corpus/$name
	art=$out/artifacts/$name
	mkdir -p "$work/$name" "$art" "$out/logs"
	[ -d "$corpus" ] && cp -r "$corpus"/. "$work/$name"/
	args=(-max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
		-artifact_prefix="$art/")
	[ -n "$runs" ] && args+=(-runs="$runs")
	[ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
	if [ -f "tests/fuzz/$name.options" ]; then
		mapfile -t opts < <(grep -v -e '^#' -e '^$' "tests/fuzz/$name.options")
		args+=("${opts[@]}")
		max_len=$(printf '%s\n' "${opts[@]}" | sed -n 's/^-max_len=//p' | tail -1)
		[ -n "$max_len" ] && [ -d "$corpus" ] &&
			split_items "$max_len" "$work/$name" "$corpus"/*
	fi
	log=$out/logs/$name.log
	"$bin" "${args[@]}" "$work/$name" >"$log" 2>&1
	st=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
	cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
	took=$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
	if [ $st -eq 0 ]; then
		res=ok
	else
		res="FAILED (exit $st, log: $log)"
		grep -E '^(==[0-9]+==ERROR|SUMMARY|artifact_prefix|Test unit written)' "$log" >&2
		bad+=("$name")
		rc=1
	fi
	printf '%-22s %10s %6s %6s %8s %s\n' "$name" "${execs:-?}" "${cov:-?}" "${took:-?}" \
		"${rate:-?}" "$res"
done
[ $rc -eq 0 ] && echo "fuzz: $# harnesses clean, ${secs}s each" || echo "fuzz: failed: ${bad[*]}" >&2
exit $rc
