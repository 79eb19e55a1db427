#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_dissector.sh - the Wireshark dissector tools/wireshark/homa.lua,
# run by tshark on synthetic packets and on real libhoma traffic.
#
# 1. Synthetic: tests/e2e/dissector_check.py writes a pcap with one packet
#    of every Homa type with known field values (over UDP, and as IP
#    protocol 146 over IPv4 and IPv6), malformed packets (short, unknown
#    type, truncated header, DATA outside its message, ...), segmentation
#    offload batches (several Homa packets in one UDP datagram, as loopback
#    captures show them), a packet cut by the snap length, a UDP datagram on
#    ports that are not Homa's, and the wire corpus fuzz/corpus/wire/*.bin;
#    tshark decodes it with the dissector (`-X lua_script:`, `-d
#    udp.port==P,homa`, `-o homa.udp_ports:...`) and every homa.* field of
#    every frame, the Info column and the expert infos are compared.  Then
#    the dissector is installed as a personal plugin (in a temporary HOME)
#    and must decode without -X.
# 2. Live: dumpcap captures loopback while the example programs
#    (build/examples/echo_server, echo_client) run:
#      UDP port P: 3 echoes of 400,000 bytes (DATA, GRANTs, CUTOFFS from
#              each new peer, NEED_ACK after the last response);
#      UDP port P+1: 500 echoes of 100 bytes with a server ticking every
#              100 us and asking for acks one tick after a response is sent
#              (NEED_ACK, answered by ACK);
#      raw IP (protocol 146) port P+3: 3 echoes of 100,000 bytes with
#              HOMA_TRANSPORT=ip, when that works here (it needs
#              CAP_NET_RAW); otherwise a NOTE line says it did not run.
#    The capture is decoded (UDP by the preference homa.udp_ports) and
#    checked against the protocol: every packet is Homa with a valid type;
#    DATA offsets are multiples of 1416 over UDP and 1424 over raw IP
#    (mtu 1500), packets full but the last, and the
#    distinct packets of each message add up to its length; client ids
#    even, server ids odd, response id = request id XOR 1, echo lengths;
#    GRANT offsets increase, precede the DATA they allow and end at the
#    message length; incoming is a granted offset; CUTOFFS carry the
#    default cutoffs and answer DATA without them; priorities (control 7,
#    unscheduled by cutoffs, scheduled as granted); NEED_ACK and ACK (and
#    piggy-backed acks) name finished RPCs; the number of requests of each
#    size is what the clients sent (see dissector_check.py).
#
# Needs tshark and dumpcap (Debian packages tshark and wireshark-common),
# python3, ss (iproute2), and root (or dumpcap's capture capability) for
# the live part.  Without tshark it prints a line starting "SKIP" and exits
# 0; HOMA_DISSECTOR_REQUIRE=1 makes that a failure.  A non-root user whom
# dumpcap refuses gets the synthetic part and a SKIP line for the live one.
#
# Environment: HOMA_SOURCE_DIR, HOMA_BUILD_DIR (CTest sets both; default:
# this script's repository and its build/ folder); HOMA_DISSECTOR_KEEP=DIR
# copies the pcaps and the programs' output there before clean-up.  Only
# loopback is used, the capture stops by itself after 120 s at most, each
# client after 60 s, and temporary files are removed at exit.

set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=${HOMA_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
build=${HOMA_BUILD_DIR:-$src/build}
lua=$src/tools/wireshark/homa.lua
helper=$src/tests/e2e/dissector_check.py

# skip REASON [WHAT] - print a loud SKIP line (WHAT did not run; default:
# the dissector tests) and exit 0 (1 with HOMA_DISSECTOR_REQUIRE=1).
skip() {
	if [ "${HOMA_DISSECTOR_REQUIRE:-0}" = 1 ]; then
		echo "FAIL: test_dissector: cannot run: $1 (HOMA_DISSECTOR_REQUIRE=1)"
		exit 1
	fi
	echo "SKIP: test_dissector: $1 -- ${2:-the dissector tests} did NOT run"
	exit 0
}

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
for b in "$server" "$client"; do
	[ -x "$b" ] || { echo "FAIL: test_dissector: $b is not built"; exit 1; }
done

# Four free UDP ports in 20000..29999: two Homa server ports, one for the
# probes that tell when the capture runs, and the Homa port served over raw
# IP (which libhoma also reserves as a UDP port).
port_free() {
	! ss -Hauln "( sport = :$1 )" 2>/dev/null | grep -q .
}
port=""
for try in $(seq 0 19); do
	p=$((20000 + (($$ + try * 263) % 2500) * 4))
	if port_free "$p" && port_free $((p + 1)) && port_free $((p + 2)) &&
		port_free $((p + 3)); then
		port=$p
		break
	fi
done
[ -n "$port" ] || { echo "FAIL: test_dissector: no free UDP ports"; exit 1; }
port2=$((port + 1))
probe_port=$((port + 2))
ip_port=$((port + 3))
echo "Homa server ports: $port and $port2 over UDP, $ip_port over raw IP;" \
	"probes to UDP port $probe_port"

# dumpcap writes to a pipe-like stdout so that each packet reaches the file
# at once.  It says "Capturing on" a little before packets really arrive, so
# a probe datagram (to probe_port, where nothing listens) is sent until it
# shows up in the file; another one at the end shows that everything before
# it has been written.
pcap=$tmp/live.pcapng
"$dumpcap" -i lo -B 64 -a duration:120 -w - \
	-f "udp portrange $port-$probe_port or (ip proto 146 and
	    (ip[20:2] = $ip_port or ip[22:2] = $ip_port))" \
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

# start_server NAME PORT [VAR=VALUE...] - start echo_server on PORT with
# those settings in its environment, output in $tmp/NAME.out; wait until it
# serves (5 s at most).  Returns 1 when it did not start.
start_server() {
	local name=$1 p=$2 pid
	shift 2
	env "$@" "$server" "$p" >"$tmp/$name.out" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 50); do
		grep -q "serving Homa port" "$tmp/$name.out" && return 0
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

# Over UDP, port: long messages (several GRANTs each).  port2: short
# messages to a server that ticks every 100 us and asks for an ack one tick
# after a response is sent, so that NEED_ACKs meet a live client (ACK).
big=400000
big_count=3
small=100
small_count=500
if ! start_server server1 "$port" ||
	! start_server server2 "$port2" HOMA_TICK_USECS=100 \
		HOMA_REQUEST_ACK_TICKS=1 HOMA_RESEND_TICKS=20 \
		HOMA_RESEND_INTERVAL=20 HOMA_TIMEOUT_TICKS=200; then
	cat "$tmp"/server*.out
	echo "FAIL: test_dissector: the echo servers did not start"
	exit 1
fi
if ! run_client client1 -- 127.0.0.1 "$port" $big_count $big; then
	echo "FAIL: test_dissector: echo_client ($big_count x $big bytes) failed"
	failed=1
fi
if ! run_client client2 -- 127.0.0.1 "$port2" $small_count $small; then
	echo "FAIL: test_dissector: echo_client ($small_count x $small bytes) failed"
	failed=1
fi

# Over raw IP (protocol 146), when this library and this user can: it needs
# CAP_NET_RAW.  Otherwise the synthetic protocol-146 packets stand alone.
ip_size=100000
ip_count=3
ip_args=(--filter "!(udp.port == $probe_port) && udp")
if start_server server_ip "$ip_port" HOMA_TRANSPORT=ip &&
	run_client client_ip HOMA_TRANSPORT=ip -- 127.0.0.1 "$ip_port" \
		$ip_count $ip_size; then
	ip_args=(--ip-ports "$ip_port"
		--filter "!(udp.port == $probe_port) && (udp || homa.port == $ip_port)"
		--ip-expect "$ip_size:$ip_count")
else
	cat "$tmp/server_ip.out" 2>/dev/null
	echo "NOTE: test_dissector: no Homa traffic over raw IP here" \
		"(HOMA_TRANSPORT=ip failed, see above): the live raw-IP" \
		"check did NOT run; the synthetic IP protocol 146 packets did"
fi

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
		--pcap "$pcap" --ports "$port,$port2" \
		--expect "$big:$big_count,$small:$small_count" \
		"${ip_args[@]}"; then
		echo "FAIL: test_dissector: live traffic"
		failed=1
	fi
fi

if [ $failed != 0 ]; then
	echo "test_dissector: FAILED"
	exit 1
fi
echo "test_dissector: PASS (synthetic packets and live traffic)"
