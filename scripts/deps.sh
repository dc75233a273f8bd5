#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install, idempotently, every Debian package that kqos' build, tests and benchmarks need.
# Fast when everything is present: one dpkg-query, no apt-get.
#   scripts/deps.sh              everything
#   scripts/deps.sh build        only what `make all` needs (the image's build stage)
#   scripts/deps.sh deploy       what `make image`, `image-test` and `deploy-check` need
#   scripts/deps.sh --list GROUP print the group's packages, one a line, install nothing
set -euo pipefail

BUILD=(clang llvm make gcc pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
	libjansson-dev libpfm4-dev libcurl4-openssl-dev libncurses-dev)
TEST=(libcriterion-dev openssl python3 tmux procps util-linux
	prometheus prometheus-node-exporter curl)
STYLE=(clang-format shellcheck)
# benchmarks: load generator and the peer (runqlat)
BENCH=(stress-ng libbpf-tools)
# container engine and base rootfs builder (no registry: the base is made locally), systemd's
# analyzers, promtool (in prometheus) and node for the manifest validator
DEPLOY=(podman buildah mmdebstrap uidmap crun netavark aardvark-dns fuse-overlayfs
	containernetworking-plugins systemd prometheus)

list=0
if [ "${1:-}" = --list ]; then
	list=1
	shift
fi
case "${1:-all}" in
build) PKGS=("${BUILD[@]}") ;;
deploy) PKGS=("${DEPLOY[@]}") ;;
all) PKGS=("${BUILD[@]}" "${TEST[@]}" "${STYLE[@]}" "${BENCH[@]}") ;;
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
# node and npm: Debian ships them as two packages, NodeSource's nodejs provides both.
if [ "${1:-all}" = deploy ] && ! { command -v node && command -v npm; } >/dev/null; then
	missing+=(nodejs npm)
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
