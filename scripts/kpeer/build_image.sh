#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# build_image.sh - builds (once) the guest of the kernel-peer testbed and
# prints the folder that holds it.
#
#   usage: scripts/kpeer/build_image.sh [TARBALL]
#          (or HOMA_KERNEL_TARBALL=TARBALL scripts/kpeer/build_image.sh)
#
# The guest is Debian trixie (debootstrap from the mirror apt uses here)
# with the trixie-backports kernel 6.17.8+deb13-amd64, and in /opt/kpeer:
#   homa.ko            the kernel Homa module of TARBALL, built unmodified
#   util/              the module's cp_node, homa_test and server
#   bin/kapi_*         the project's kernel-API test programs
#                      (tests/preload/kapi_*.c), built against the
#                      module's own homa.h (as <linux/homa.h>)
# and /sbin/kpeer-init (scripts/kpeer/guest/kpeer-init), the guest's init.
# The module's util programs are also built on this host (HOST/util/), to
# run under libhoma_preload.so.
#
# Cache (KPEER_CACHE, default /var/cache/libhoma-kpeer):
#   rootfs-KEY/   the debootstrapped tree with the kernel and its headers
#                 (KEY: suite, kernel, packages; about 4 minutes)
#   guest-KEY/    vmlinuz, initrd.img, rootfs.ext4, host-util/, info
#                 (KEY: the rootfs, the tarball, tests/preload, the guest's
#                 init, KPEER_GUEST_RECIPE; about 3 minutes); a new one
#                 replaces the older ones
# A folder counts only once its "ok" file exists; nothing is rebuilt when
# the inputs did not change.  Only downloads are retried.
#
# Exit status: 0 (the folder on stdout), 77 when it cannot start (no
# tarball, not root, missing programs; 1 with KPEER_REQUIRE=1), 1 when a
# build step fails.
set -euo pipefail
. "$(dirname "$0")/common.sh"

[ $# -le 1 ] || { echo "usage: $0 [TARBALL]" >&2; exit 2; }
[ $# -eq 0 ] || HOMA_KERNEL_TARBALL=$1
tarball=$(kpeer_tarball)
kpeer_need_tools
mirror=$(kpeer_mirror) || kpeer_skip "no Debian mirror in /etc/apt/sources.list* (set KPEER_MIRROR)"
commit=$(kpeer_module_commit "$tarball")
mkdir -p "$KPEER_CACHE"

hash() { sha256sum | cut -c1-16; }
rootfs_key=$(printf '%s\n' 2 "$KPEER_SUITE" "$KPEER_KVER" "$KPEER_KPKG" \
	"$KPEER_GUEST_PKGS" | hash)
rootfs=$KPEER_CACHE/rootfs-$rootfs_key
guest_key=$( { echo "$rootfs_key $KPEER_GUEST_RECIPE";
	sha256sum "$tarball" | cut -d' ' -f1;
	cat "$KPEER_SRC"/tests/preload/*.[ch] "$KPEER_DIR"/guest/*; } | hash)
guest=$KPEER_CACHE/guest-$guest_key

mounted=()
cleanup() {
	local m
	local i
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		umount -l "${mounted[$i]}" 2>/dev/null || true
	done
}
trap cleanup EXIT

# in_root CMD... - run CMD in the rootfs tree (proc, sys and dev mounted).
in_root() {
	local r=$rootfs/root m
	for m in proc sys dev; do
		if ! mountpoint -q "$r/$m"; then
			case $m in
			proc) mount -t proc proc "$r/proc" ;;
			sys) mount -t sysfs sys "$r/sys" ;;
			dev) mount --bind /dev "$r/dev" ;;
			esac
			mounted+=("$r/$m")
		fi
	done
	chroot "$r" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
		DEBIAN_FRONTEND=noninteractive LC_ALL=C "$@"
}

# build_rootfs - debootstrap, then the kernel image and its headers (the
# backports index no longer lists the headers: fetched by file name).
build_rootfs() {
	local r=$rootfs/root deb url
	kpeer_log "building the guest's root tree in $rootfs (mirror $mirror)"
	rm -rf "$rootfs"
	mkdir -p "$rootfs/debs"
	kpeer_retry 3 bash -c "rm -rf '$r' && debootstrap --variant=minbase \
		--include='$KPEER_GUEST_PKGS' '$KPEER_SUITE' '$r' '$mirror' \
		>'$rootfs/debootstrap.log' 2>&1" ||
		{ tail -n 30 "$rootfs/debootstrap.log" >&2; return 1; }
	for deb in \
		linux-signed-amd64/linux-image-${KPEER_KVER}_${KPEER_KPKG}_amd64.deb \
		linux/linux-headers-${KPEER_KVER}_${KPEER_KPKG}_amd64.deb \
		linux/linux-headers-${KPEER_KVER%-amd64}-common_${KPEER_KPKG}_all.deb \
		linux/linux-kbuild-${KPEER_KVER%-amd64}_${KPEER_KPKG}_amd64.deb; do
		url="$mirror/pool/main/l/$(echo "$deb" | sed 's/+/%2B/g')"
		kpeer_retry 4 curl -fsSL --retry 2 -o "$rootfs/debs/${deb##*/}" "$url" ||
			{ kpeer_log "cannot download $url"; return 1; }
	done
	cp "$rootfs"/debs/*.deb "$r/tmp/"
	echo "deb $mirror $KPEER_SUITE main" >"$r/etc/apt/sources.list"
	kpeer_retry 3 in_root apt-get update -q >/dev/null
	kpeer_retry 3 in_root bash -c 'apt-get install -y -q --no-install-recommends /tmp/*.deb' \
		>"$rootfs/kernel.log" 2>&1 ||
		{ tail -n 30 "$rootfs/kernel.log" >&2; return 1; }
	rm -f "$r"/tmp/*.deb
	in_root apt-get clean
	[ -f "$r/boot/vmlinuz-$KPEER_KVER" ] && [ -f "$r/boot/initrd.img-$KPEER_KVER" ] ||
		{ kpeer_log "no kernel or initrd in $r/boot"; return 1; }
	touch "$rootfs/ok"
}

# build_guest - the module, its util programs, the kapi programs, the
# init; then the ext4 image.
build_guest() {
	local r=$rootfs/root o=$rootfs/root/opt/kpeer top size old
	kpeer_log "building the guest in $guest (module $commit)"
	rm -rf "$guest" "$o"
	mkdir -p "$guest" "$o/bin" "$o/include/linux"
	tar xzf "$tarball" -C "$o"
	top=$(cd "$o" && ls -d HomaModule-* | head -n 1)
	mv "$o/$top" "$o/module"
	in_root make -C /opt/kpeer/module -j2 LINUX_VERSION="$KPEER_KVER" \
		>"$guest/module.log" 2>&1 ||
		{ tail -n 30 "$guest/module.log" >&2; return 1; }
	cp "$o/module/homa.ko" "$o/homa.ko"
	in_root make -C /opt/kpeer/module/util -j2 cp_node homa_test server \
		>"$guest/util.log" 2>&1 ||
		{ tail -n 30 "$guest/util.log" >&2; return 1; }
	mkdir -p "$o/util"
	cp "$o"/module/util/{cp_node,homa_test,server} "$o/util/"
	cp "$o/module/homa.h" "$o/include/linux/homa.h"
	mkdir -p "$o/src"
	cp "$KPEER_SRC"/tests/preload/*.[ch] "$o/src/"
	for src in "$o"/src/kapi_*.c; do
		in_root gcc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -DKAPI_MODULE_HEADER \
			-I/opt/kpeer/include -o "/opt/kpeer/bin/$(basename "$src" .c)" \
			"/opt/kpeer/src/$(basename "$src")" >>"$guest/kapi.log" 2>&1 ||
			{ cat "$guest/kapi.log" >&2; return 1; }
	done
	install -m 755 "$KPEER_DIR/guest/kpeer-init" "$r/sbin/kpeer-init"
	mkdir -p "$r/job"
	# The same util programs on this host, for libhoma_preload.so.
	mkdir -p "$guest/host-src"
	tar xzf "$tarball" -C "$guest/host-src"
	make -C "$guest/host-src/$top/util" -j2 cp_node homa_test server \
		>"$guest/host-util.log" 2>&1 ||
		{ tail -n 30 "$guest/host-util.log" >&2; return 1; }
	mkdir -p "$guest/host-util"
	cp "$guest/host-src/$top"/util/{cp_node,homa_test,server} "$guest/host-util/"
	rm -rf "$guest/host-src"
	# The image takes the tree alone, not the host's proc, sys and dev.
	cleanup
	mounted=()
	cp "$r/boot/vmlinuz-$KPEER_KVER" "$guest/vmlinuz"
	cp "$r/boot/initrd.img-$KPEER_KVER" "$guest/initrd.img"
	size=$(( $(du -sm "$r" | cut -f1) + 512 ))
	mkfs.ext4 -q -F -L kpeer -d "$r" "$guest/rootfs.ext4" "${size}M" >&2
	printf 'module_commit=%s\nguest_kernel=%s\nguest_kernel_package=%s\nsuite=%s\nbuilt="%s"\n' \
		"$commit" "$KPEER_KVER" "$KPEER_KPKG" "$KPEER_SUITE" \
		"$(date -u '+%Y-%m-%d %H:%M UTC')" >"$guest/info"
	touch "$guest/ok"
	# Older guests go (1.5 GB each); the root tree stays.
	for old in "$KPEER_CACHE"/guest-*; do
		[ "$old" = "$guest" ] || rm -rf "$old"
	done
}

exec 9>"$KPEER_CACHE/.lock"
flock 9
[ -f "$rootfs/ok" ] || build_rootfs
[ -f "$guest/ok" ] || build_guest
cleanup
mounted=()
echo "$guest"
