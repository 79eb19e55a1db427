#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_transport_ip.sh - the end-to-end suite over raw IP protocol 146.
#
# Runs the end-to-end test programs (test_e2e_rpc, test_e2e_errors,
# test_e2e_pool, test_e2e_threads, test_socket_smoke) with HOMA_TRANSPORT=ip,
# the way CTest runs them over UDP (no arguments, in the folder of the
# programs), and checks:
#   - each program passes;
#   - the traffic really was Homa over IP, not UDP: the programs run in a
#     network namespace of their own, whose counters (/proc/net/snmp,
#     /proc/net/snmp6) must show IPv4 and IPv6 packets delivered and not a
#     single UDP datagram;
#   - without CAP_NET_RAW, HOMA_TRANSPORT=ip fails socket creation
#     (test_socket_smoke exits nonzero) and the library says once why.
#
# Needs CAP_NET_RAW (CI runs as root); without it the test is skipped (exit
# 0 with a message).  Without unshare(1) or ip(8), or when a namespace
# cannot be made, the programs run on the host's loopback and the counter
# check is left out (said in the output).
#
# Environment (set by CTest): HOMA_E2E_DIR, the folder of the programs
# (default: the current directory).
set -u

dir=${HOMA_E2E_DIR:-$PWD}
progs=(test_socket_smoke test_e2e_rpc test_e2e_errors test_e2e_pool
	test_e2e_threads)
prog_timeout=200   # seconds per program (CTest gives the script 300)
msg='HOMA_TRANSPORT=ip needs CAP_NET_RAW'

# has_cap_net_raw - whether this shell's effective set holds CAP_NET_RAW
# (capability 13).
has_cap_net_raw() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
	[ -n "$eff" ] && (( (0x$eff >> 13) & 1 ))
}

if ! has_cap_net_raw; then
	echo "SKIP: HOMA_TRANSPORT=ip needs CAP_NET_RAW (run as root)"
	exit 0
fi
for p in "${progs[@]}"; do
	if [ ! -x "$dir/$p" ]; then
		echo "FAIL: $dir/$p is missing (build the tests first)"
		exit 1
	fi
done

# Into a network namespace of our own, once, when possible.
if [ -z "${HOMA_IP_NETNS:-}" ] && command -v unshare >/dev/null &&
	command -v ip >/dev/null && unshare -n true 2>/dev/null; then
	exec unshare -n env HOMA_IP_NETNS=1 bash "$0" "$@"
fi
netns=0
if [ -n "${HOMA_IP_NETNS:-}" ]; then
	if ! ip link set lo up; then
		echo "FAIL: cannot bring up lo in the new namespace"
		exit 1
	fi
	netns=1
	echo "running in a network namespace of its own"
else
	echo "note: no network namespace (unshare/ip missing or not" \
		"allowed): running on the host's loopback, without the" \
		"check that no UDP was used"
fi

# snmp_counters - "ip4_delivered udp4_in ip6_delivered udp6_in" of this
# namespace.
snmp_counters() {
	local v4 v6
	v4=$(awk '
		$1 == "Ip:" && $2 !~ /^[0-9]/ { for (i = 2; i <= NF; i++) ip[$i] = i }
		$1 == "Ip:" && $2 ~ /^[0-9]/ { d = $ip["InDelivers"] }
		$1 == "Udp:" && $2 !~ /^[0-9]/ { for (i = 2; i <= NF; i++) udp[$i] = i }
		$1 == "Udp:" && $2 ~ /^[0-9]/ { u = $udp["InDatagrams"] }
		END { print d + 0, u + 0 }' /proc/net/snmp)
	v6=$(awk '
		$1 == "Ip6InDelivers" { d = $2 }
		$1 == "Udp6InDatagrams" { u = $2 }
		END { print d + 0, u + 0 }' /proc/net/snmp6 2>/dev/null ||
		echo "0 0")
	echo "$v4 $v6"
}

logdir=$(mktemp -d "${TMPDIR:-/tmp}/homa-ip-e2e.XXXXXX")
trap 'rm -rf "$logdir"' EXIT
failed=0
read -r ip4_0 udp4_0 ip6_0 udp6_0 < <(snmp_counters)

cd "$dir" || exit 1
for p in "${progs[@]}"; do
	t0=$(date +%s)
	HOMA_TRANSPORT=ip timeout "$prog_timeout" "./$p" >"$logdir/$p.log" 2>&1
	rc=$?
	t1=$(date +%s)
	if [ "$rc" -eq 0 ]; then
		printf 'ok    %-20s %4ss  %s\n' "$p" $((t1 - t0)) \
			"$(grep -E '^\[  PASSED  \]|^PASS' "$logdir/$p.log" |
			   tail -n 1)"
	else
		failed=1
		printf 'FAIL  %-20s %4ss  exit %d; its output:\n' "$p" \
			$((t1 - t0)) "$rc"
		tail -n 60 "$logdir/$p.log" | sed 's/^/    /'
	fi
done

read -r ip4_1 udp4_1 ip6_1 udp6_1 < <(snmp_counters)
if [ "$netns" -eq 1 ]; then
	d_ip4=$((ip4_1 - ip4_0)) d_ip6=$((ip6_1 - ip6_0))
	d_udp=$((udp4_1 - udp4_0 + udp6_1 - udp6_0))
	echo "namespace counters: IPv4 delivered $d_ip4, IPv6 delivered" \
		"$d_ip6, UDP datagrams $d_udp"
	if [ "$d_ip4" -le 0 ] || [ "$d_ip6" -le 0 ] || [ "$d_udp" -ne 0 ]; then
		echo "FAIL: the traffic was not Homa over IP alone (want" \
			"IPv4 and IPv6 packets delivered and 0 UDP datagrams)"
		failed=1
	fi
fi

# Without CAP_NET_RAW (dropped from the bounding and inheritable sets, so
# that the program runs without it even as root): socket creation fails
# and the library says why, once.
if command -v setpriv >/dev/null; then
	HOMA_TRANSPORT=ip timeout 60 setpriv --bounding-set -net_raw \
		--inh-caps -net_raw ./test_socket_smoke \
		>"$logdir/noraw.log" 2>&1
	rc=$?
	n=$(grep -c -F "$msg" "$logdir/noraw.log")
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -eq 1 ]; then
		echo "ok    without CAP_NET_RAW: socket creation fails, the" \
			"message is printed once"
	else
		failed=1
		echo "FAIL  without CAP_NET_RAW: exit $rc, message printed" \
			"$n times (want a failure and 1); the output:"
		tail -n 20 "$logdir/noraw.log" | sed 's/^/    /'
	fi
else
	echo "note: setpriv missing: the run without CAP_NET_RAW is left" \
		"out (tests/unit/test_homa_ip.c covers it)"
fi

if [ "$failed" -ne 0 ]; then
	echo "FAILED: the end-to-end suite over HOMA_TRANSPORT=ip"
	exit 1
fi
echo "PASSED: the end-to-end suite over HOMA_TRANSPORT=ip"
exit 0
