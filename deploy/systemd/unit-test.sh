#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make unit-test: deploy/kqosd.service run by systemd, as root on this host. This machine's init
# is not systemd, so the test boots one: a privileged podman container with systemd 252 as PID 1
# (deploy/systemd/Containerfile), the source tree mounted read-only, `make install` inside, then:
#   - systemctl start: active, and the process has exactly deploy/capabilities, no_new_privs and
#     a seccomp filter; kqos-top --check healthy; systemd-analyze security (online) as offline;
#   - the README's bare-metal example as /etc/kqos/kqosd.json, LS and BE busy loops in their
#     groups: BE's cpu.shares at 2, kqos.prom written (ExecStartPre made the textfile dir);
#   - systemctl reload re-reads the config; systemctl stop restores cpu.shares, no journal left.
# The container, and with it every cgroup and process it made, is removed on any exit.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

OUTPUT=${OUTPUT:-$PWD/.output}
ENGINE=${ENGINE:-podman}
BASE=${BASE:-localhost/kqos-debian:12}
IMAGE=localhost/kqos-systemd-test:latest
read -r -a ENGINE_FLAGS <<<"${ENGINE_FLAGS:---runtime runc --ulimit nofile=16384:16384 --ulimit nproc=8192:8192}"
name=kqos-unittest-$$
passed=0
failed=0

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

# A command in the booted machine; its output on stdout.
in_vm() {
	"$ENGINE" exec "$name" sh -c "$1" 2> >(grep -v 'systemd connection' >&2)
}

cleanup() {
	"$ENGINE" rm -f -t 0 "$name" >/dev/null 2>&1
	echo "$passed passed, $failed failed"
}

wait_for() {
	local ms=$1
	shift
	for ((t = 0; t < ms; t += 200)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

shares_are() {
	[ "$(in_vm 'cat /sys/fs/cgroup/cpu/kqos-be/cpu.shares')" = "$1" ]
}

# CapEff as the bit mask deploy/capabilities names.
want_caps() {
	local mask=0 cap
	declare -A num=([CAP_DAC_READ_SEARCH]=2 [CAP_PERFMON]=38 [CAP_BPF]=39)
	while read -r cap; do
		mask=$((mask | (1 << ${num[$cap]})))
	done < <(grep -v '^#' deploy/capabilities)
	printf '%016x' "$mask"
}

main() {
	local pid caps score
	[ "$(id -u)" = 0 ] || { not_ok "needs root"; exit 1; }
	[ -x "$OUTPUT/kqosd" ] || { not_ok "$OUTPUT/kqosd not built"; exit 1; }
	trap cleanup EXIT
	trap 'not_ok interrupted; exit 1' INT TERM
	"$ENGINE" image exists "$IMAGE" ||
		"$ENGINE" build --quiet "${ENGINE_FLAGS[@]}" --network=host --build-arg BASE="$BASE" \
			-t "$IMAGE" -f deploy/systemd/Containerfile deploy/systemd >/dev/null ||
		{ not_ok "cannot build $IMAGE"; exit 1; }
	"$ENGINE" run -d "${ENGINE_FLAGS[@]}" --name "$name" --privileged --systemd=always \
		--network=host -v "$PWD:/src:ro" -v "$OUTPUT:/out:ro" "$IMAGE" >/dev/null ||
		{ not_ok "cannot boot $IMAGE"; exit 1; }
	check "systemd boots as PID 1" wait_for 20000 in_vm 'systemctl is-system-running --wait'
	check "make install PREFIX=/usr/local" \
		in_vm 'make -s -C /src install OUTPUT=/out >/dev/null && systemctl daemon-reload'

	in_vm 'systemctl start kqosd'
	check "systemctl start kqosd: active" wait_for 10000 in_vm 'kqos-top --check'
	pid=$(in_vm 'systemctl show -p MainPID --value kqosd')
	caps=$(in_vm "sed -n 's/^CapEff:\t//p' /proc/$pid/status")
	check "kqosd runs with exactly deploy/capabilities ($caps)" test "$caps" = "$(want_caps)"
	check "... with no_new_privs and a seccomp filter" \
		in_vm "grep -q '^NoNewPrivs:.1' /proc/$pid/status && grep -q '^Seccomp:.2' /proc/$pid/status"
	score=$(in_vm 'systemd-analyze security kqosd' | sed -n 's/.*Overall exposure level for kqosd.service: \([0-9.]*\).*/\1/p')
	echo "# systemd-analyze security (online): $score"

	# shellcheck disable=SC2016 # $g is the machine's shell's
	in_vm 'cp /usr/local/share/kqos/examples/bare-metal.json /etc/kqos/kqosd.json
		for g in ls be; do
			setsid /usr/local/share/kqos/examples/run-in-group.sh kqos-$g \
				sh -c "while :; do :; done" >/dev/null 2>&1 &
		done'
	check "run-in-group.sh made the groups" wait_for 5000 shares_are 1024
	in_vm 'systemctl restart kqosd'
	check "bare-metal example under the unit: BE's cpu.shares at 2" wait_for 20000 shares_are 2
	check "kqos.prom written in the textfile dir ExecStartPre made" \
		wait_for 15000 in_vm 'test -s /var/lib/prometheus/node-exporter/kqos.prom'
	in_vm 'systemctl reload kqosd' >/dev/null 2>&1
	check "systemctl reload: config reloaded" \
		wait_for 5000 in_vm "journalctl -u kqosd | grep -q 'config reloaded'"
	in_vm 'systemctl stop kqosd'
	check "systemctl stop: BE's cpu.shares back at 1024" shares_are 1024
	check "... no journal left" in_vm 'test ! -e /var/lib/kqos/journal'
	check "... and the unit ended cleanly" in_vm '! systemctl is-failed -q kqosd &&
		journalctl -u kqosd | grep -q "original cgroup values restored"'
	[ $failed -eq 0 ] || in_vm 'journalctl -u kqosd --no-pager | tail -20' | sed 's/^/# /'
	[ $failed -eq 0 ]
}

main "$@"
