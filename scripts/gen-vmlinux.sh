#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF (libbpf-tools layout:
# vmlinux.h is a symlink to vmlinux_<kver>.h, both checked in).
set -euo pipefail
arch=${1:-x86}
btf=${BTF:-/sys/kernel/btf/vmlinux}
kver=$(uname -r | cut -d. -f1-2)
dir="$(dirname "$0")/../vmlinux/$arch"
mkdir -p "$dir"
bpftool btf dump file "$btf" format c >"$dir/vmlinux_$kver.h.tmp"
mv "$dir/vmlinux_$kver.h.tmp" "$dir/vmlinux_$kver.h"
ln -sf "vmlinux_$kver.h" "$dir/vmlinux.h"
echo "vmlinux: $dir/vmlinux_$kver.h from $btf"
