#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# compare.sh - the module's cp_node, the same commands, in one guest over
# kernel Homa, libhoma over UDP, libhoma over raw IP, and TCP.
#
#   usage: scripts/kpeer/compare.sh [--rounds N] [--seconds S] [--build DIR]
#                                   [TARBALL]
#
# Boots the guest of build_image.sh and runs in it, client and server on
# the guest's own address (not 127.0.0.1: cp_node's TCP server refuses
# it), in interleaved rounds (every variant once per round, N rounds,
# default 3), for S seconds each (default 6):
#   100 B      cp_node client --workload 100 --client-max 1: RTT P50, P99
#   1 MB x1    --workload 1000000 --client-max 1: goodput out (Gbit/s)
#   1 MB x4    --workload 1000000 --client-max 4
# over: kh (kernel Homa, the module loaded), lh-udp and lh-ip (cp_node
# under libhoma_preload.so with HOMA_TRANSPORT=udp or ip; for ip the
# module is unloaded first, as both would act on protocol 146) and tcp
# (cp_node --protocol tcp). Each figure is cp_node's last per-second
# report of a run; the table gives the median over the rounds, and names
# the accelerator (under TCG every figure is the emulator's, not the
# transport's: compare the columns, not with other machines).
#
# Environment as interop.sh (HOMA_KERNEL_TARBALL, KPEER_ACCEL, KPEER_KEEP,
# KPEER_REQUIRE, HOMA_BUILD_DIR). Not part of CI.
# Exit status: 0, 1 when a run produced no report, 77 skipped, 2 usage.
set -uo pipefail
. "$(dirname "$0")/common.sh"
. "$KPEER_DIR/lib.sh"

rounds=3
secs=6
build=${HOMA_BUILD_DIR:-$KPEER_SRC/build}
while [ $# -gt 0 ]; do
	case $1 in
	--rounds) rounds=$2; shift ;;
	--seconds) secs=$2; shift ;;
	--build) build=$2; shift ;;
	-h|--help) sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "compare.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) HOMA_KERNEL_TARBALL=$1 ;;
	esac
	shift
done
export HOMA_KERNEL_TARBALL=${HOMA_KERNEL_TARBALL:-}
kpeer_tarball >/dev/null
kpeer_need_tools
[ -f "$build/libhoma_preload.so" ] || {
	echo "compare.sh: $build/libhoma_preload.so is missing: make build" >&2
	exit 2
}
guest=$("$KPEER_DIR/build_image.sh")
status=$?
[ $status -eq 0 ] || exit $status

trap 'kpeer_shutdown' EXIT
trap 'exit 1' INT TERM
kpeer_boot "$guest" || kpeer_skip "no accelerator boots the guest (KVM, then TCG)"
. "$guest/info"
cp "$build/libhoma_preload.so" "$KPEER_JOB/libhoma_preload.so"
kpeer_guest hosts "echo '$KPEER_GUEST4 node1' >>/etc/hosts"
kpeer_guest_wait hosts 60
results=$KPEER_JOB/results
: >"$results"
n=0

# run_one VARIANT TEST CLIENT_ARGS - one cp_node run in the guest; appends
# "VARIANT TEST p50 p99 gbps" to the results.
run_one() {
	local variant=$1 test=$2 args=$3 env="" proto="" pre="" post="" line
	n=$((n + 1))
	case $variant in
	lh-udp) env="LD_PRELOAD=/job/libhoma_preload.so HOMA_TRANSPORT=udp" ;;
	lh-ip) env="LD_PRELOAD=/job/libhoma_preload.so HOMA_TRANSPORT=ip"
	       pre="rmmod homa"; post="insmod /opt/kpeer/homa.ko" ;;
	tcp) proto="--protocol tcp" ;;
	esac
	kpeer_guest "cmp$n" "$pre
env $env util/cp_node server $proto --port-threads 1 >/tmp/srv$n.log 2>&1 </dev/null &
srv=\$!
sleep 2
env $env timeout $secs util/cp_node client $proto --first-server 1 --server-nodes 1 --gbps 0 $args </dev/null
kill \$srv; wait \$srv
$post
true"
	kpeer_guest_wait "cmp$n" $((secs + 120))
	line=$(kpeer_guest_out "cmp$n" | grep ' clients: ' | tail -n 1)
	if [ -z "$line" ]; then
		echo "no report from $variant $test:" >&2
		kpeer_guest_out "cmp$n" | tail -n 5 >&2
		return 1
	fi
	echo "$line" | sed -E 's/.*Gbps out.*P50 ([0-9.]+) P99 ([0-9.]+) .*/\1 \2/' |
		awk -v v="$variant" -v t="$test" -v l="$line" '{
			g = l; sub(/.*Kops\/sec, /, "", g); sub(/ Gbps out.*/, "", g)
			print v, t, $1, $2, g }' >>"$results"
}

bad=0
for ((r = 1; r <= rounds; r++)); do
	for variant in kh lh-udp lh-ip tcp; do
		run_one "$variant" rtt "--workload 100 --client-max 1" || bad=1
		run_one "$variant" 1mb1 "--workload 1000000 --client-max 1" || bad=1
		run_one "$variant" 1mb4 "--workload 1000000 --client-max 4" || bad=1
	done
	echo "round $r of $rounds done" >&2
done

# median VARIANT TEST FIELD - the median of FIELD (3 p50, 4 p99, 5 Gbit/s).
median() {
	awk -v v="$1" -v t="$2" -v f="$3" '$1 == v && $2 == t { print $f }' \
		"$results" | sort -g | awk '{ a[NR] = $1 } END {
			if (NR == 0) { print "-"; exit }
			print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
}

echo
echo "cp_node in one guest, $(date -u '+%Y-%m-%d %H:%M UTC'), module" \
	"$module_commit, guest kernel $guest_kernel, accelerator" \
	"$KPEER_ACCEL_USED, $rounds interleaved rounds of $secs s, medians"
echo
echo "| test | kernel Homa | libhoma UDP | libhoma raw IP | TCP |"
echo "|---|---|---|---|---|"
for row in "rtt 3 100 B RTT p50 (us)" "rtt 4 100 B RTT p99 (us)" \
	   "1mb1 5 1 MB, 1 in flight (Gbit/s out)" \
	   "1mb4 5 1 MB, 4 in flight (Gbit/s out)"; do
	set -- $row
	t=$1 f=$2
	shift 2
	printf '| %s |' "$*"
	for variant in kh lh-udp lh-ip tcp; do
		printf ' %s |' "$(median "$variant" "$t" "$f")"
	done
	echo
done
exit $bad
