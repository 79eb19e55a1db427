# SPDX-License-Identifier: BSD-2-Clause
#
# common.sh - shared by the kernel-peer testbed scripts (sourced, not run).
#
# Settings (environment):
#   HOMA_KERNEL_TARBALL  the kernel Homa module's source tarball (a test
#                        peer, built and run unmodified)
#   KPEER_CACHE          where built guests are kept (default
#                        /var/cache/libhoma-kpeer)
#   KPEER_MIRROR         the Debian mirror (default: the first one apt uses
#                        on this host, from /etc/apt/sources.list*)
#   KPEER_REQUIRE=1      a run that cannot start fails (exit 1) instead of
#                        being skipped (exit 77)

KPEER_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KPEER_SRC=$(cd "$KPEER_DIR/../.." && pwd)
KPEER_CACHE=${KPEER_CACHE:-/var/cache/libhoma-kpeer}
# The guest: Debian trixie with the trixie-backports kernel that the module
# builds against unmodified.
KPEER_SUITE=trixie
KPEER_KVER=6.17.8+deb13-amd64
KPEER_KPKG=6.17.8-1~bpo13+1
# Raised whenever build_image.sh builds the guest differently: the cached
# guests of older recipes are then rebuilt.
KPEER_GUEST_RECIPE=1
# Guest-side Debian packages (debootstrap --include).
KPEER_GUEST_PKGS=gcc,g++,make,libc6-dev,kmod,iproute2,iptables,procps,initramfs-tools,busybox,linux-base,zstd
# Addresses inside the namespace: host side .1, guest .2.
KPEER_HOST4=10.146.0.1
KPEER_GUEST4=10.146.0.2
KPEER_HOST6=fd00:146::1
KPEER_GUEST6=fd00:146::2

kpeer_log() { echo "kpeer: $*" >&2; }

# kpeer_skip WHY - the run cannot start: "skipped" and exit 77, or a
# failure (exit 1) when KPEER_REQUIRE=1.
kpeer_skip() {
	if [ "${KPEER_REQUIRE:-0}" = 1 ]; then
		echo "kpeer: FAILED to start (KPEER_REQUIRE=1): $*" >&2
		exit 1
	fi
	echo "kpeer: skipped: $*" >&2
	exit 77
}

# kpeer_mirror - the Debian archive apt uses here (KPEER_MIRROR overrides):
# the first URI of a deb822 stanza or a one-line "deb" entry that is not a
# security or backports archive.
kpeer_mirror() {
	if [ -n "${KPEER_MIRROR:-}" ]; then
		echo "${KPEER_MIRROR%/}"
		return
	fi
	local f uri
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		 /etc/apt/sources.list.d/*.sources; do
		[ -r "$f" ] || continue
		case $f in
		*.sources)
			uri=$(awk '/^URIs:/ { for (i = 2; i <= NF; i++) print $i }' \
				"$f" | grep -v -e security -e backports | head -n 1) ;;
		*)
			uri=$(awk '$1 == "deb" { for (i = 2; i <= NF; i++)
				if ($i ~ /^[a-z]+:\/\//) { print $i; break } }' \
				"$f" | grep -v -e security -e backports | head -n 1) ;;
		esac
		if [ -n "$uri" ]; then
			echo "${uri%/}"
			return
		fi
	done
	return 1
}

# kpeer_tarball - the module tarball's path, or a skip when there is none.
kpeer_tarball() {
	local t=${HOMA_KERNEL_TARBALL:-}
	[ -n "$t" ] || kpeer_skip "no module tarball: set HOMA_KERNEL_TARBALL" \
		"(the kernel Homa module's source, HomaModule-<commit>.tar.gz)"
	[ -r "$t" ] || kpeer_skip "module tarball $t is not readable"
	(cd "$(dirname "$t")" && echo "$PWD/$(basename "$t")")
}

# kpeer_module_commit TARBALL - the commit in the tarball's name.
kpeer_module_commit() {
	basename "$1" .tar.gz | sed -n 's/^HomaModule-//p'
}

# kpeer_need_tools - the host programs the testbed uses, or a skip naming
# the missing ones and how to get them.
kpeer_need_tools() {
	local missing="" t
	for t in qemu-system-x86_64 debootstrap mkfs.ext4 ip iptables \
		 ip6tables curl tshark; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	[ -z "$missing" ] ||
		kpeer_skip "missing host programs:$missing (run 'make kpeer-deps' as root)"
	[ "$(id -u)" -eq 0 ] ||
		kpeer_skip "needs root (network namespace, tap device, debootstrap)"
}

# kpeer_retry N CMD... - a download, tried N times with a pause between.
kpeer_retry() {
	local n=$1 i
	shift
	for ((i = 1; i <= n; i++)); do
		"$@" && return 0
		kpeer_log "attempt $i of $n failed: $*"
		sleep $((i * 5))
	done
	return 1
}
