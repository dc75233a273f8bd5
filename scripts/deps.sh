#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Install, idempotently, every Debian package that kqos' build, tests and benchmarks need.
# Fast when everything is present: one dpkg-query, no apt-get.
set -euo pipefail

PKGS=(
	# build
	clang llvm make gcc pkg-config bpftool libbpf-dev libelf-dev zlib1g-dev
	libjansson-dev libpfm4-dev libcurl4-openssl-dev libncurses-dev
	# tests
	libcriterion-dev openssl python3 tmux procps util-linux
	prometheus prometheus-node-exporter curl
	# style
	clang-format shellcheck
	# benchmarks: load generator and the peer (runqlat)
	stress-ng libbpf-tools
)

missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
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
