# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# shellcheck disable=SC2015  # "check || die"
#
# netns_lib.sh - what scripts/testbed.sh and scripts/soak.sh share,
# sourced by them (functions nl_*, variables nl_*):
#   - option checks: numbers, fractions, a rate, the --homa-env words;
#   - the programs they run: homa-perf (--perf, $HOMA_TOOLS_DIR, build/),
#     python3, and root with ip and tc;
#   - a switch in network namespaces: a bridge in a namespace of its own,
#     hosts on veths to it, and htb bottleneck ports that serve the 8 Homa
#     priorities (IP TOS p << 5) in strict order;
#   - homa-perf in a host: its environment, the unloaded-RTT calibration,
#     the wait for a server to be ready;
#   - the cleanup: the caller's processes stopped, then every namespace
#     made here removed, on exit, failure or interruption.
#
# The sourcing script sets prog (its file name, for messages) and may
# define nl_stop_processes (called first by the cleanup) and
# nl_cannot_run (what to do when the machine cannot run it: by default a
# message and exit 1).  Bad options exit 2 through nl_die_usage.

: "${prog:?netns_lib.sh: the sourcing script sets prog}"
nl_repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
nl_namespaces=()    # made by nl_add_ns, removed by nl_cleanup
nl_host_env=()      # VAR=VALUE words nl_in_host sets for every command

# --- options -------------------------------------------------------------

# nl_die_usage MESSAGE... - a bad option: MESSAGE and a hint on stderr,
# exit 2.
nl_die_usage() {
	echo "$prog: $*" >&2
	echo "Try 'scripts/$prog --help'." >&2
	exit 2
}

# nl_need_arg OPTION COUNT - OPTION takes a value: exit 2 when COUNT (the
# words left, OPTION included) leaves none.
nl_need_arg() {
	[ "$2" -ge 2 ] || nl_die_usage "$1 needs a value"
}

# nl_is_uint V, nl_is_num V, nl_is_fraction V - true when V is a whole
# number; a decimal number (no sign, no exponent); a fraction in (0, 1].
nl_is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
nl_is_num() { [[ $1 =~ ^[0-9]+(\.[0-9]+)?$ ]]; }
nl_is_fraction() {
	[[ $1 =~ ^(0?\.[0-9]+|1(\.0*)?)$ ]] && [[ ! $1 =~ ^0?\.0*$ ]]
}

# nl_parse_rate OPTION RATE MAX_MBPS - RATE as Nmbit or Ngbit, from 10
# Mbit/s up to MAX_MBPS: sets mbps (Mbit/s), or exits 2.
nl_parse_rate() {
	local opt=$1 rate=$2 max=$3 top
	case $rate in
	*gbit) mbps=${rate%gbit}; nl_is_uint "$mbps" ||
		nl_die_usage "$opt: '$rate'"
		mbps=$((10#$mbps * 1000)) ;;
	*mbit) mbps=${rate%mbit}; nl_is_uint "$mbps" ||
		nl_die_usage "$opt: '$rate'"
		mbps=$((10#$mbps)) ;;
	*) nl_die_usage "$opt: expected like 500mbit or 1gbit, got '$rate'" ;;
	esac
	if [ $((max % 1000)) -eq 0 ]; then top=$((max / 1000))gbit
	else top=${max}mbit; fi
	[ "$mbps" -ge 10 ] && [ "$mbps" -le "$max" ] ||
		nl_die_usage "$opt: 10mbit..$top, got '$rate'"
}

# nl_check_homa_env WORDS - every word of WORDS (--homa-env) is
# HOMA_NAME=VALUE with a value of digits and lower-case letters, safe to
# pass unquoted to env; else exit 2.
nl_check_homa_env() {
	local kv
	for kv in $1; do
		[[ $kv =~ ^HOMA_[A-Z0-9_]+=[0-9a-z]+$ ]] ||
			nl_die_usage "--homa-env: expected HOMA_NAME=VALUE" \
				"words, got '$kv'"
	done
}

# --- the programs ----------------------------------------------------------

# nl_find_perf PATH - sets perf to the absolute path of homa-perf: PATH
# (--perf) when given, else $HOMA_TOOLS_DIR/homa-perf when that exists,
# else build/tools/homa-perf of the repository.  Exits 1 when it is not an
# executable file.
nl_find_perf() {
	perf=$1
	if [ -z "$perf" ]; then
		if [ -n "${HOMA_TOOLS_DIR:-}" ] &&
			[ -x "$HOMA_TOOLS_DIR/homa-perf" ]; then
			perf=$HOMA_TOOLS_DIR/homa-perf
		else
			perf=$nl_repo/build/tools/homa-perf
		fi
	fi
	[ -x "$perf" ] || { echo "$prog: no homa-perf at $perf (build it," \
		"or pass --perf)" >&2; exit 1; }
	perf=$(cd "$(dirname "$perf")" && pwd)/$(basename "$perf")
}

# nl_find_python MODULE - sets python to a python3 that can import json,
# preferring one that can import MODULE too (e.g. matplotlib; json: the
# first one).  Exits 1 when there is none.
nl_find_python() {
	local p
	python=""
	for p in python3 /usr/bin/python3; do
		if command -v "$p" >/dev/null &&
			"$p" -c 'import json' 2>/dev/null; then
			python=$p
			break
		fi
	done
	[ -n "$python" ] || { echo "$prog: needs python3" >&2; exit 1; }
	for p in "$python" /usr/bin/python3; do
		if "$p" -c "import $1" 2>/dev/null; then
			python=$p
			return 0
		fi
	done
}

# nl_cannot_run WHY - the machine cannot run the script: WHY on stderr,
# exit 1.  A script may define its own after sourcing this file.
nl_cannot_run() {
	echo "$prog: $*" >&2
	exit 1
}

# nl_need_root WHAT - nl_cannot_run unless we are root and have ip and tc;
# WHAT says what root is needed for.
nl_need_root() {
	local tool
	[ "$(id -u)" -eq 0 ] || nl_cannot_run "needs root ($1)"
	for tool in ip tc; do
		command -v $tool >/dev/null ||
			nl_cannot_run "needs $tool (Debian package iproute2)"
	done
}

# nl_machine_facts - key=value lines about the machine and the time
# (date, nproc, kernel, cpu) for a run's facts.txt.
nl_machine_facts() {
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "nproc=$(nproc)"
	echo "kernel=$(uname -r)"
	echo "cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- |
		sed 's/^ *//')"
}

# --- the namespaces ----------------------------------------------------------

# nl_cleanup - the exit trap (nl_trap_cleanup): nl_stop_processes when the
# script defined it, then every namespace of nl_add_ns removed.
nl_cleanup() {
	local ns
	trap - EXIT INT TERM
	if declare -F nl_stop_processes >/dev/null; then
		nl_stop_processes || true
	fi
	for ns in "${nl_namespaces[@]}"; do
		ip netns del "$ns" 2>/dev/null || true
	done
}

# nl_trap_cleanup - nl_cleanup on exit; Ctrl-C and SIGTERM exit 130.
nl_trap_cleanup() {
	trap nl_cleanup EXIT
	trap 'exit 130' INT TERM
}

# nl_kill_wait SIGNAL PID... - send SIGNAL to each PID, then reap them
# (gone ones and failures are ignored).
nl_kill_wait() {
	local sig=$1 pid
	shift
	for pid in "$@"; do
		kill -"$sig" "$pid" 2>/dev/null || true
	done
	for pid in "$@"; do
		wait "$pid" 2>/dev/null || true
	done
}

# nl_add_ns NS - a new namespace NS with lo up, removed by nl_cleanup.
nl_add_ns() {
	ip netns add "$1"
	nl_namespaces+=("$1")
	ip -n "$1" link set lo up
}

# nl_switch SW MTU - the switch: namespace SW with the bridge br0.
nl_switch() {
	nl_add_ns "$1"
	ip -n "$1" link add br0 mtu "$2" type bridge
	ip -n "$1" link set br0 up
}

# nl_host_link SW NS PORT IP MTU GSO - host NS: a new namespace whose eth0
# (address IP/24) is a veth to port PORT of switch SW's bridge, both ends
# at MTU.  GSO "off": the host segments in software (gso_max_segs 1), so
# the switch sees MTU-sized packets as a real one would; "on": it hands
# the switch GSO bursts.
nl_host_link() {
	local sw=$1 ns=$2 port=$3 addr=$4 mtu=$5 gso=$6
	nl_add_ns "$ns"
	ip -n "$sw" link add "$port" mtu "$mtu" type veth peer name eth0 \
		netns "$ns"
	ip -n "$sw" link set "$port" master br0 up
	if [ "$gso" = on ]; then
		ip -n "$ns" link set eth0 mtu "$mtu" up
	else
		ip -n "$ns" link set eth0 mtu "$mtu" gso_max_segs 1 up
	fi
	ip -n "$ns" addr add "$addr/24" dev eth0
}

# nl_port_htb SW PORT MBPS MTU BUFFER - the bottleneck on port PORT of
# switch SW: an htb parent at MBPS Mbit/s and 8 children, one per Homa
# priority p (a u32 filter on the top 3 bits of the TOS byte), at htb prio
# 7 - p, so priority 7 goes first.  Each child's own rate is 1/1000 of the
# link and it may borrow all of it, so nearly every byte is borrowed and
# borrowing follows strict priority; each queues up to BUFFER bytes
# (bfifo).  Unclassified packets go to priority 0's class.
nl_port_htb() {
	local sw=$1 port=$2 mbps=$3 mtu=$4 buffer=$5 burst min prio class
	# About 50 us of line rate, at least 4 packets.
	burst=$((mbps * 50 / 8))
	[ "$burst" -ge $((4 * mtu)) ] || burst=$((4 * mtu))
	min=$mbps                   # kbit: 1/1000 of the link
	[ "$min" -ge 8 ] || min=8
	tc -n "$sw" qdisc add dev "$port" root handle 1: htb default 10
	tc -n "$sw" class add dev "$port" parent 1: classid 1:1 htb \
		rate "${mbps}mbit" ceil "${mbps}mbit" burst "$burst" \
		cburst "$burst" quantum $((mtu + 14))
	for prio in 0 1 2 3 4 5 6 7; do
		class=1:$((10 + prio))
		tc -n "$sw" class add dev "$port" parent 1:1 classid "$class" \
			htb rate "${min}kbit" ceil "${mbps}mbit" \
			prio $((7 - prio)) burst "$burst" cburst "$burst" \
			quantum $((mtu + 14))
		tc -n "$sw" qdisc add dev "$port" parent "$class" \
			handle $((20 + prio)): bfifo limit "$buffer"
		tc -n "$sw" filter add dev "$port" parent 1: protocol ip \
			prio 1 u32 match ip tos $((prio << 5)) 0xe0 \
			flowid "$class"
	done
}

# nl_in_host NS COMMAND... - become COMMAND in host NS with the words of
# nl_host_env in its environment (exec: call it in a child, "nl_in_host
# ... &" or "(nl_in_host ...)", so that the child's PID is the command's).
nl_in_host() {
	local ns=$1
	shift
	exec ip netns exec "$ns" env ${nl_host_env[@]+"${nl_host_env[@]}"} \
		"$@"
}

# nl_calibrate NS SERVER W RAW ARGS... - the unloaded RTTs of workload
# W's sizes: a homa-perf ($perf) client in host NS against SERVER
# (ADDR:PORT), one RPC at a time, with ARGS (--proto, --calib-rpcs, ...).
# Writes RAW/baseline_W.txt (what the loaded runs' --baseline reads),
# RAW/calib_W.txt and RAW/calib_W.err.  Returns 1 when the client failed,
# with its errors on stderr.
nl_calibrate() {
	local ns=$1 server=$2 w=$3 raw=$4
	shift 4
	if ! (nl_in_host "$ns" "$perf" client --server "$server" \
		--workload "$w" --duration 0 \
		--baseline-out "$raw/baseline_$w.txt" "$@" \
		>"$raw/calib_$w.txt" 2>"$raw/calib_$w.err"); then
		echo "$prog: calibration of $w failed:" >&2
		cat "$raw/calib_$w.err" >&2
		return 1
	fi
}

# nl_wait_ready PID ERRFILE NAME - wait up to 10 s for the homa-perf
# server PID to write "ready" to ERRFILE.  Returns 0 then; 1 when it
# exited or did not get ready, with ERRFILE on stderr.
nl_wait_ready() {
	local pid=$1 err=$2 i
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$err" 2>/dev/null && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	echo "$prog: $3 did not start:" >&2
	cat "$err" >&2
	return 1
}
