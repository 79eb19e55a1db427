# SPDX-License-Identifier: BSD-2-Clause
#
# lib.sh - boots the kernel-peer guest and runs jobs in it and beside it
# (sourced by interop.sh and compare.sh, after common.sh).
#
# The guest (build_image.sh) runs under QEMU inside a network namespace
# made for it (kpeer-PID): a tap device there, tap0, carries 10.146.0.1/24
# and fd00:146::1/64 on the host side, the guest's eth0 .2 and ::2.  The
# host's own interfaces are never touched.  The host side's programs run
# in that namespace (kpeer_host); the guest's run from a job folder shared
# over 9p (kpeer_guest).
#
# Settings (environment):
#   KPEER_ACCEL   auto (default): KVM when it boots the guest, else TCG;
#                 kvm or tcg to force one
#   KPEER_BOOT_TIMEOUT  seconds to wait for the guest (default 300)

KPEER_NS=""
KPEER_JOB=""
KPEER_QEMU_PID=""
KPEER_ACCEL_USED=""

# kpeer_host CMD... - run CMD in the testbed's namespace.
kpeer_host() { ip netns exec "$KPEER_NS" "$@"; }

# kpeer_net_up - the namespace and its tap device.
kpeer_net_up() {
	KPEER_NS=kpeer-$$
	ip netns add "$KPEER_NS"
	kpeer_host ip link set lo up
	kpeer_host ip tuntap add dev tap0 mode tap
	kpeer_host ip addr add "$KPEER_HOST4/24" dev tap0
	kpeer_host ip -6 addr add "$KPEER_HOST6/64" dev tap0 nodad
	kpeer_host ip link set tap0 up
}

# kpeer_qemu_start GUEST ACCEL - start QEMU in the namespace (background).
kpeer_qemu_start() {
	local g=$1 accel=$2 cpu
	rm -f "$KPEER_JOB/up" "$KPEER_JOB/halt"
	if [ "$accel" = kvm ]; then cpu=host; else cpu=max; fi
	# A simple command (not the kpeer_host function) in the background:
	# $! is then QEMU itself (ip netns exec execs it), not a subshell.
	ip netns exec "$KPEER_NS" qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -smp 2 -m 2G \
		-nodefaults -nographic -no-reboot \
		-kernel "$g/vmlinuz" -initrd "$g/initrd.img" \
		-append "root=/dev/vda rw init=/sbin/kpeer-init console=ttyS0 tsc=reliable panic=-1 net.ifnames=0 loglevel=4" \
		-drive "file=$g/rootfs.ext4,format=raw,if=virtio,snapshot=on" \
		-virtfs "local,path=$KPEER_JOB,mount_tag=kpeer,security_model=none,id=kpeer" \
		-netdev tap,id=n0,ifname=tap0,script=no,downscript=no \
		-device virtio-net-pci,netdev=n0,mac=52:54:00:46:00:02 \
		-serial "file:$KPEER_JOB/serial-$accel.log" -monitor none \
		>"$KPEER_JOB/qemu-$accel.log" 2>&1 &
	KPEER_QEMU_PID=$!
}

# kpeer_wait_up SECONDS - wait for the guest's /job/up; 1 when QEMU ended
# or the time ran out.
kpeer_wait_up() {
	local end=$((SECONDS + $1))
	while [ $SECONDS -lt $end ]; do
		[ -e "$KPEER_JOB/up" ] && return 0
		kill -0 "$KPEER_QEMU_PID" 2>/dev/null || return 1
		sleep 0.5
	done
	return 1
}

# kpeer_qemu_stop - power the guest off (kill QEMU after 30 s).
kpeer_qemu_stop() {
	[ -n "$KPEER_QEMU_PID" ] || return 0
	touch "$KPEER_JOB/halt"
	for _ in $(seq 60); do
		kill -0 "$KPEER_QEMU_PID" 2>/dev/null || break
		sleep 0.5
	done
	kill "$KPEER_QEMU_PID" 2>/dev/null
	wait "$KPEER_QEMU_PID" 2>/dev/null
	KPEER_QEMU_PID=""
}

# kpeer_boot GUEST [SYSCTL...] - boot the guest of folder GUEST with the
# net.homa settings SYSCTL (name=value); sets KPEER_ACCEL_USED.  A guest
# that boots under no accelerator is a skip (see kpeer_skip).
kpeer_boot() {
	local g=$1 accel want=${KPEER_ACCEL:-auto} tries
	shift
	KPEER_JOB=$(mktemp -d "${TMPDIR:-/tmp}/kpeer-job.XXXXXX")
	chmod 755 "$KPEER_JOB"
	mkdir -p "$KPEER_JOB/q"
	printf 'GUEST4=%s\nGUEST6=%s\nHOMA_SYSCTL="%s"\n' "$KPEER_GUEST4" \
		"$KPEER_GUEST6" "$*" >"$KPEER_JOB/guest.env"
	kpeer_net_up
	case $want in
	auto)
		tries=tcg
		[ -r /dev/kvm ] && [ -w /dev/kvm ] && tries="kvm tcg" ;;
	kvm|tcg) tries=$want ;;
	*) echo "KPEER_ACCEL=$want: use auto, kvm or tcg" >&2; return 2 ;;
	esac
	for accel in $tries; do
		kpeer_qemu_start "$g" "$accel"
		if kpeer_wait_up "$([ "$accel" = kvm ] && echo 90 ||
				     echo "${KPEER_BOOT_TIMEOUT:-300}")"; then
			KPEER_ACCEL_USED=$accel
			kpeer_log "guest up under $accel ($(grep -m1 'up:' \
				"$KPEER_JOB/serial-$accel.log" | sed 's/.*up: //'))"
			return 0
		fi
		kpeer_log "the guest did not boot under $accel; its console's end:"
		tail -n 8 "$KPEER_JOB/serial-$accel.log" | sed 's/^/    | /' >&2
		tail -n 3 "$KPEER_JOB/qemu-$accel.log" | sed 's/^/    | /' >&2
		kpeer_qemu_stop
	done
	return 1
}

# kpeer_shutdown - power off, remove the namespace and the job folder
# (kept, and its path printed, when KPEER_KEEP=1).
kpeer_shutdown() {
	kpeer_qemu_stop
	[ -z "$KPEER_NS" ] || ip netns del "$KPEER_NS" 2>/dev/null
	KPEER_NS=""
	if [ -n "$KPEER_JOB" ]; then
		if [ "${KPEER_KEEP:-0}" = 1 ]; then
			kpeer_log "job folder kept: $KPEER_JOB"
		else
			rm -rf "$KPEER_JOB"
		fi
	fi
	KPEER_JOB=""
}

# kpeer_guest NAME CMD - run the shell command CMD in the guest, in the
# background (its process id in /job/q/NAME.pid).  Names are unique per
# boot.
kpeer_guest() {
	local q=$KPEER_JOB/q
	printf 'echo $$ >/job/q/%s.pid\ncd /opt/kpeer\n%s\n' "$1" "$2" >"$q/.$1.tmp"
	mv "$q/.$1.tmp" "$q/$1.sh"
}

# kpeer_guest_wait NAME SECONDS - wait for job NAME; its exit status, or
# 124 when it is still running after SECONDS.
kpeer_guest_wait() {
	local end=$((SECONDS + $2)) rc=$KPEER_JOB/q/$1.rc
	while [ ! -e "$rc" ]; do
		[ $SECONDS -lt $end ] || return 124
		kill -0 "$KPEER_QEMU_PID" 2>/dev/null || return 125
		sleep 0.2
	done
	return "$(cat "$rc")"
}

# kpeer_guest_out NAME - the output of job NAME so far.
kpeer_guest_out() { cat "$KPEER_JOB/q/$1.out" 2>/dev/null; }

# kpeer_guest_grep NAME PATTERN SECONDS - wait for PATTERN in NAME's output.
kpeer_guest_grep() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		grep -q -- "$2" "$KPEER_JOB/q/$1.out" 2>/dev/null && return 0
		[ -e "$KPEER_JOB/q/$1.rc" ] && return 1
		sleep 0.2
	done
	return 1
}

# kpeer_guest_kill NAME [SIGNAL] - signal job NAME's process (its shell
# execs the program).
kpeer_guest_kill() {
	kpeer_guest "kill-$1-$RANDOM" "kill -${2:-TERM} \$(cat /job/q/$1.pid)"
}

# kpeer_loss PERCENT - drop PERCENT % of protocol-146 packets each way
# (iptables and ip6tables in the namespace); 0 removes the rules.
kpeer_loss() {
	local p t chain
	for t in iptables ip6tables; do
		kpeer_host "$t" -F INPUT
		kpeer_host "$t" -F OUTPUT
	done
	[ "$1" != 0 ] || return 0
	p=$(awk -v p="$1" 'BEGIN { printf "%.4f", p / 100 }')
	for t in iptables ip6tables; do
		for chain in INPUT OUTPUT; do
			kpeer_host "$t" -A "$chain" -p 146 -m statistic \
				--mode random --probability "$p" -j DROP
		done
	done
}
