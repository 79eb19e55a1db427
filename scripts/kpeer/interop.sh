#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# interop.sh - libhoma against the kernel Homa module, in both directions.
#
#   usage: scripts/kpeer/interop.sh [--short] [--build DIR] [--families "4 6"]
#                                   [--loss "0 2"] [--only REGEX] [TARBALL]
#
# Boots the guest of build_image.sh (kernel Homa loaded) in a network
# namespace of its own and runs, with libhoma on this host under
# LD_PRELOAD=libhoma_preload.so HOMA_TRANSPORT=ip ("lh") and the module in
# the guest ("kh"):
#   echo lh->kh, kh->lh  kapi_echo_client against kapi_echo_server, the
#                        project's kernel-API programs (tests/preload), the
#                        guest's built against the module's own homa.h:
#                        ids, cookies, bpages, 1 B to 1 MB byte for byte,
#                        8 in flight, private RPCs
#   homa_test lh->kh, kh->lh  the module's homa_test (invoke and rtt at
#                        8 B..1 MB, lengths that are multiples of 4: its
#                        check reads the last int whole) against the
#                        module's `server --validate` on the other side
#   cp_node lh->kh, kh->lh    the module's cp_node client (IPv4) against
#                        `cp_node server` on the other side: RPCs complete,
#                        no ERROR or FATAL line
# per address family and per loss rate (iptables drops of protocol 146
# each way, in the namespace); then, once, without loss over IPv4:
#   restart lh->kh, kh->lh    the server is killed while it holds a
#                        request and started again; the RPC completes
#   no server lh->kh, kh->lh  an RPC to a port nobody holds fails with
#                        ENOTCONN or ETIMEDOUT (which one depends on the
#                        side: see docs/kernel-homa.md)
#   busy lh->kh, kh->lh  a server answers after longer than the timeout;
#                        the client waits (BUSY packets in the capture)
#   kapi in kh           kapi_poll, kapi_fork, kapi_abort, kapi_errors,
#                        kapi_dup, kapi_wmem (net.homa.wmem_max=100000)
#                        on the guest's loopback against kernel Homa: the
#                        kernel's behaviour is the one the shim's tests
#                        expect
# --short (CI): echo both ways over IPv4 and IPv6 without loss, echo both
# ways over IPv4 at 2% loss, homa_test both ways, restart and no server
# both ways.  --only REGEX runs the tests whose names match (grep -E).
# A test fails when a byte is wrong, an RPC fails or times
# out, or libhoma refused a packet of the kernel as malformed (the
# counters HOMA_PRELOAD_STATS writes as a socket closes: libhoma's
# kapi_* programs close theirs; the module's programs under the shim are
# killed and leave none).  Every failure prints its evidence: the
# programs' output and the last Homa packets of its capture, decoded by
# tools/wireshark/homa.lua.
#
# Timeouts are long (TCG guests stall): libhoma HOMA_TIMEOUT_TICKS=60000
# and HOMA_ALIVE_TIMEOUT_TICKS=120000 (both raised: the alive timeout is
# never less than the timeout), the module's timeout_ticks=60000; the
# BUSY tests use 5000 on the client's side.  A warm-up of three 1 MB RPCs runs
# first.  Tests listed in XFAILS (below, with their reasons) are known
# differences: their failure prints XFAIL and does not fail the run.
# A TCG guest drops some of its own packets on the way out, so a run
# "without loss" still retransmits.
#
# Environment: HOMA_KERNEL_TARBALL (or the argument), KPEER_REQUIRE=1 (a
# run that cannot start fails instead of skipping), KPEER_ACCEL, KPEER_KEEP
# (see common.sh and lib.sh).  HOMA_BUILD_DIR or --build: the libhoma
# build (default build/).
# Exit status: 0 all passed, 1 a test failed, 77 skipped (no tarball, no
# accelerator boots the guest, not root, missing programs), 2 usage.
set -uo pipefail
. "$(dirname "$0")/common.sh"
. "$KPEER_DIR/lib.sh"

short=0
only=""
build=${HOMA_BUILD_DIR:-$KPEER_SRC/build}
families="4 6"
losses="0 2"
while [ $# -gt 0 ]; do
	case $1 in
	--short) short=1 ;;
	--build) build=$2; shift ;;
	--families) families=$2; shift ;;
	--loss) losses=$2; shift ;;
	--only) only=$2; shift ;;
	-h|--help) sed -n '3,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "interop.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
	*) HOMA_KERNEL_TARBALL=$1 ;;
	esac
	shift
done
export HOMA_KERNEL_TARBALL=${HOMA_KERNEL_TARBALL:-}
kpeer_tarball >/dev/null
kpeer_need_tools
shim=$build/libhoma_preload.so
kapi=$build/tests/preload
for f in "$shim" "$kapi/kapi_echo_server" "$kapi/kapi_echo_client" \
	 "$kapi/kapi_rpc"; do
	[ -x "$f" ] || [ -f "$f" ] || {
		echo "interop.sh: $f is missing: build first (make build)" >&2
		exit 2
	}
done
guest=$("$KPEER_DIR/build_image.sh")
status=$?
[ $status -eq 0 ] || exit $status
host_util=$guest/host-util
dissector=$KPEER_SRC/tools/wireshark/homa.lua

# Timeouts (ticks of 1 ms).  A TCG guest on a loaded host was seen to
# stall for 34 s (an RCU stall report), and its network device's transmit
# queue to stop for 5 to 6 s at a time (NETDEV WATCHDOG) while its clock
# ran on: both sides wait 60 s (libhoma 120 s for a peer still heard
# from).  Only the BUSY tests use TO, a server slower than it.
TO=5000
LH_TO=60000
KH_TO=60000
passed=0
failed=0
failures=()
t_start=$SECONDS
cap_pid=""
host_pids=()

cleanup() {
	local p
	for p in "${host_pids[@]}" $cap_pid; do
		kill "$p" 2>/dev/null && wait "$p" 2>/dev/null
	done
	[ -z "$KPEER_NS" ] || rm -rf "/etc/netns/$KPEER_NS"
	kpeer_shutdown
}
trap cleanup EXIT
trap 'exit 1' INT TERM

kpeer_boot "$guest" "timeout_ticks=$KH_TO" "timeout_resends=50" ||
	kpeer_skip "no accelerator boots the guest (KVM, then TCG)"
# Names of the peers: cp_node finds its server as "node1", homa_test
# takes NAME:PORT (ip netns exec mounts /etc/netns/NS/hosts on /etc/hosts).
mkdir -p "/etc/netns/$KPEER_NS"
printf '127.0.0.1 localhost\n%s node1 kguest\n%s kguest\n' \
	"$KPEER_GUEST4" "$KPEER_GUEST6" >"/etc/netns/$KPEER_NS/hosts"
kpeer_guest hosts "printf '%s node1 lhost\\n%s lhost\\n' $KPEER_HOST4 $KPEER_HOST6 >>/etc/hosts"
kpeer_guest_wait hosts 60
. "$guest/info"
echo "kernel peer: module $module_commit, guest kernel $guest_kernel," \
	"accelerator $KPEER_ACCEL_USED"

logs=$KPEER_JOB/logs
mkdir -p "$logs"
port=1000

# lh_env - the environment of libhoma's programs here.
lh_env() {
	local to=${3:-$LH_TO}
	echo LD_PRELOAD="$shim" HOMA_TRANSPORT=ip HOMA_TIMEOUT_TICKS=$to \
		HOMA_ALIVE_TIMEOUT_TICKS=$((to * 2)) \
		HOMA_PRELOAD_STATS="$logs/stats" KAPI_ADDR4="$1" KAPI_ADDR6="$2"
}

# Counters of packets libhoma refused as malformed (HOMA_PRELOAD_STATS).
REFUSED='drop_(short|bad_type|short_type|bad_length|bad_offset|length_mismatch)='

# refused_since LINE - the sockets closed after line LINE of the stats
# file that refused packets (their lines); 1 when there are none.
refused_since() {
	tail -n +"$(($1 + 1))" "$logs/stats" 2>/dev/null | grep -E "$REFUSED"
}

# host_bg LOG CMD... - run CMD here in the namespace, in the background
# (its pid in $host_pid: a simple command, not the kpeer_host function,
# so that $! is CMD itself and not a subshell that a kill would miss).
host_bg() {
	local log=$1
	shift
	ip netns exec "$KPEER_NS" "$@" >"$log" 2>&1 &
	host_pid=$!
	host_pids+=("$host_pid")
}

# host_stop PID - end a background program of host_bg.
host_stop() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# wait_file_grep FILE PATTERN SECONDS
wait_file_grep() {
	local end=$((SECONDS + $3))
	while [ $SECONDS -lt $end ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.2
	done
	return 1
}

# evidence NAME - what a failed test leaves: outputs and the capture.
evidence() {
	local f
	if [ -s "$logs/$1.refused" ]; then
		echo "    --- libhoma refused packets of the kernel peer as malformed:"
		sed 's/^/    | /' "$logs/$1.refused"
	fi
	for f in "$logs/$1".*; do
		case $f in *.pcapng|*.refused) continue ;; esac
		[ -s "$f" ] || continue
		echo "    --- ${f##*/} (last lines)"
		tail -n 15 "$f" | sed 's/^/    | /'
	done
	if [ -s "$logs/$1.pcapng" ]; then
		echo "    --- last Homa packets ($logs/$1.pcapng)"
		tshark -r "$logs/$1.pcapng" -X "lua_script:$dissector" -Y homa \
			2>/dev/null | tail -n 20 | sed 's/^/    | /'
	fi
}

# Tests that fail for a difference between the module and what the
# project's kernel-API programs expect, not yet resolved
# (docs/kernel-homa.md): NAME|REASON.  They run; a failure prints XFAIL
# and its evidence but does not fail the suite, a pass (XPASS) does.
XFAILS=(
)
xpassed=0
xfailed=0

# xfail_reason NAME - the reason NAME is expected to fail, or nothing.
xfail_reason() {
	local x
	for x in "${XFAILS[@]}"; do
		[ "${x%%|*}" = "$1" ] && echo "${x#*|}"
	done
	return 0
}

# run_test NAME FUNC ARGS... - one test, with a capture of its packets.
run_test() {
	local name=$1 t0=$SECONDS slug xf
	shift
	[ -z "$only" ] || echo "$name" | grep -qE -- "$only" || return 0
	xf=$(xfail_reason "$name")
	slug=$(echo "$name" | tr -c 'A-Za-z0-9_.-' '_')
	port=$((port + 1))
	ip netns exec "$KPEER_NS" dumpcap -q -i tap0 -f "ip proto 146 or ip6 proto 146" \
		-w "$logs/$slug.pcapng" >/dev/null 2>&1 &
	cap_pid=$!
	sleep 1
	stats_at=$(cat "$logs/stats" 2>/dev/null | wc -l)
	if "$@" "$slug" >"$logs/$slug.log" 2>&1 &&
	   ! refused_since "$stats_at" >"$logs/$slug.refused"; then
		if [ -n "$xf" ]; then
			echo "XPASS $name ($((SECONDS - t0)) s): expected to fail ($xf)"
			xpassed=$((xpassed + 1))
			failures+=("$name (XPASS)")
		else
			echo "ok   $name ($((SECONDS - t0)) s)"
			passed=$((passed + 1))
		fi
	else
		if [ -n "$xf" ]; then
			echo "XFAIL $name ($((SECONDS - t0)) s): $xf"
			xfailed=$((xfailed + 1))
		else
			echo "FAIL $name ($((SECONDS - t0)) s)"
			failed=$((failed + 1))
			failures+=("$name")
		fi
		sleep 1
		kill "$cap_pid" 2>/dev/null
		wait "$cap_pid" 2>/dev/null
		cap_pid=""
		evidence "$slug"
	fi
	if [ -n "$cap_pid" ]; then
		kill "$cap_pid" 2>/dev/null
		wait "$cap_pid" 2>/dev/null
		cap_pid=""
	fi
}

# addr FAMILY SIDE - the address of the host (lh) or the guest (kh).
addr() {
	case $1$2 in
	4lh) echo "$KPEER_HOST4" ;; 6lh) echo "$KPEER_HOST6" ;;
	4kh) echo "$KPEER_GUEST4" ;; 6kh) echo "$KPEER_GUEST6" ;;
	esac
}

# guest_server NAME CMD PATTERN - start a server job in the guest and
# wait for PATTERN in its output (empty: for it to start, then 2 s).
guest_server() {
	kpeer_guest "$1" "$2"
	if [ -z "$3" ]; then
		wait_file_grep "$KPEER_JOB/q/$1.pid" "" 120 && sleep 2 && return 0
	fi
	kpeer_guest_grep "$1" "$3" 120 || {
		echo "the guest's server did not start:"
		kpeer_guest_out "$1"
		return 1
	}
}

# stop_guest NAME - end a guest job and wait for it.
stop_guest() {
	kpeer_guest_kill "$1"
	kpeer_guest_wait "$1" 30
	return 0
}

# --- echo: kapi_echo_client against kapi_echo_server -----------------------

# t_echo_lh_kh FAMILY RANDOM SLUG - libhoma client, kernel server.
t_echo_lh_kh() {
	local fam=$1 n=$2 slug=$3 a rc
	a=$(addr "$fam" kh)
	guest_server "$slug.srv" "KAPI_ADDR4=$a KAPI_ADDR6=$a exec bin/kapi_echo_server $port $fam" \
		"serving port" || return 1
	kpeer_host env $(lh_env "$a" "$a") timeout 900 \
		"$kapi/kapi_echo_client" $port "$fam" "$n" >"$logs/$slug.client" 2>&1
	rc=$?
	stop_guest "$slug.srv"
	kpeer_guest_out "$slug.srv" >"$logs/$slug.server"
	[ $rc -eq 0 ] && grep -q "kapi_echo_client: PASS" "$logs/$slug.client" &&
		! grep -q FAIL "$logs/$slug.server"
}

# t_echo_kh_lh FAMILY RANDOM SLUG - kernel client, libhoma server.
t_echo_kh_lh() {
	local fam=$1 n=$2 slug=$3 a rc pid
	a=$(addr "$fam" lh)
	host_bg "$logs/$slug.server" env $(lh_env "$a" "$a") \
		"$kapi/kapi_echo_server" $port "$fam"
	pid=$host_pid
	wait_file_grep "$logs/$slug.server" "serving port" 30 || {
		host_stop "$pid"; return 1; }
	kpeer_guest "$slug.cli" "KAPI_ADDR4=$a KAPI_ADDR6=$a exec bin/kapi_echo_client $port $fam $n"
	kpeer_guest_wait "$slug.cli" 900
	rc=$?
	kpeer_guest_out "$slug.cli" >"$logs/$slug.client"
	host_stop "$pid"
	[ $rc -eq 0 ] && grep -q "kapi_echo_client: PASS" "$logs/$slug.client" &&
		! grep -q FAIL "$logs/$slug.server"
}

# --- homa_test against server --validate ------------------------------------

# homa_test_cmds TARGET V6 - homa_test's runs: one RPC and then round
# trips, at lengths from 8 bytes to 1 MB (TARGET is NAME:PORT: homa_test
# splits at the first colon, so IPv6 goes by name, /etc/hosts).
homa_test_cmds() {
	local len
	for len in 8 100 1424 1428 15000 65536 100000 500000 1000000; do
		echo "$1 $2 --length $len --count 4 invoke rtt"
	done
}

# homa_test_ok LOG - homa_test printed results and no error.
homa_test_ok() {
	grep -q "Received message" "$1" &&
		! grep -qiE "error|bad value|failed|mismatch" "$1"
}

# t_homa_test_lh_kh FAMILY SLUG - libhoma's homa_test, kernel server.
t_homa_test_lh_kh() {
	local fam=$1 slug=$2 a v6="" args rc=0
	a=$(addr "$fam" kh)
	[ "$fam" = 6 ] && v6=--ipv6
	guest_server "$slug.srv" "exec util/server --port $port $v6 --validate" \
		"" || return 1
	while read -r args; do
		echo "\$ homa_test $args" >>"$logs/$slug.client"
		# shellcheck disable=SC2086  # the words of the command
		kpeer_host env $(lh_env "$a" "$a") timeout 300 \
			"$host_util/homa_test" $args >>"$logs/$slug.client" 2>&1 || rc=1
	done < <(homa_test_cmds "kguest:$port" "$v6")
	stop_guest "$slug.srv"
	kpeer_guest_out "$slug.srv" >"$logs/$slug.server"
	[ $rc -eq 0 ] && homa_test_ok "$logs/$slug.client" &&
		! grep -qiE "error|failed|bad value" "$logs/$slug.server"
}

# t_homa_test_kh_lh FAMILY SLUG - the kernel's homa_test, libhoma server.
t_homa_test_kh_lh() {
	local fam=$1 slug=$2 a v6="" pid script rc
	a=$(addr "$fam" lh)
	[ "$fam" = 6 ] && v6=--ipv6
	host_bg "$logs/$slug.server" env $(lh_env "$a" "$a") \
		"$host_util/server" --port $port $v6 --validate
	pid=$host_pid
	sleep 2
	script=$(homa_test_cmds "lhost:$port" "$v6" |
		sed 's|^\(.*\)$|echo "$ homa_test \1"; timeout 300 util/homa_test \1 \|\| st=1|')
	kpeer_guest "$slug.cli" "st=0
$script
exit \$st"
	kpeer_guest_wait "$slug.cli" 1200
	rc=$?
	kpeer_guest_out "$slug.cli" >"$logs/$slug.client"
	host_stop "$pid"
	[ $rc -eq 0 ] && homa_test_ok "$logs/$slug.client" &&
		! grep -qiE "error|failed|bad value" "$logs/$slug.server"
}

# --- cp_node -----------------------------------------------------------------

# cp_node_ok LOG - a client that completed RPCs and logged no error.
cp_node_ok() {
	! grep -qE "ERROR|FATAL" "$1" &&
		grep -qE "clients: [0-9.]+ Kops/sec" "$1" &&
		! grep "clients: " "$1" | tail -n 1 | grep -q "clients: 0\.00 Kops/sec"
}

CP_CLIENT="client --ports 1 --port-receivers 1 --server-ports 1 --workload 20000 --client-max 4 --gbps 0 --first-server 1 --server-nodes 1"

# t_cp_node_lh_kh SLUG - libhoma's cp_node client, kernel cp_node server.
t_cp_node_lh_kh() {
	local slug=$1
	guest_server "$slug.srv" "exec util/cp_node server --ports 1 --first-port $port --port-threads 1" "" ||
		return 1
	sleep 2
	kpeer_host env $(lh_env "$KPEER_GUEST4" "$KPEER_GUEST6") timeout 25 \
		"$host_util/cp_node" $CP_CLIENT --first-port $port \
		>"$logs/$slug.client" 2>&1 </dev/null
	stop_guest "$slug.srv"
	kpeer_guest_out "$slug.srv" >"$logs/$slug.server"
	cp_node_ok "$logs/$slug.client" &&
		! grep -qE "ERROR|FATAL" "$logs/$slug.server"
}

# t_cp_node_kh_lh SLUG - the kernel's cp_node client, libhoma server.
t_cp_node_kh_lh() {
	local slug=$1 pid
	host_bg "$logs/$slug.server" env $(lh_env "$KPEER_HOST4" "$KPEER_HOST6") \
		"$host_util/cp_node" server --ports 1 --first-port $port \
		--port-threads 1
	pid=$host_pid
	sleep 2
	kpeer_guest "$slug.cli" "timeout 25 util/cp_node $CP_CLIENT --first-port $port </dev/null; true"
	kpeer_guest_wait "$slug.cli" 120
	kpeer_guest_out "$slug.cli" >"$logs/$slug.client"
	host_stop "$pid"
	cp_node_ok "$logs/$slug.client" &&
		! grep -qE "ERROR|FATAL" "$logs/$slug.server"
}

# --- a server restarted mid-RPC -------------------------------------------

# t_restart_lh_kh SLUG - libhoma client; the kernel server dies while it
# holds the request, a new one takes the port.  While no socket holds the
# port, the kernel answers the client's RESENDs with ICMP port unreachable,
# and the client's RPC then fails with ENOTCONN, as a kernel client's
# does; the test drops that ICMP here, so that the client's RESENDs reach
# the new server, as they do when the server restarts before they come.
t_restart_lh_kh() {
	local slug=$1 a=$KPEER_GUEST4 pid
	kpeer_host iptables -I INPUT -p icmp --icmp-type port-unreachable -j DROP
	guest_server "$slug.srv1" "KAPI_ADDR4=$a exec bin/kapi_echo_server $port 4 10000" \
		"serving port" || return 1
	host_bg "$logs/$slug.client" env $(lh_env "$a" "$a") timeout 300 \
		"$kapi/kapi_rpc" $port 4 300000 2
	pid=$host_pid
	kpeer_guest_grep "$slug.srv1" "request" 120 || { host_stop "$pid"; return 1; }
	stop_guest "$slug.srv1"
	kpeer_guest_out "$slug.srv1" >"$logs/$slug.server1"
	guest_server "$slug.srv2" "KAPI_ADDR4=$a exec bin/kapi_echo_server $port 4" \
		"serving port" || { host_stop "$pid"; return 1; }
	wait "$pid"
	local rc=$?
	stop_guest "$slug.srv2"
	kpeer_host iptables -D INPUT -p icmp --icmp-type port-unreachable -j DROP
	[ $rc -eq 0 ] && grep -q "kapi_rpc: PASS 2 RPCs" "$logs/$slug.client"
}

# t_restart_kh_lh SLUG - the kernel's client; the libhoma server dies
# while it holds the request, a new one takes the port.  While no libhoma
# process runs here, this host answers Homa packets with ICMP protocol
# unreachable (the kernel client's RPC then fails with EPROTONOSUPPORT);
# the test drops that ICMP, as in t_restart_lh_kh.
t_restart_kh_lh() {
	local slug=$1 a=$KPEER_HOST4 pid rc
	kpeer_host iptables -I OUTPUT -p icmp --icmp-type protocol-unreachable -j DROP
	host_bg "$logs/$slug.server1" env $(lh_env "$a" "$a") \
		"$kapi/kapi_echo_server" $port 4 10000
	pid=$host_pid
	wait_file_grep "$logs/$slug.server1" "serving port" 30 || { host_stop "$pid"; return 1; }
	kpeer_guest "$slug.cli" "KAPI_ADDR4=$a exec bin/kapi_rpc $port 4 300000 2"
	wait_file_grep "$logs/$slug.server1" "request" 120 || { host_stop "$pid"; return 1; }
	host_stop "$pid"
	host_bg "$logs/$slug.server2" env $(lh_env "$a" "$a") \
		"$kapi/kapi_echo_server" $port 4
	pid=$host_pid
	kpeer_guest_wait "$slug.cli" 300
	rc=$?
	kpeer_guest_out "$slug.cli" >"$logs/$slug.client"
	host_stop "$pid"
	kpeer_host iptables -D OUTPUT -p icmp --icmp-type protocol-unreachable -j DROP
	[ $rc -eq 0 ] && grep -q "kapi_rpc: PASS 2 RPCs" "$logs/$slug.client"
}

# --- a port nobody holds ---------------------------------------------------

# t_noserver_lh_kh SLUG - libhoma client to a guest port without a socket.
t_noserver_lh_kh() {
	local slug=$1 a=$KPEER_GUEST4
	kpeer_host env $(lh_env "$a" "$a") timeout 120 \
		"$kapi/kapi_rpc" $port 4 1000 1 ENOTCONN ETIMEDOUT \
		>"$logs/$slug.client" 2>&1 &&
		grep -q "kapi_rpc: PASS failed with" "$logs/$slug.client"
}

# t_noserver_kh_lh SLUG - the kernel's client to a port of this host that
# no libhoma socket holds (while another libhoma server runs here).
t_noserver_kh_lh() {
	local slug=$1 a=$KPEER_HOST4 pid rc
	host_bg "$logs/$slug.server" env $(lh_env "$a" "$a") \
		"$kapi/kapi_echo_server" $((port + 500)) 4
	pid=$host_pid
	wait_file_grep "$logs/$slug.server" "serving port" 30 || { host_stop "$pid"; return 1; }
	kpeer_guest "$slug.cli" "KAPI_ADDR4=$a exec bin/kapi_rpc $port 4 1000 1 ENOTCONN ETIMEDOUT"
	kpeer_guest_wait "$slug.cli" 120
	rc=$?
	kpeer_guest_out "$slug.cli" >"$logs/$slug.client"
	host_stop "$pid"
	[ $rc -eq 0 ] && grep -q "kapi_rpc: PASS failed with" "$logs/$slug.client"
}

# --- an overloaded peer: BUSY ----------------------------------------------

BUSY_MS=$((TO * 3 / 2))

# busy_seen SLUG FROM - the capture holds BUSY packets sent from FROM.
busy_seen() {
	local n
	n=$(tshark -r "$logs/$1.pcapng" -X "lua_script:$dissector" \
		-Y "homa && ip.src == $2" 2>/dev/null | grep -c BUSY)
	echo "BUSY packets from $2: $n"
	[ "$n" -gt 0 ]
}

# t_busy_lh_kh SLUG - libhoma client; the kernel server answers after
# 1.5 timeouts.
t_busy_lh_kh() {
	local slug=$1 a=$KPEER_GUEST4 rc
	guest_server "$slug.srv" "KAPI_ADDR4=$a exec bin/kapi_echo_server $port 4 $BUSY_MS" \
		"serving port" || return 1
	kpeer_host env $(lh_env "$a" "$a" $TO) timeout 300 \
		"$kapi/kapi_rpc" $port 4 20000 1 >"$logs/$slug.client" 2>&1
	rc=$?
	stop_guest "$slug.srv"
	sleep 1
	[ $rc -eq 0 ] && grep -q "kapi_rpc: PASS 1 RPCs" "$logs/$slug.client" &&
		busy_seen "$slug" "$a"
}

# t_busy_kh_lh SLUG - the kernel's client; the libhoma server answers
# after 1.5 timeouts.
t_busy_kh_lh() {
	local slug=$1 a=$KPEER_HOST4 pid rc
	host_bg "$logs/$slug.server" env $(lh_env "$a" "$a") \
		"$kapi/kapi_echo_server" $port 4 $BUSY_MS
	pid=$host_pid
	wait_file_grep "$logs/$slug.server" "serving port" 30 || { host_stop "$pid"; return 1; }
	kpeer_guest "$slug.cli" "sysctl -q -w net.homa.timeout_ticks=$TO
KAPI_ADDR4=$a bin/kapi_rpc $port 4 20000 1
st=\$?
sysctl -q -w net.homa.timeout_ticks=$KH_TO
exit \$st"
	kpeer_guest_wait "$slug.cli" 300
	rc=$?
	kpeer_guest_out "$slug.cli" >"$logs/$slug.client"
	host_stop "$pid"
	sleep 1
	[ $rc -eq 0 ] && grep -q "kapi_rpc: PASS 1 RPCs" "$logs/$slug.client" &&
		busy_seen "$slug" "$a"
}

# --- the single-process kernel-API programs, in the guest ------------------

# t_kapi_guest PROG SLUG - bin/kapi_PROG on the guest's loopback.
t_kapi_guest() {
	# What the programs allow for against the module (error_msg's
	# texts in kapi_errors.c, its ICMP in kapi_abort.c): KAPI_KERNEL.
	local prog=$1 slug=$2 rc pre="export KAPI_KERNEL=1" post=""
	if [ "$prog" = wmem ]; then
		pre="$pre; old=\$(sysctl -n net.homa.wmem_max); sysctl -q -w net.homa.wmem_max=100000"
		post="st=\$?; sysctl -q -w net.homa.wmem_max=\$old; exit \$st"
	fi
	kpeer_guest "$slug.run" "$pre
timeout 120 bin/kapi_$prog $port
$post"
	kpeer_guest_wait "$slug.run" 200
	rc=$?
	kpeer_guest_out "$slug.run" >"$logs/$slug.out"
	[ $rc -eq 0 ] && grep -q "kapi_$prog: PASS" "$logs/$slug.out"
}

# --- the matrix ------------------------------------------------------------

# warm_up - a few 1 MB RPCs each way before the tests, not counted: under
# TCG the first traffic after boot runs code the emulator has not yet
# translated, and the first test was the slowest of every run.
warm_up() {
	port=$((port + 1))
	guest_server warm.srv "KAPI_ADDR4=$KPEER_GUEST4 exec bin/kapi_echo_server $port 4" \
		"serving port" >/dev/null 2>&1 &&
		kpeer_host env $(lh_env "$KPEER_GUEST4" "$KPEER_GUEST4") timeout 300 \
			"$kapi/kapi_rpc" $port 4 1000000 3 >"$logs/warm-up.log" 2>&1
	stop_guest warm.srv
	echo "warm-up: $(tail -n 1 "$logs/warm-up.log" 2>/dev/null)"
}
warm_up

if [ $short = 1 ]; then
	for fam in 4 6; do
		run_test "echo lh->kh IPv$fam" t_echo_lh_kh "$fam" 4
		run_test "echo kh->lh IPv$fam" t_echo_kh_lh "$fam" 4
	done
	kpeer_loss 2
	run_test "echo lh->kh IPv4 loss 2%" t_echo_lh_kh 4 4
	run_test "echo kh->lh IPv4 loss 2%" t_echo_kh_lh 4 4
	kpeer_loss 0
	run_test "homa_test lh->kh IPv4" t_homa_test_lh_kh 4
	run_test "homa_test kh->lh IPv4" t_homa_test_kh_lh 4
	run_test "restart lh->kh" t_restart_lh_kh
	run_test "restart kh->lh" t_restart_kh_lh
	run_test "no server lh->kh" t_noserver_lh_kh
	run_test "no server kh->lh" t_noserver_kh_lh
else
	for loss in $losses; do
		kpeer_loss "$loss"
		for fam in $families; do
			run_test "echo lh->kh IPv$fam loss $loss%" t_echo_lh_kh "$fam" 20
			run_test "echo kh->lh IPv$fam loss $loss%" t_echo_kh_lh "$fam" 20
			run_test "homa_test lh->kh IPv$fam loss $loss%" t_homa_test_lh_kh "$fam"
			run_test "homa_test kh->lh IPv$fam loss $loss%" t_homa_test_kh_lh "$fam"
		done
		run_test "cp_node lh->kh IPv4 loss $loss%" t_cp_node_lh_kh
		run_test "cp_node kh->lh IPv4 loss $loss%" t_cp_node_kh_lh
	done
	kpeer_loss 0
	run_test "restart lh->kh" t_restart_lh_kh
	run_test "restart kh->lh" t_restart_kh_lh
	run_test "no server lh->kh" t_noserver_lh_kh
	run_test "no server kh->lh" t_noserver_kh_lh
	run_test "busy lh->kh" t_busy_lh_kh
	run_test "busy kh->lh" t_busy_kh_lh
	for prog in poll fork abort errors dup wmem; do
		run_test "kapi_$prog in kh" t_kapi_guest "$prog"
	done
fi

echo "interop: $passed passed, $failed failed, $xfailed expected" \
	"failures, $xpassed unexpected passes in $((SECONDS - t_start)) s" \
	"(module $module_commit, guest kernel $guest_kernel, accelerator" \
	"$KPEER_ACCEL_USED)"
if [ "$failed" -ne 0 ] || [ "$xpassed" -ne 0 ]; then
	printf 'failed: %s\n' "${failures[@]}"
	KPEER_KEEP=1
	exit 1
fi
exit 0
