#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The image's runtime stage, assembled in the build stage: kqosd, kqos-top and exactly the shared
# libraries ldd says they load, plus the few data files they read (CA bundle for the kubelet's
# HTTPS, terminfo for kqos-top, passwd/group for the socket group lookup). No shell, no package
# manager: the image runs two binaries and nothing else.
#   deploy/image/rootfs.sh DEST BINARY...
set -euo pipefail

dest=$1
shift
mkdir -p "$dest/usr/bin" "$dest/etc" "$dest/tmp" "$dest/run/kqos" "$dest/var/lib/kqos"
chmod 1777 "$dest/tmp"
for bin in "$@"; do
	install -m 0755 "$bin" "$dest/usr/bin/"
done

# The libraries kqosd dlopen()s (libpfm4 for PMU names, libcurl for the kubelet and the API
# server), which ldd does not list: by soname, as the loader finds them.
dlopened=()
for so in libpfm.so.4 libcurl.so.4; do
	lib=$(ldconfig -p | awk -v so="$so" '$1 == so && /x86-64|=>/ { print $NF; exit }')
	[ -n "$lib" ] || { echo "rootfs: $so not installed" >&2; exit 1; }
	dlopened+=("$lib")
done

# Every library (and the loader) with its path, so the dynamic linker finds them where it looks.
{
	ldd "$@" "${dlopened[@]}"
	printf '\tx => %s (0)\n' "${dlopened[@]}"
} | awk '/=> \// { print $3 } /^\t\/lib/ { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$dest$(dirname "$lib")"
		cp -L "$lib" "$dest$lib"
	done
# Debian 12 is merged-/usr: /lib and /lib64 are links into /usr, as on the host.
for d in lib lib64; do
	if [ -d "$dest/$d" ] && [ ! -L "$dest/$d" ]; then
		mkdir -p "$dest/usr/$d"
		cp -a "$dest/$d/." "$dest/usr/$d/"
		rm -rf "${dest:?}/$d"
	fi
	[ -e "$dest/usr/$d" ] && ln -sfn "usr/$d" "$dest/$d"
done

mkdir -p "$dest/etc/ssl/certs"
cp -L /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/" 2>/dev/null || true
for t in l/linux v/vt100 x/xterm x/xterm-256color s/screen s/screen-256color t/tmux \
	t/tmux-256color d/dumb; do
	src=/usr/share/terminfo/$t
	[ -e "$src" ] || src=/lib/terminfo/$t
	[ -e "$src" ] || continue
	mkdir -p "$dest/usr/share/terminfo/${t%%/*}"
	cp -L "$src" "$dest/usr/share/terminfo/$t"
done
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\n' >"$dest/etc/passwd"
printf 'root:x:0:\n' >"$dest/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$dest/etc/nsswitch.conf"
