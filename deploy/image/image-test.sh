#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make image-test: run the image the way deploy/kubernetes/base/daemonset.yaml runs it, on this
# host, as root, against real cgroups and real busy processes (docs/deploy.md).
#
#   the pod's settings as podman flags, read off the rendered DaemonSet by
#   deploy/check/podman-flags.mjs: host PID and network, read-only root, --cap-drop=all plus
#   exactly its capabilities, no-new-privileges, its memory limit and grace period, its env, its
#   mounts (/sys/fs at /host/sys/fs, BTF; the journal, socket, textfile and kubelet dirs and the
#   ConfigMap in a temp dir) and the ConfigMap's kqosd.json with its pod source swapped for two
#   static test groups (no kubelet here) and the cfsQuota policy (the cpuset policy never goes
#   below 2 CPUs, this host has 2). seccomp: RuntimeDefault as containerd has it, i.e. podman's
#   default with bpf/perf_event_open allowed under CAP_BPF/CAP_PERFMON (deploy/image/seccomp.py).
#
# It checks: BPF loads, libcurl loads (kqosd dlopen()s it), host cgroups are seen (kqos-top from the host and from inside), a busy
# BE group is suppressed next to a busy LS group, kqos.prom is written and passes promtool, the
# health check passes and then fails while kqosd is SIGSTOPped, `podman stop` restores every
# value byte for byte, and without any one of the capabilities kqosd refuses to start with its
# own message. Everything it makes (containers, cgroups, processes, files) goes on exit, pass
# or fail; what a killed run left is swept at the next.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1

OUTPUT=${OUTPUT:-$PWD/.output}
ENGINE=${ENGINE:-podman}
IMAGE=${IMAGE:-localhost/kqos/kqosd:latest}
read -r -a ENGINE_FLAGS <<<"${ENGINE_FLAGS:---runtime runc --ulimit nofile=16384:16384 --ulimit nproc=8192:8192}"
CAPS=() # the DaemonSet's capabilities.add, read with its other settings (pod_flags)
CG=/sys/fs/cgroup
CTRLS=(cpu cpuacct cpuset)
FILES=(cpu/cpu.cfs_quota_us cpu/cpu.cfs_period_us cpu/cpu.shares cpuset/cpuset.cpus
	cpuset/cpuset.mems)

me=$$
name=kqos-imgtest-$me
work=
pids=()
passed=0
failed=0

# podman 4.3 wants systemd as init for its health-check timers and says so on every run; this
# test runs the checks itself (podman healthcheck run), so that line is noise here.
engine() {
	"$ENGINE" "$@" 2> >(grep -v 'unable to get systemd connection' >&2)
}

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

die() {
	not_ok "$*"
	exit 1
}

# --- setup and cleanup ------------------------------------------------------------------------

cleanup() {
	local c
	for c in $(engine ps -a --format '{{.Names}}' 2>/dev/null | grep "^$name" || true); do
		engine rm -f -t 0 "$c" >/dev/null 2>&1
	done
	for p in "${pids[@]}"; do
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for t in ls be; do
		for c in "${CTRLS[@]}"; do
			rmdir "$CG/$c/kqos-test-$me-$t" 2>/dev/null
		done
	done
	[ -n "$work" ] && rm -rf "$work"
	echo "$passed passed, $failed failed"
}

# Containers and cgroups of earlier runs whose shell is gone (a SIGKILLed make).
sweep_stale() {
	local c d pid
	for c in $(engine ps -a --format '{{.Names}}' 2>/dev/null | grep '^kqos-imgtest-' || true); do
		pid=${c#kqos-imgtest-}
		pid=${pid%%-*}
		kill -0 "$pid" 2>/dev/null || engine rm -f -t 0 "$c" >/dev/null 2>&1
	done
	for d in "$CG"/{cpu,cpuacct,cpuset}/kqos-test-*; do
		[ -d "$d" ] || continue
		pid=${d##*/kqos-test-}
		pid=${pid%%-*}
		kill -0 "$pid" 2>/dev/null && continue
		xargs -r kill -KILL <"$d/cgroup.procs" 2>/dev/null
		rmdir "$d" 2>/dev/null
	done
}

make_groups() {
	local t c
	for t in ls be; do
		for c in "${CTRLS[@]}"; do
			mkdir "$CG/$c/kqos-test-$me-$t" || return 1
		done
		cat "$CG/cpuset/cpuset.mems" >"$CG/cpuset/kqos-test-$me-$t/cpuset.mems" || return 1
		cat "$CG/cpuset/cpuset.cpus" >"$CG/cpuset/kqos-test-$me-$t/cpuset.cpus" || return 1
	done
}

# A full-speed loop placed in group $1 of every controller before it starts spinning.
spawn_busy() {
	local t=$1 c pid
	sh -c 'read -r _; while :; do :; done' < <(sleep 0.5; echo go) &
	pid=$!
	pids+=("$pid")
	for c in "${CTRLS[@]}"; do
		echo "$pid" >"$CG/$c/kqos-test-$me-$t/cgroup.procs" || return 1
	done
}

# Copy every file kqos may write in both groups into directory $1, bytes as they are.
save_values() {
	local t f
	for t in ls be; do
		mkdir -p "$1/$t"
		for f in "${FILES[@]}"; do
			cp "$CG/${f%%/*}/kqos-test-$me-$t/${f#*/}" "$1/$t/${f#*/}"
		done
	done
}

# The ConfigMap's config, pods swapped for the test groups, cfsQuota with a low threshold.
test_config() {
	python3 - "$1" "$me" <<'EOF'
import json, sys
cfg = json.load(open("deploy/kubernetes/base/kqosd.json"))
me = sys.argv[2]
cfg["pods"] = {"source": "static", "groups": [
    {"name": "ls", "cgroup": "kqos-test-%s-ls" % me, "qosClass": "LS"},
    {"name": "be", "cgroup": "kqos-test-%s-be" % me, "qosClass": "BE"}]}
cfg["nodeSLO"]["resourceUsedThresholdWithBE"].update(
    {"cpuSuppressThresholdPercent": 50, "cpuSuppressPolicy": "cfsQuota"})
json.dump(cfg, open(sys.argv[1], "w"), indent=1)
EOF
}

# The ConfigMap's config with the kubelet source at a port nothing listens on (host network),
# and a token file beside it: what kqosd tells of it shows whether libcurl loaded.
kubelet_config() {
	echo kqos-image-test >"$(dirname "$1")/kubelet.token" || return 1
	python3 - "$1" <<'EOF'
import json, sys
cfg = json.load(open("deploy/kubernetes/base/kqosd.json"))
cfg["pods"] = {"source": "kubelet", "kubelet": {"url": "https://127.0.0.1:1",
                                                "tokenFile": "/etc/kqos/kubelet.token"}}
json.dump(cfg, open(sys.argv[1], "w"), indent=1)
EOF
}

# The DaemonSet's pod as podman flags, read off the rendered manifest (podman-flags.mjs), with
# the host paths of the journal, socket, textfile and kubelet dirs and the ConfigMap moved into
# $work so the host's own are not touched. One flag per line in $work/pod.flags.
pod_flags() {
	kubectl kustomize deploy/kubernetes/base >"$work/kqos.yaml" || return 1
	node deploy/check/podman-flags.mjs "$work/kqos.yaml" >"$work/pod.raw" || return 1
	sed -e "s|^--volume=CONFIGMAP:|--volume=$work/etc:|" \
		-e "s|^--volume=/var/lib/kubelet:|--volume=$work/kubelet:|" \
		-e "s|^--volume=/var/lib/kqos:|--volume=$work/state:|" \
		-e "s|^--volume=/run/kqos:|--volume=$work/run:|" \
		-e "s|^--volume=/var/lib/prometheus/node-exporter:|--volume=$work/textfile:|" \
		"$work/pod.raw" >"$work/pod.flags"
	mapfile -t CAPS < <(sed -n 's/^--cap-add=//p' "$work/pod.flags")
	[ ${#CAPS[@]} -gt 0 ]
}

# run_pod NAME [DROPPED_CAP]: the pod, less one capability if given; RUN_EXTRA (engine flags)
# and RUN_ARGS (the command) come from the caller.
run_pod() {
	local c=$1 drop=${2:-} flags
	mapfile -t flags < <(grep -v -x -e "--cap-add=${drop:-none}" "$work/pod.flags")
	engine run "${ENGINE_FLAGS[@]}" --name "$c" "${flags[@]}" \
		--security-opt seccomp="$work/seccomp.json" "${HEALTH[@]}" \
		"${RUN_EXTRA[@]}" "$IMAGE" "${RUN_ARGS[@]}"
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

be_quota() {
	cat "$CG/cpu/kqos-test-$me-be/cpu.cfs_quota_us"
}

quota_at_floor() {
	[ "$(be_quota)" = 2000 ]
}

healthy_from_host() {
	"$OUTPUT/kqos-top" --check -s "$work/run/kqos.sock" >/dev/null 2>&1
}

# --- the test ---------------------------------------------------------------------------------

# The container's exit code once it stopped, or "none, still running after N s".
exit_code_within() {
	local i state
	for ((i = 0; i < $1 * 10; i++)); do
		state=$(engine inspect --format '{{.State.Running}} {{.State.ExitCode}}' "$2" 2>/dev/null)
		if [ "${state%% *}" = false ]; then
			echo "${state#* }"
			return
		fi
		sleep 0.1
	done
	echo "none, still running after $1 s"
}

main() {
	local t0 t1 first_ms log size rss pid out rc c memcg

	[ "$(id -u)" = 0 ] || die "image-test needs root (real cgroups, BPF)"
	[ -r /sys/kernel/btf/vmlinux ] || die "no /sys/kernel/btf/vmlinux: CO-RE needs BTF"
	if [ ! -d "$CG/cpu" ] || [ ! -d "$CG/cpuset" ]; then
		die "this test drives cgroup v1 cpu and cpuset (a hybrid host); not found under $CG"
	fi
	engine image exists "$IMAGE" || die "$IMAGE not built (make image)"
	trap cleanup EXIT
	trap 'not_ok "interrupted"; exit 1' INT TERM
	sweep_stale
	work=$(mktemp -d /tmp/kqos-imgtest-XXXXXX)
	mkdir -p "$work"/{etc,kubelet,state,run,textfile,before,after}
	deploy/image/seccomp.py >"$work/seccomp.json" || die "seccomp profile"
	test_config "$work/etc/kqosd.json" || die "test config"
	pod_flags || die "cannot translate the DaemonSet to podman flags"
	echo "# the DaemonSet as podman flags: $(tr '\n' ' ' <"$work/pod.flags")"
	size=$(engine image inspect --format '{{.Size}}' "$IMAGE")
	echo "# image $IMAGE: $((size / 1024 / 1024)) MiB," \
		"version $(engine image inspect --format \
			'{{index .Labels "org.opencontainers.image.version"}} revision {{index .Labels "org.opencontainers.image.revision"}}' "$IMAGE")"

	HEALTH=()
	RUN_EXTRA=(--rm --entrypoint /usr/bin/kqosd)
	RUN_ARGS=(--check-config /etc/kqos/kqosd.json)
	check "kqosd --check-config accepts the ConfigMap's config inside the image" \
		run_pod "$name-cfg"
	# kqosd dlopen()s libcurl with the first kubelet client, so ldd does not list it: the
	# image must carry it and its TLS stack. A kubelet that is not there gets curl's own error.
	kubelet_config "$work/etc/kubelet.json" || die "kubelet test config"
	RUN_ARGS=(--once --config /etc/kqos/kubelet.json)
	out=$(run_pod "$name-curl" 2>&1)
	check "libcurl loads inside the image (curl's own error for a kubelet not there)" \
		grep -q "Couldn't connect to server" <<<"$out"
	grep -q "Couldn't connect to server" <<<"$out" || head -20 <<<"$out" | while read -r l; do
		echo "# $l"
	done

	make_groups || die "cannot make the test cgroups under $CG"
	save_values "$work/before"
	spawn_busy ls || die "LS load"
	spawn_busy be || die "BE load"

	RUN_EXTRA=(-d)
	RUN_ARGS=()
	t0=$(date +%s%N)
	run_pod "$name" >/dev/null || die "podman run with ${CAPS[*]}"
	if wait_for 20000 healthy_from_host; then
		t1=$(date +%s%N)
		first_ms=$(((t1 - t0) / 1000000))
		ok "kqosd answers with a fresh snapshot $first_ms ms after podman run"
	else
		not_ok "kqosd never became healthy"
		engine logs "$name" 2>&1 | sed 's/^/# /'
		exit 1
	fi
	log=$(engine logs "$name" 2>&1)
	check "BPF loaded, started with --cap-drop=all + ${CAPS[*]}" \
		grep -q 'msg="kqosd started"' <<<"$log"

	out=$("$OUTPUT/kqos-top" --json -s "$work/run/kqos.sock" 2>&1)
	check "kqos-top on the host sees the host's test cgroups" \
		grep -q "kqos-test-$me-be" <<<"$out"
	out=$(engine exec "$name" /usr/bin/kqos-top --json 2>&1)
	check "kqos-top inside the container sees them too" grep -q "kqos-test-$me-ls" <<<"$out"

	check "BE cfs quota pushed to the 2000 us floor next to a busy LS group" \
		wait_for 20000 quota_at_floor
	check "kqos.prom written in the textfile dir" \
		wait_for 15000 test -s "$work/textfile/kqos.prom"
	check "kqos.prom passes promtool check metrics" \
		sh -c "promtool check metrics <'$work/textfile/kqos.prom' >/dev/null 2>&1"
	check "kqos.prom has the BE group's series" \
		grep -q 'kqos_.*pod="be"' "$work/textfile/kqos.prom"

	check "image HEALTHCHECK passes" engine healthcheck run "$name"
	pid=$(engine inspect --format '{{.State.Pid}}' "$name")
	rss=$(awk '/VmRSS/ { print $2 }' "/proc/$pid/status")
	memcg=$CG/memory$(awk -F: '$2 == "memory" { print $3 }' "/proc/$pid/cgroup")
	echo "# kqosd pid $pid RSS $((rss / 1024)) MiB; its container's memory cgroup:" \
		"$(($(cat "$memcg/memory.usage_in_bytes") / 1048576)) MiB" \
		"($(($(cat "$memcg/memory.kmem.usage_in_bytes" 2>/dev/null || echo 0) / 1048576)) MiB kernel:" \
		"BPF maps, page tables)"
	kill -STOP "$pid"
	check "HEALTHCHECK fails while kqosd is stopped (SIGSTOP)" \
		sh -c "! $ENGINE healthcheck run $name >/dev/null 2>&1"
	out=$("$OUTPUT/kqos-top" --check -s "$work/run/kqos.sock" -t 1000)
	rc=$?
	check "kqos-top --check from the host fails too: $out" \
		test $rc -ne 0 -a -n "$(grep 'did not answer' <<<"$out")"
	kill -CONT "$pid"
	check "healthy again after SIGCONT" wait_for 5000 healthy_from_host

	check "podman stop exits cleanly" sh -c "$ENGINE stop -t 30 $name >/dev/null 2>&1"
	check "kqosd exit status 0" test "$(engine inspect --format '{{.State.ExitCode}}' \
		"$name")" = 0
	save_values "$work/after"
	check "every cgroup value restored byte for byte" diff -r "$work/before" "$work/after"
	check "no journal left in the state dir" test ! -e "$work/state/journal"
	engine rm "$name" >/dev/null 2>&1

	RUN_EXTRA=(-d)
	RUN_ARGS=()
	HEALTH=(--no-healthcheck)
	for drop in "${CAPS[@]}"; do
		c=$name-no-${drop,,}
		run_pod "$c" "$drop" >/dev/null
		# a kqosd that does not refuse would run on: wait for a bounded time only
		rc=$(exit_code_within 20 "$c")
		out=$(engine logs "$c" 2>&1)
		engine rm -f -t 0 "$c" >/dev/null 2>&1
		if [[ $rc =~ ^[1-9][0-9]*$ ]] && grep -q "missing capabilities.*$drop" <<<"$out"; then
			ok "without $drop: kqosd refuses to start (exit $rc), naming it"
		else
			not_ok "without $drop: exit $rc, no message naming it"
			echo "${out//$'\n'/$'\n'# }"
		fi
		save_values "$work/after-$drop"
		check "... and changed nothing" diff -r "$work/before" "$work/after-$drop"
	done
	grep -h 'missing capabilities' <<<"$out" | sed 's/^/# /'
	[ $failed -eq 0 ]
}

main "$@"
