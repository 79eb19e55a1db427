#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_link_mtu.sh - Homa over UDP between two hosts joined by an ordinary
# 1500-byte-MTU link (loopback's 64 KB MTU hides what this checks).
#
# Two network namespaces of its own, joined by a veth pair with MTU 1500,
# 10.197.0.1 (server) and 10.197.0.2 (client).  The example programs
# (build/examples/echo_server, echo_client) exchange echoes of sizes around
# the packet boundary over UDP (1416 bytes of payload per packet at mtu
# 1500: 1500 - 20 IP - 8 UDP - 56 Homa), the unscheduled limit and up to
# 1,000,000 bytes:
#   1. default settings: every echo comes back, and no IP fragment crosses
#      the link (Ip ReasmReqds stays 0 on both sides): the UDP datagrams
#      fit in the MTU, also when sent as one segmentation-offload batch;
#   2. HOMA_LINK_MBPS=1000: the same with the pacer at work (the sender
#      spaces its packets, partly from within homa_sendmsg);
#   3. HOMA_MTU=1600 on both sides (larger than the link): the kernel
#      refuses the offload batches with EMSGSIZE; the library says so once
#      on stderr and sends the packets one by one, IP-fragmented, and every
#      echo still comes back.
# Nothing is timed.  Everything it creates is removed on exit.
#
# Environment: HOMA_BUILD_DIR (set by CTest); HOMA_TEST_REQUIRE_NETNS=1
# (CI sets it) makes a skip a failure.  Needs root (namespaces) and ip
# (iproute2): without them the test says SKIP and exits 77, which CTest
# reports as skipped.
set -uo pipefail

build=${HOMA_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." &&
	pwd)/build}
server=$build/examples/echo_server
client=$build/examples/echo_client
nsa=homa-mtu-$$-a
nsb=homa-mtu-$$-b
port=4000
sizes="1 1416 1417 2832 2833 40000 40001 100000 1000000"
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

# skip REASON - say why the test cannot run here and exit 77 (skipped), or
# 1 with HOMA_TEST_REQUIRE_NETNS=1.
skip() {
	if [ "${HOMA_TEST_REQUIRE_NETNS:-0}" = 1 ]; then
		echo "FAIL: test_link_mtu: cannot run: $1 (HOMA_TEST_REQUIRE_NETNS=1)"
		exit 1
	fi
	echo "SKIP: test_link_mtu: $1 -- the MTU tests did NOT run"
	exit 77
}

[ "$(id -u)" -eq 0 ] || skip "needs root (network namespaces)"
command -v ip >/dev/null 2>&1 || skip "ip (iproute2) not installed"
for p in "$server" "$client"; do
	if [ ! -x "$p" ]; then
		echo "FAIL: $p is missing (build the examples first)"
		exit 1
	fi
done

server_pid=""
cleanup() {
	[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null
	[ -n "$server_pid" ] && wait "$server_pid" 2>/dev/null
	ip netns del "$nsa" 2>/dev/null
	ip netns del "$nsb" 2>/dev/null
	rm -f "${errs:-}"
}
trap cleanup EXIT
errs=$(mktemp "${TMPDIR:-/tmp}/homa-mtu.XXXXXX")

# The two hosts and the link.
ip netns add "$nsa" && ip netns add "$nsb" &&
ip link add "hmtu$$a" type veth peer name "hmtu$$b" &&
ip link set "hmtu$$a" netns "$nsa" && ip link set "hmtu$$b" netns "$nsb" &&
ip -n "$nsa" link set "hmtu$$a" mtu 1500 up &&
ip -n "$nsb" link set "hmtu$$b" mtu 1500 up &&
ip -n "$nsa" link set lo up && ip -n "$nsb" link set lo up &&
ip -n "$nsa" addr add 10.197.0.1/24 dev "hmtu$$a" &&
ip -n "$nsb" addr add 10.197.0.2/24 dev "hmtu$$b" || {
	echo "FAIL: could not build the two namespaces and their veth link"
	exit 1
}

# reasm NS - IP datagrams of namespace NS that arrived in fragments.
reasm() {
	ip netns exec "$1" awk '
		$1 == "Ip:" && $2 !~ /^[0-9]/ { for (i = 2; i <= NF; i++) f[$i] = i }
		$1 == "Ip:" && $2 ~ /^[0-9]/ { print $f["ReasmReqds"] + 0 }' \
		/proc/net/snmp
}

# run_echoes LABEL ENV... - start a server with the settings ENV (K=V
# words), run 3 echoes of every size from the client with the same
# settings; counts failures.  The client's stderr goes to $errs.
run_echoes() {
	local label=$1 size
	shift
	ip netns exec "$nsa" env "$@" "$server" "$port" >/dev/null 2>&1 &
	server_pid=$!
	sleep 0.5
	: >"$errs"
	for size in $sizes; do
		if timeout 60 ip netns exec "$nsb" env "$@" "$client" \
			10.197.0.1 "$port" 3 "$size" >/dev/null 2>>"$errs"; then
			echo "ok: $label: 3 echoes of $size bytes"
		else
			fail "$label: echoes of $size bytes (stderr:" \
				"$(tail -n 3 "$errs" | tr '\n' ' '))"
		fi
	done
	kill "$server_pid" 2>/dev/null
	wait "$server_pid" 2>/dev/null
	server_pid=""
	port=$((port + 1))
}

echo "== 1. default settings over a 1500-byte link"
a0=$(reasm "$nsa")
b0=$(reasm "$nsb")
run_echoes "default mtu" HOMA_TRANSPORT=udp

echo "== 2. HOMA_LINK_MBPS=1000: paced DATA"
run_echoes "paced at 1 Gbit/s" HOMA_LINK_MBPS=1000
a1=$(reasm "$nsa")
b1=$(reasm "$nsb")
if [ "$a1" -ne "$a0" ] || [ "$b1" -ne "$b0" ]; then
	fail "IP fragments crossed the link (reassembled: server side" \
		"$((a1 - a0)), client side $((b1 - b0))): datagrams larger" \
		"than the MTU"
else
	echo "ok: no IP fragment crossed the link"
fi

echo "== 3. HOMA_MTU=1600, larger than the link"
run_echoes "mtu 1600" HOMA_MTU=1600
if grep -q "libhoma: UDP datagrams of .* exceed the MTU" "$errs"; then
	echo "ok: the client said once why it sends packets one by one"
else
	fail "no message on stderr about the datagrams over the MTU"
fi
a2=$(reasm "$nsa")
if [ "$a2" -eq "$a1" ]; then
	fail "no fragment reached the server with HOMA_MTU=1600"
else
	echo "ok: the server reassembled $((a2 - a1)) fragmented datagrams"
fi

if [ "$failures" -ne 0 ]; then
	echo "FAIL: $failures check(s) failed"
	exit 1
fi
echo "PASS: Homa over a 1500-byte link, with the default mtu and a larger one"
