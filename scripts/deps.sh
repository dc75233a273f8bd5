#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install, idempotently, every Debian package that kqos' build, tests and benchmarks need.
# Fast when everything is present: one dpkg-query, no apt-get.
#   scripts/deps.sh              everything
#   scripts/deps.sh build        only what `make all` needs (the image's build stage)
#   scripts/deps.sh deploy       what `make image` and `make image-test` need
#   scripts/deps.sh check        what `make deploy-check` needs
#   scripts/deps.sh --list GROUP print the group's packages, one a line, install nothing
set -euo pipefail

BUILD=(clang llvm make gcc pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
	libjansson-dev libpfm4-dev libcurl4-openssl-dev libncurses-dev)
TEST=(libcriterion-dev openssl python3 tmux procps util-linux
	prometheus prometheus-node-exporter curl libfuse3-dev fuse3)
STYLE=(clang-format shellcheck)
# fuzz (make fuzz): libFuzzer and the sanitizer runtimes, which clang only recommends
FUZZ=(libclang-rt-14-dev)
# benchmarks: load generator and the peer (runqlat); bench/interference.sh: a real LS service,
# its load generator and the pictures (the bench runs its own nginx master on 127.0.0.1; the
# packaged service is not used)
BENCH=(stress-ng libbpf-tools nginx wrk gnuplot-nox)
# container engine (runc: crun refuses hybrid hosts with a v2 controller) and the base rootfs
# builder (no registry: the base is made locally); image-test's promtool and python3
DEPLOY=(podman buildah mmdebstrap uidmap crun runc netavark aardvark-dns fuse-overlayfs
	containernetworking-plugins prometheus python3)

# kubectl (kustomize), promtool, systemd-analyze, node and npm for the manifest validator
CHECK=(prometheus systemd python3)

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
case "${1:-all}" in
build) PKGS=("${BUILD[@]}") ;;
deploy) PKGS=("${DEPLOY[@]}") ;;
check) PKGS=("${CHECK[@]}") ;;
all) PKGS=("${BUILD[@]}" "${TEST[@]}" "${STYLE[@]}" "${FUZZ[@]}" "${BENCH[@]}") ;;
*)
	echo "deps: unknown group '$1' (build, deploy, all)" >&2
	exit 2
	;;
esac
if [ $list -eq 1 ]; then
	printf '%s\n' "${PKGS[@]}"
	exit 0
fi

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
# Commands other repositories may provide under other package names: Debian's own packages
# only when the command is missing (NodeSource's nodejs provides npm; kubectl may come from
# Kubernetes' repository instead of Debian's kubernetes-client).
if [ "${1:-all}" = check ]; then
	{ command -v node && command -v npm; } >/dev/null || missing+=(nodejs npm)
	command -v kubectl >/dev/null || missing+=(kubernetes-client)
fi
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps: missing packages: ${missing[*]}; run as root or: apt-get install ${missing[*]}" >&2
	exit 1
fi
echo "deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# Debian's prometheus packages start services when systemd runs; the tests start their own.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
