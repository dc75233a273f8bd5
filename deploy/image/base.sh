#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Make the image's base without a registry: a Debian 12 root filesystem built by mmdebstrap from
# the Debian mirror apt uses on this host, with kqos' build packages already in it, imported as
# $BASE (the tag deploy/Dockerfile names). Cached: nothing happens when $BASE exists, so only the
# first `make image` pays for it. FORCE=1 rebuilds it.
set -euo pipefail
cd "$(dirname "$0")/../.."

BASE=${BASE:-localhost/kqos-debian:12}
ENGINE=${ENGINE:-podman}
if [ "${FORCE:-0}" != 1 ] && "$ENGINE" image exists "$BASE"; then
	exit 0
fi

# The host's own mirror (deb822 or one-line sources), so the image sees the packages apt sees.
mirror=$(sed -n 's/^URIs: *\([^ ]*debian\)$/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
	head -n1)
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' \
	/etc/apt/sources.list 2>/dev/null || true)
mirror=${mirror:-http://deb.debian.org/debian}
security=${mirror%/debian}/debian-security

# The Dockerfile's build stage runs scripts/deps.sh build, which finds these already present
# and needs no network; a stock debian:12 base works too, it just installs them.
mapfile -t pkgs < <(scripts/deps.sh --list build)
include=$(IFS=,; echo "${pkgs[*]}")

# The hook runs in mmdebstrap's shell, with the rootfs as $1: no apt lists in the image.
# shellcheck disable=SC2016
hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin'
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "image: building $BASE with mmdebstrap from $mirror (${#pkgs[@]} build packages)"
mmdebstrap --quiet --variant=apt --include="$include" \
	--aptopt='Acquire::Retries "3"' \
	--customize-hook="$hook" \
	bookworm "$tmp/rootfs.tar" \
	"deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
	"deb $security bookworm-security main"
"$ENGINE" import --quiet \
	--change 'CMD ["/bin/bash"]' \
	--change 'LABEL org.opencontainers.image.description="Debian 12 (mmdebstrap) with kqos build packages"' \
	"$tmp/rootfs.tar" "$BASE" >/dev/null
echo "image: $BASE imported ($("$ENGINE" image inspect --format '{{.Size}}' "$BASE") bytes)"
