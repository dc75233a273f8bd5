#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Run Criterion test binaries one after another and print one closing line over all of them.
# Live tests (tests/live/) need root and BPF; without root they are reported as skipped.
set -uo pipefail
passed=0 failed=0 skipped=0 bad=()
for bin in "$@"; do
	name=${bin##*/tests/}
	if [[ $name == live/* ]] && [ "$(id -u)" -ne 0 ]; then
		echo "== $name: skipped (needs root)"
		skipped=$((skipped + 1))
		continue
	fi
	echo "== $name"
	jobs=()
	# Live tests measure CPU time and share cgroups: run them one at a time. No --full-stats:
	# with it every passing assertion talks to the runner, also from a test's forked child.
	[[ $name == live/* ]] && jobs=(-j1)
	log=$(mktemp)
	"$bin" "${jobs[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	syn=$(grep -a 'Synthesis:' "$log" | tail -1)
	rm -f "$log"
	t=$(sed -n 's/.*Tested: \([0-9]*\).*/\1/p' <<<"$syn")
	p=$(sed -n 's/.*Passing: \([0-9]*\).*/\1/p' <<<"$syn")
	f=$(sed -n 's/.*Failing: \([0-9]*\).*/\1/p' <<<"$syn")
	c=$(sed -n 's/.*Crashing: \([0-9]*\).*/\1/p' <<<"$syn")
	s=$(sed -n 's/.*Skipped: \([0-9]*\).*/\1/p' <<<"$syn")
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0} + ${c:-0}))
	skipped=$((skipped + ${s:-0}))
	if [ "$rc" -ne 0 ] || [ -z "$t" ]; then
		bad+=("$name")
		[ -z "$t" ] && failed=$((failed + 1))
	fi
done
# The hotplug test takes CPU 1 offline and brings it back in its fixture; a test killed by a
# timeout skips its fixture, so make sure every CPU is back.
if [ "$(id -u)" -eq 0 ]; then
	for f in /sys/devices/system/cpu/cpu[0-9]*/online; do
		[ -w "$f" ] && [ "$(cat "$f")" = 0 ] && echo 1 >"$f" && echo "== brought ${f%/online} back online"
	done
fi
echo
[ ${#bad[@]} -gt 0 ] && echo "failing binaries: ${bad[*]}"
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ ${#bad[@]} -eq 0 ]
