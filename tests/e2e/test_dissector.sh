#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_dissector.sh - the Wireshark dissector tools/wireshark/homa.lua,
# run by tshark on synthetic packets and on real libhoma traffic.
#
# 1. Synthetic: tests/e2e/dissector_check.py writes a pcap with one packet
#    of every Homa type with known field values (over UDP, and all nine
#    again as IP protocol 146 over IPv4 and over IPv6), malformed packets
#    (short, unknown type, truncated header, DATA outside its message, ...),
#    segmentation offload batches (several Homa packets in one UDP datagram,
#    as loopback captures show them), a packet cut by the snap length, a UDP
#    datagram on ports that are not Homa's, and the wire corpus
#    fuzz/corpus/wire/*.bin;
#    tshark decodes it with the dissector (`-X lua_script:`, `-d
#    udp.port==P,homa`, `-o homa.udp_ports:...`) and every homa.* field of
#    every frame, the Info column and the expert infos are compared.  Then
#    the dissector is installed as a personal plugin (in a temporary HOME)
#    and must decode without -X.
# 2. Live: dumpcap captures loopback while the echo programs
#    (build/examples/echo_server, echo_client, and
#    build/tests/preload/kapi_echo_server under libhoma_preload.so) run over
#    four kinds of transport: UDP and raw IP (protocol 146,
#    HOMA_TRANSPORT=ip), each over IPv4 and IPv6:
#      UDP/IPv4 port P: 3 echoes of 400,000 bytes (DATA, GRANTs, CUTOFFS
#              from each new peer, NEED_ACK after the last response);
#      UDP/IPv4 port P+1: 500 echoes of 100 bytes with a server ticking
#              every 100 us and asking for acks one tick after a response
#              is sent (NEED_ACK, answered by ACK);
#      raw IPv4 P+3, UDP/IPv6 P+4, raw IPv6 P+5: a server ticking as P+1's;
#              3 echoes of 100,000 bytes, then 200 of 100 bytes;
#      P+6..P+9, one per kind: a slow server (kapi_echo_server waiting 30
#              ms before each response), 3 echoes of 1,000 bytes: the
#              client asks for its response (RESEND), the server answers
#              BUSY.
#    Each kind must show DATA, GRANT, CUTOFFS, NEED_ACK, ACK, RESEND and
#    BUSY (RPC_UNKNOWN and FREEZE are checked on synthetic packets only).
#    Raw IP needs CAP_NET_RAW: without it the raw-IP kinds are left out
#    with a NOTE line (a failure with HOMA_TEST_REQUIRE_RAW=1, which CI
#    sets); so are the IPv6 kinds on a loopback without ::1.
#    The capture is decoded (UDP by the preference homa.udp_ports) and
#    checked against the protocol: every packet is Homa with a valid type;
#    DATA offsets are multiples of the payload per packet at mtu 1500
#    (1416 over UDP/IPv4, 1424 raw IPv4, 1396 UDP/IPv6, 1404 raw IPv6;
#    every program runs with HOMA_LOOPBACK_MTU=0, packets of mtu, and
#    HOMA_LOOPBACK_MAX_INCOMING=0 and HOMA_LOOPBACK_UNSCHED_BYTES=0, the
#    grant window and unscheduled bytes of a network),
#    packets full but the last, and the distinct packets of each message
#    add up to its length; client ids
#    even, server ids odd, response id = request id XOR 1, echo lengths;
#    GRANT offsets increase, precede the DATA they allow and end at the
#    message length; incoming is a granted offset; CUTOFFS carry the
#    default cutoffs and answer DATA without them; priorities (control 7,
#    unscheduled by cutoffs, scheduled as granted); NEED_ACK and ACK (and
#    piggy-backed acks) name finished RPCs; the number of requests of each
#    size is what the clients sent, per kind (see dissector_check.py).
#
# Needs tshark and dumpcap (Debian packages tshark and wireshark-common),
# python3, ss (iproute2), and root (or dumpcap's capture capability) for
# the live part.  Without tshark it prints a line starting "SKIP" and exits
# 77, which CTest reports as skipped; HOMA_DISSECTOR_REQUIRE=1 (CI sets it)
# makes that a failure.  A non-root user whom dumpcap refuses gets the
# synthetic part and a SKIP line for the live one (exit 77 too), and
# without CAP_NET_RAW the live raw-IP capture is left out (exit 77 at the
# end unless something failed; a failure with HOMA_TEST_REQUIRE_RAW=1).
#
# Environment: HOMA_SOURCE_DIR, HOMA_BUILD_DIR (CTest sets both; default:
# this script's repository and its build/ folder); HOMA_DISSECTOR_KEEP=DIR
# copies the pcaps and the programs' output there before clean-up.  Only
# loopback is used, the capture stops by itself after 120 s at most, each
# client after 60 s, and temporary files are removed at exit.  It takes
# about 5 s.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${HOMA_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
build=${HOMA_BUILD_DIR:-$src/build}
lua=$src/tools/wireshark/homa.lua
helper=$src/tests/e2e/dissector_check.py

# skip REASON [WHAT] - print a loud SKIP line (WHAT did not run; default:
# the dissector tests) and exit 77 (1 with HOMA_DISSECTOR_REQUIRE=1).
skip() {
	if [ "${HOMA_DISSECTOR_REQUIRE:-0}" = 1 ]; then
		echo "FAIL: test_dissector: cannot run: $1 (HOMA_DISSECTOR_REQUIRE=1)"
		exit 1
	fi
	echo "SKIP: test_dissector: $1 -- ${2:-the dissector tests} did NOT run"
	exit 77
}
part_skipped=0   # the live raw-IP capture did not run: exit 77 at the end

command -v tshark >/dev/null 2>&1 ||
	skip "tshark is not installed (Debian packages tshark and wireshark-common; 'make deps')"
tshark=$(command -v tshark)
dumpcap=$(command -v dumpcap 2>/dev/null || echo /usr/bin/dumpcap)
command -v python3 >/dev/null 2>&1 ||
	{ echo "FAIL: test_dissector: python3 is not installed"; exit 1; }
[ -f "$lua" ] || { echo "FAIL: test_dissector: $lua is missing"; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/homa-dissector.XXXXXX")
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
	done
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null
	done
	if [ -n "${HOMA_DISSECTOR_KEEP:-}" ]; then
		mkdir -p "$HOMA_DISSECTOR_KEEP"
		cp -r "$tmp"/. "$HOMA_DISSECTOR_KEEP"/
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

# tshark reads no personal preferences or plugins of the user (a homa.lua
# installed as a plugin would clash with -X lua_script).
mkdir -p "$tmp/home"
export HOME=$tmp/home
unset XDG_CONFIG_HOME WIRESHARK_CONFIG_DIR

failed=0

# ---- 1. synthetic packets ----------------------------------------------
echo "== synthetic packets"
if ! python3 "$helper" synthetic --tshark "$tshark" --lua "$lua" \
	--dir "$tmp" --corpus "$src/fuzz/corpus/wire"; then
	echo "FAIL: test_dissector: synthetic packets"
	failed=1
fi

# Installed as the README says (a personal Lua plugin), without -X.
plugins=$HOME/.local/lib/wireshark/plugins
mkdir -p "$plugins"
cp "$lua" "$plugins/"
got=$("$tshark" -n -r "$tmp/synthetic.pcap" -o homa.udp_ports:99 \
	-Y "homa.type == 0x11" -T fields -e homa.grant.offset 2>/dev/null |
	head -1)
if [ "$got" = 50000 ]; then
	echo "installed as a plugin in $plugins: decodes (GRANT offset $got)"
else
	echo "FAIL: test_dissector: installed as a plugin, the first GRANT" \
		"decodes with offset '$got', not 50000"
	failed=1
fi
rm -f "$plugins/homa.lua"

# ---- 2. live traffic ---------------------------------------------------
echo "== live traffic on loopback"
server=$build/examples/echo_server
client=$build/examples/echo_client
kserver=$build/tests/preload/kapi_echo_server
shim=$build/libhoma_preload.so
for b in "$server" "$client" "$kserver" "$shim"; do
	[ -e "$b" ] || { echo "FAIL: test_dissector: $b is not built"; exit 1; }
done
# The sanitizer runtime the shim needs, if any, goes first.
runtime=$(ldd "$shim" 2>/dev/null | awk '/lib(a|t)san\.so/ { print $3 }')
preload="${runtime:+$runtime }$shim"

# What can run here: raw IP needs CAP_NET_RAW (capability 13), IPv6 a
# loopback with ::1.
has_cap_net_raw() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
	[ -n "$eff" ] && (( (0x$eff >> 13) & 1 ))
}
kinds="udp4"
has_v6=0
grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null &&
	has_v6=1
[ $has_v6 = 1 ] && kinds="$kinds udp6"
if has_cap_net_raw; then
	kinds="$kinds ip4"
	[ $has_v6 = 1 ] && kinds="$kinds ip6"
elif [ "${HOMA_TEST_REQUIRE_RAW:-0}" = 1 ]; then
	echo "FAIL: test_dissector: no CAP_NET_RAW: the live raw-IP capture" \
		"cannot run (HOMA_TEST_REQUIRE_RAW=1)"
	failed=1
else
	echo "SKIP: test_dissector: no CAP_NET_RAW (run as root): the live" \
		"raw-IP capture did NOT run; the synthetic IP protocol 146" \
		"packets did"
	part_skipped=1
fi
[ $has_v6 = 1 ] || echo "NOTE: test_dissector: the loopback has no ::1:" \
	"the live IPv6 capture did NOT run"

# A block of 16 free UDP ports in 20000..29999 (raw IP serves Homa ports
# too: libhoma reserves them as UDP ports).  Relative to its first, P:
#   0 udp4: echo_server, long messages (several GRANTs each)
#   1 udp4: echo_server ticking every 100 us and asking for an ack one tick
#           after a response is sent (NEED_ACK meets a live client: ACK)
#   2 probes that tell when the capture runs
#   3 ip4, 4 udp6, 5 ip6: a server ticking as P+1's, for long messages and
#           then short ones (echo_server over IPv4, kapi_echo_server under
#           the shim over IPv6)
#   6 udp4, 7 ip4, 8 udp6, 9 ip6: a slow server (kapi_echo_server waiting
#           30 ms before each response): the client asks for its response
#           (RESEND), the server answers BUSY
port_free() {
	! ss -Hauln "( sport = :$1 )" 2>/dev/null | grep -q .
}
port=""
for try in $(seq 0 19); do
	p=$((20000 + (($$ + try * 263) % 625) * 16))
	ok=1
	for i in $(seq 0 15); do
		port_free $((p + i)) || { ok=0; break; }
	done
	if [ $ok = 1 ]; then
		port=$p
		break
	fi
done
[ -n "$port" ] || { echo "FAIL: test_dissector: no free UDP ports"; exit 1; }
last=$((port + 15))
probe_port=$((port + 2))
echo "Homa server ports $port..$((port + 9)) (kinds: $kinds); probes to" \
	"UDP port $probe_port"

# dumpcap writes to a pipe-like stdout so that each packet reaches the file
# at once.  It says "Capturing on" a little before packets really arrive, so
# a probe datagram (to probe_port, where nothing listens) is sent until it
# shows up in the file; another one at the end shows that everything before
# it has been written.  The filter: UDP to or from the block, and protocol
# 146 over IPv4 (a 20-byte header on loopback) and IPv6 (next header 146
# in the fixed header: no extension headers on loopback) to or from it.
pcap=$tmp/live.pcapng
in_block() {  # in_block EXPR - the BPF test that EXPR is a port of the block
	echo "($1 >= $port and $1 <= $last)"
}
"$dumpcap" -i lo -B 64 -a duration:120 -w - \
	-f "(udp portrange $port-$last) or
	    (ip proto 146 and ($(in_block 'ip[20:2]') or $(in_block 'ip[22:2]'))) or
	    (ip6 proto 146 and ($(in_block 'ip6[40:2]') or $(in_block 'ip6[42:2]')))" \
	>"$pcap" 2>"$tmp/dumpcap.out" &
dumpcap_pid=$!
pids+=("$dumpcap_pid")

# probe MARK - send MARK to probe_port every 0.1 s until the capture file
# has it (10 s at most).
probe() {
	for _ in $(seq 100); do
		kill -0 "$dumpcap_pid" 2>/dev/null || return 1
		echo "$1" >/dev/udp/127.0.0.1/"$probe_port" 2>/dev/null
		sleep 0.1
		grep -qa "$1" "$pcap" && return 0
	done
	return 1
}
if ! probe "homa-dissector-probe-start-$$"; then
	cat "$tmp/dumpcap.out"
	if [ "$(id -u)" != 0 ]; then
		[ $failed = 0 ] || exit 1
		skip "dumpcap cannot capture on lo as $(id -un) (run as root, or let dumpcap capture: dpkg-reconfigure wireshark-common)" \
			"the live-traffic tests (the synthetic ones passed)"
	fi
	echo "FAIL: test_dissector: dumpcap does not capture on lo"
	exit 1
fi

# start_server NAME PORT CMD... [-- VAR=VALUE...] - start CMD (its last
# word is the port) with those settings in its environment, output in
# $tmp/NAME.out; wait until it serves (5 s at most).  Returns 1 when it did
# not start.
start_server() {
	local name=$1 pid
	shift
	local cmd=() envs=()
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		cmd+=("$1")
		shift
	done
	[ $# -gt 0 ] && shift
	envs=("$@")
	env "${envs[@]}" "${cmd[@]}" >"$tmp/$name.out" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 50); do
		grep -q "serving" "$tmp/$name.out" && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# run_client NAME [VAR=VALUE...] -- ARGS - echo_client ARGS (60 s at most).
run_client() {
	local name=$1
	shift
	local envs=()
	while [ "$1" != "--" ]; do
		envs+=("$1")
		shift
	done
	shift
	env "${envs[@]}" timeout 60 "$client" "$@" >"$tmp/$name.out" 2>&1 && return 0
	cat "$tmp/$name.out"
	return 1
}

# Settings of the servers that ask for acks (see P+1 above).
acks=(HOMA_TICK_USECS=100 HOMA_REQUEST_ACK_TICKS=1 HOMA_RESEND_TICKS=20
	HOMA_RESEND_INTERVAL=20 HOMA_TIMEOUT_TICKS=200)
big=400000
big_count=3
small=100
small_count=500
mid=100000
mid_count=3
few=200
slow_size=1000
slow_count=3
slow_ms=30
serve_args=()
expect_args=()
require_args=()
types=DATA,GRANT,CUTOFFS,NEED_ACK,ACK,RESEND,BUSY
for kind in $kinds; do
	case $kind in
	udp4) off=0 slow=6 fam=4 host=127.0.0.1 tr=udp ;;
	ip4) off=3 slow=7 fam=4 host=127.0.0.1 tr=ip ;;
	udp6) off=4 slow=8 fam=6 host=::1 tr=udp ;;
	ip6) off=5 slow=9 fam=6 host=::1 tr=ip ;;
	esac
	p=$((port + off))
	sp=$((port + slow))
	trenv=("HOMA_TRANSPORT=$tr" HOMA_LOOPBACK_MTU=0 HOMA_LOOPBACK_MAX_INCOMING=0
		HOMA_LOOPBACK_UNSCHED_BYTES=0)
	ok=1
	if [ $kind = udp4 ]; then
		start_server "server-$kind" "$server" "$p" -- "${trenv[@]}" &&
			start_server "server-$kind-acks" "$server" $((p + 1)) \
				-- "${trenv[@]}" "${acks[@]}" || ok=0
		serve_args+=(--serve "$kind=$p,$((p + 1)),$sp")
		expect_args+=(--expect "$kind=$big:$big_count,$small:$small_count,$slow_size:$slow_count")
	elif [ $fam = 4 ]; then
		start_server "server-$kind" "$server" "$p" -- "${trenv[@]}" \
			"${acks[@]}" || ok=0
		serve_args+=(--serve "$kind=$p,$sp")
		expect_args+=(--expect "$kind=$mid:$mid_count,$small:$few,$slow_size:$slow_count")
	else
		start_server "server-$kind" "$kserver" "$p" 6 -- \
			LD_PRELOAD="$preload" "${trenv[@]}" "${acks[@]}" || ok=0
		serve_args+=(--serve "$kind=$p,$sp")
		expect_args+=(--expect "$kind=$mid:$mid_count,$small:$few,$slow_size:$slow_count")
	fi
	require_args+=(--require "$kind=$types")
	start_server "server-$kind-slow" "$kserver" "$sp" "$fam" "$slow_ms" \
		-- LD_PRELOAD="$preload" "${trenv[@]}" || ok=0
	if [ $ok = 0 ]; then
		cat "$tmp"/server-"$kind"*.out
		echo "FAIL: test_dissector: the $kind echo servers did not start"
		failed=1
		continue
	fi
	if [ $kind = udp4 ]; then
		run_client "client-$kind" "${trenv[@]}" -- "$host" "$p" \
			$big_count $big || ok=0
		run_client "client-$kind-acks" "${trenv[@]}" -- "$host" \
			$((p + 1)) $small_count $small || ok=0
	else
		run_client "client-$kind" "${trenv[@]}" -- "$host" "$p" \
			$mid_count $mid || ok=0
		run_client "client-$kind-acks" "${trenv[@]}" -- "$host" "$p" \
			$few $small || ok=0
	fi
	run_client "client-$kind-slow" "${trenv[@]}" -- "$host" "$sp" \
		$slow_count $slow_size || ok=0
	if [ $ok = 0 ]; then
		echo "FAIL: test_dissector: an echo_client over $kind failed"
		failed=1
	fi
done

# Let the servers ask for acks of the last responses, then stop them and,
# once the end probe is in the file, dumpcap.
sleep 0.5
for p in "${pids[@]:1}"; do
	kill "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
probe "homa-dissector-probe-end-$$" ||
	echo "test_dissector: the end probe did not reach the capture"
kill -INT "$dumpcap_pid" 2>/dev/null
wait "$dumpcap_pid" 2>/dev/null
pids=()
grep -E "^Packets" "$tmp/dumpcap.out"

if [ $failed = 0 ]; then
	if ! python3 "$helper" live --tshark "$tshark" --lua "$lua" \
		--pcap "$pcap" "${serve_args[@]}" "${expect_args[@]}" \
		"${require_args[@]}" --filter "!(udp.port == $probe_port)"; then
		echo "FAIL: test_dissector: live traffic"
		failed=1
	fi
fi

if [ $failed != 0 ]; then
	echo "test_dissector: FAILED"
	exit 1
fi
if [ $part_skipped != 0 ]; then
	echo "test_dissector: PASS, but the live raw-IP capture was SKIPPED"
	exit 77
fi
echo "test_dissector: PASS (synthetic packets, live traffic over: $kinds)"
