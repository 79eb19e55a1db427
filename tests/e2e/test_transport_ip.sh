#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_transport_ip.sh - the end-to-end suite over raw IP protocol 146.
#
# Runs the end-to-end test programs (test_e2e_rpc, test_e2e_errors,
# test_e2e_pool, test_e2e_threads, test_e2e_loss_stress, test_socket_smoke,
# and homa-rpc's test_rpc_e2e when it is built)
# with HOMA_TRANSPORT=ip, the way CTest runs them over UDP (no arguments, in
# the folder of the programs), and checks:
#   - each program passes;
#   - the traffic really was Homa over IP, not UDP: the programs run in a
#     network namespace of their own, whose counters (/proc/net/snmp,
#     /proc/net/snmp6) must show IPv4 and IPv6 packets delivered and not a
#     single UDP datagram;
#   - without CAP_NET_RAW, HOMA_TRANSPORT=ip fails socket creation with
#     EPERM (test_socket_smoke exits nonzero and prints errno 1, "Operation
#     not permitted") and the library says once why;
# then the shell tests that can run over raw IP (about 30 s in all):
#   - random loss: tests/e2e/test_loss.sh with LOSS_TRANSPORT=ip at 3%
#     (iptables drops of protocol 146 in a namespace, the same six
#     programs; its own check that no UDP datagram arrived);
#   - a 1500-byte link (the raw-IP part of test_link_mtu.sh): echoes of
#     sizes around the 1424-byte packet boundary up to 1,000,000 bytes
#     between two namespaces joined by a veth pair of MTU 1500, with no IP
#     fragment and no UDP datagram on either side;
#   - the testbed smoke run (scripts/testbed.sh --smoke, as
#     test_testbed_smoke.sh runs it) with --homa-env HOMA_TRANSPORT=ip:
#     every RPC completes, and every Homa process reports transport 1.
# Left out: test_e2e_hostile sends its hostile packets from plain UDP
# sockets at UDP ports (the attack surface of the UDP transport; the raw-IP
# receive path is tested by tests/unit/test_homa_ip.c and the fuzzers), so
# over raw IP it would test nothing; the rest of test_link_mtu.sh is about
# UDP's segmentation-offload batches (one UDP_SEGMENT send; raw IP sends
# every packet on its own) and how they fail when HOMA_MTU exceeds the
# link.
#
# Needs CAP_NET_RAW (CI runs as root); without it the test is skipped (exit
# 77 with a message, which CTest reports as skipped), or fails with
# HOMA_TEST_REQUIRE_RAW=1 (CI sets it).
# Without unshare(1) or ip(8), or when a namespace cannot be made, the
# programs run on the host's loopback and the counter check is left out
# (said in the output); the loss, link and testbed runs need root, ip and
# iptables (a SKIP line each otherwise, and exit 77 at the end when nothing
# failed; a failure with HOMA_TEST_REQUIRE_RAW=1).  A program that skips
# some of its tests (exit 77) counts the same way.
#
# Environment (set by CTest): HOMA_E2E_DIR, the folder of the programs
# (default: the current directory); HOMA_SOURCE_DIR, HOMA_BUILD_DIR,
# HOMA_TOOLS_DIR (default: from this script's place and HOMA_E2E_DIR).
# HOMA_IP_EXTRAS=0 leaves out the loss, link and testbed runs;
# HOMA_IP_LOSS_RATES sets the loss run's rates in percent (default 3).
set -u

dir=${HOMA_E2E_DIR:-$PWD}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${HOMA_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
build=${HOMA_BUILD_DIR:-$(cd "$dir/../.." 2>/dev/null && pwd)}
tools=${HOMA_TOOLS_DIR:-$build/tools}
progs=(test_socket_smoke test_e2e_rpc test_e2e_errors test_e2e_pool
	test_e2e_threads test_e2e_loss_stress)
# homa-rpc's end-to-end test (tests/rpc), built there unless HOMA_RPC=OFF.
[ -x "${HOMA_E2E_DIR:-$PWD}/test_rpc_e2e" ] && progs+=(test_rpc_e2e)
prog_timeout=200   # seconds per program (CTest gives the script 300)
msg='HOMA_TRANSPORT=ip needs CAP_NET_RAW'
start=$(date +%s)

# has_cap_net_raw - whether this shell's effective set holds CAP_NET_RAW
# (capability 13).
has_cap_net_raw() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
	[ -n "$eff" ] && (( (0x$eff >> 13) & 1 ))
}

if ! has_cap_net_raw; then
	if [ "${HOMA_TEST_REQUIRE_RAW:-0}" = 1 ]; then
		echo "FAIL: HOMA_TRANSPORT=ip needs CAP_NET_RAW, which this" \
			"process lacks (HOMA_TEST_REQUIRE_RAW=1)"
		exit 1
	fi
	echo "SKIP: HOMA_TRANSPORT=ip needs CAP_NET_RAW (run as root) --" \
		"the raw IP tests did NOT run"
	exit 77
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
skipped=0   # something did not run (SKIP lines): exit 77 unless failed
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
	elif [ "$rc" -eq 77 ]; then
		skipped=1
		printf 'SKIP  %-20s %4ss  some tests skipped:\n' "$p" \
			$((t1 - t0))
		grep -E 'SKIPPED|skipped' "$logdir/$p.log" | sed 's/^/    /'
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
# with EPERM and the library says why, once.  test_socket_smoke's first
# check is homa_socket() >= 0; its failure line gives errno's number and
# text ("FAIL line N: s->fd >= 0 (errno 1 Operation not permitted)"), and
# the library's message the text of the raw socket's own failure.
eperm='errno 1 Operation not permitted'
if command -v setpriv >/dev/null; then
	HOMA_TRANSPORT=ip timeout 60 setpriv --bounding-set -net_raw \
		--inh-caps -net_raw ./test_socket_smoke \
		>"$logdir/noraw.log" 2>&1
	rc=$?
	n=$(grep -c -F "$msg" "$logdir/noraw.log")
	e=$(grep -c -F "($eperm)" "$logdir/noraw.log")
	m=$(grep -F "$msg" "$logdir/noraw.log" |
	    grep -c -F ': Operation not permitted')
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 124 ] && [ "$n" -eq 1 ] &&
		[ "$e" -ge 1 ] && [ "$m" -eq 1 ]; then
		echo "ok    without CAP_NET_RAW: socket creation fails with" \
			"EPERM, the message is printed once"
	else
		failed=1
		echo "FAIL  without CAP_NET_RAW: exit $rc, message printed" \
			"$n times ($m of them with EPERM's text), '$eperm'" \
			"$e times (want a failure, 1, 1 and at least 1); the" \
			"output:"
		tail -n 20 "$logdir/noraw.log" | sed 's/^/    /'
	fi
else
	echo "note: setpriv missing: the run without CAP_NET_RAW is left" \
		"out (tests/unit/test_homa_ip.c covers it)"
fi

# extra_skip WHAT REASON - say loudly that WHAT did not run (a failure
# with HOMA_TEST_REQUIRE_RAW=1); the script then exits 77 unless something
# failed.
extra_skip() {
	if [ "${HOMA_TEST_REQUIRE_RAW:-0}" = 1 ]; then
		failed=1
		echo "FAIL  $1: cannot run: $2 (HOMA_TEST_REQUIRE_RAW=1)"
	else
		skipped=1
		echo "SKIP  $1: $2 -- it did NOT run over raw IP"
	fi
}

# secs_since T - whole seconds since T.
secs_since() {
	echo $(($(date +%s) - $1))
}

extras=${HOMA_IP_EXTRAS:-1}
[ "$extras" = 1 ] || echo "note: HOMA_IP_EXTRAS=$extras: the loss, link" \
	"and testbed runs over raw IP are left out"

# Random loss over raw IP: test_loss.sh drops protocol 146 at 3% in a
# namespace of its own and runs the same programs there.  It gets what is
# left of CTest's 300 s, less 100 s for the runs below.
if [ "$extras" = 1 ]; then
	t0=$(date +%s)
	budget=$((300 - $(secs_since "$start") - 100))
	[ "$budget" -lt 60 ] && budget=60
	LOSS_TRANSPORT=ip LOSS_RATES=${HOMA_IP_LOSS_RATES:-3} \
		LOSS_BUDGET_S=$budget \
		HOMA_LOSS_REQUIRE=${HOMA_TEST_REQUIRE_RAW:-${HOMA_LOSS_REQUIRE:-0}} \
		HOMA_E2E_BIN_DIR="$dir" HOMA_BUILD_DIR="$build" \
		bash "$here/test_loss.sh" >"$logdir/loss.log" 2>&1
	rc=$?
	line=$(grep -E '^loss [0-9.]+%: ' "$logdir/loss.log" | tail -n 1)
	if [ "$rc" -eq 77 ] || grep -q '^SKIP' "$logdir/loss.log"; then
		extra_skip "loss" "$(grep '^SKIP' "$logdir/loss.log")"
	elif [ "$rc" -eq 0 ]; then
		printf 'ok    %-20s %4ss  %s\n' "loss (test_loss.sh)" \
			"$(secs_since "$t0")" "$line"
	else
		failed=1
		printf 'FAIL  %-20s %4ss  exit %d; its output:\n' \
			"loss (test_loss.sh)" "$(secs_since "$t0")" "$rc"
		tail -n 60 "$logdir/loss.log" | sed 's/^/    /'
	fi
fi

# ip_counter NS GROUP:NAME - a counter of /proc/net/snmp in namespace NS,
# e.g. Ip:ReasmReqds or Udp:InDatagrams.
ip_counter() {
	# shellcheck disable=SC2016  # awk's own $ fields
	ip netns exec "$1" awk -v want="$2" '
		BEGIN { split(want, w, ":"); grp = w[1] ":" }
		$1 == grp && $2 !~ /^[0-9]/ { for (i = 2; i <= NF; i++) f[$i] = i }
		$1 == grp && $2 ~ /^[0-9]/ { print $f[w[2]] + 0 }' /proc/net/snmp
}

# link_run - a 1500-byte link: two namespaces joined by a veth pair,
# echoes over raw IP of sizes around the packet boundary (1424 bytes of
# payload at mtu 1500: 1500 - 20 IP - 56 Homa).  No fragment may cross
# the link, and no UDP datagram.  Returns 1 on a failure (printed), 0
# otherwise (also after extra_skip).
link_run() {
	local nsa=homa-ipmtu-$$-a nsb=homa-ipmtu-$$-b va=hipm$$a vb=hipm$$b
	local server=$build/examples/echo_server client=$build/examples/echo_client
	local size spid port=4000 r0 r1 u ok=1 p
	for p in "$server" "$client"; do
		if [ ! -x "$p" ]; then
			echo "FAIL  link: $p is missing"
			return 1
		fi
	done
	if ! { ip netns add "$nsa" && ip netns add "$nsb" &&
		ip link add "$va" type veth peer name "$vb" &&
		ip link set "$va" netns "$nsa" &&
		ip link set "$vb" netns "$nsb" &&
		ip -n "$nsa" link set "$va" mtu 1500 up &&
		ip -n "$nsb" link set "$vb" mtu 1500 up &&
		ip -n "$nsa" link set lo up && ip -n "$nsb" link set lo up &&
		ip -n "$nsa" addr add 10.198.0.1/24 dev "$va" &&
		ip -n "$nsb" addr add 10.198.0.2/24 dev "$vb"; } \
		2>"$logdir/link.err"; then
		ip netns del "$nsa" 2>/dev/null
		ip netns del "$nsb" 2>/dev/null
		extra_skip "link" "cannot make two namespaces and a veth link" \
			"($(head -n 1 "$logdir/link.err"))"
		return 0
	fi
	r0="$(ip_counter "$nsa" Ip:ReasmReqds) $(ip_counter "$nsb" Ip:ReasmReqds)"
	HOMA_TRANSPORT=ip ip netns exec "$nsa" "$server" "$port" \
		>"$logdir/link-server.log" 2>&1 &
	spid=$!
	for _ in $(seq 50); do
		grep -q "serving Homa port" "$logdir/link-server.log" && break
		sleep 0.1
	done
	for size in 1 1424 1425 2848 2849 40000 40001 100000 1000000; do
		if ! HOMA_TRANSPORT=ip timeout 60 ip netns exec "$nsb" \
			"$client" 10.198.0.1 "$port" 3 "$size" \
			>>"$logdir/link-client.log" 2>&1; then
			echo "FAIL  link: 3 echoes of $size bytes over a" \
				"1500-byte link; the client's output:"
			tail -n 5 "$logdir/link-client.log" | sed 's/^/    /'
			ok=0
		fi
	done
	kill "$spid" 2>/dev/null
	wait "$spid" 2>/dev/null
	r1="$(ip_counter "$nsa" Ip:ReasmReqds) $(ip_counter "$nsb" Ip:ReasmReqds)"
	u=$(($(ip_counter "$nsa" Udp:InDatagrams) +
		$(ip_counter "$nsb" Udp:InDatagrams)))
	ip netns del "$nsa"
	ip netns del "$nsb"
	if [ "$r0" != "$r1" ]; then
		echo "FAIL  link: IP fragments crossed the link (reassembly" \
			"requests before '$r0', after '$r1')"
		ok=0
	fi
	if [ "$u" -ne 0 ]; then
		echo "FAIL  link: $u UDP datagrams arrived (want none)"
		ok=0
	fi
	[ "$ok" = 1 ] && printf 'ok    %-20s %4ss  %s\n' "link (MTU 1500)" \
		"$(secs_since "$t0")" \
		"3 echoes of 9 sizes up to 1000000 B, no fragment, no UDP"
	[ "$ok" = 1 ]
}
if [ "$extras" = 1 ]; then
	t0=$(date +%s)
	if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
		extra_skip "link" "needs root and ip (iproute2)"
	elif ! link_run; then
		failed=1
	fi
fi

# The testbed smoke run with Homa over raw IP (TCP as usual): every RPC
# completes and every Homa process says it used transport 1 (ip).
if [ "$extras" = 1 ]; then
	t0=$(date +%s)
	tb=$logdir/testbed
	if [ "$(id -u)" -ne 0 ] || ! command -v tc >/dev/null; then
		extra_skip "testbed" "needs root and tc (iproute2)"
	elif [ ! -x "$tools/homa-perf" ]; then
		failed=1
		echo "FAIL  testbed: no $tools/homa-perf"
	else
		bash "$src/scripts/testbed.sh" --smoke \
			--perf "$tools/homa-perf" --out "$tb" \
			--homa-env HOMA_TRANSPORT=ip >"$logdir/testbed.log" 2>&1
		rc=$?
		nhoma=0 nip=0
		for f in "$tb"/raw/server.json "$tb"/raw/*_homa_c*.json; do
			[ -f "$f" ] || continue
			nhoma=$((nhoma + 1))
			grep -q '"transport":1[,}]' "$f" && nip=$((nip + 1))
		done
		if [ "$rc" -eq 0 ] && [ "$nhoma" -ge 4 ] &&
			[ "$nip" -eq "$nhoma" ] &&
			! grep -q '"all_completed": *false' "$tb/summary.json" &&
			grep -q '"all_completed": *true' "$tb/summary.json"; then
			printf 'ok    %-20s %4ss  %s\n' "testbed --smoke" \
				"$(secs_since "$t0")" \
				"every RPC completed; $nip Homa processes on transport ip"
		else
			failed=1
			echo "FAIL  testbed --smoke: exit $rc, $nip of $nhoma" \
				"Homa processes on transport ip (want all, at" \
				"least 4), all_completed false or missing in" \
				"summary.json; the output:"
			tail -n 30 "$logdir/testbed.log" | sed 's/^/    /'
		fi
	fi
fi

echo "transport_ip: $(secs_since "$start") s in all"

if [ "$failed" -ne 0 ]; then
	echo "FAILED: the end-to-end suite over HOMA_TRANSPORT=ip"
	exit 1
fi
if [ "$skipped" -ne 0 ]; then
	echo "SKIPPED: parts of the end-to-end suite over HOMA_TRANSPORT=ip" \
		"did not run (the SKIP lines above)"
	exit 77
fi
echo "PASSED: the end-to-end suite over HOMA_TRANSPORT=ip"
exit 0
