#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2015,SC2317  # "check || die"; cleanup runs from trap
#
# testbed.sh - a small datacenter in network namespaces, and Homa against
# TCP on it under the workloads of the Homa papers.
#
#   client 1 ─┐
#   client 2 ─┼── switch (a bridge) ──[port "sp": htb, 8 priorities]── server
#   client N ─┘
#
# Every host is a network namespace with one veth to the switch namespace,
# which bridges them.  The switch port toward the server is the bottleneck:
# an htb tree with one parent class at --rate and 8 children, one per Homa
# priority, chosen by a u32 filter on the top 3 bits of the IP TOS byte
# (libhoma sends priority p with TOS p << 5).  htb serves lower "prio"
# values first, so Homa priority p goes to htb prio 7 - p: priority 7 (the
# shortest messages) first.  The children have a token rate of 1/1000 of
# the link and may borrow up to all of it, so nearly every byte is
# borrowed and borrowing follows strict priority.  Each child queues up to
# --buffer bytes (bfifo).  TCP sends TOS 0, i.e. the Homa priority 0
# class; Homa and TCP run one after the other, so they never share it.
# netem and prio are not in this kernel; links other than the bottleneck
# are unlimited veths.  Hosts segment in software (gso_max_segs 1), so
# the switch sees MTU-sized packets, not 64 KB GSO bursts, as a real
# switch would (--host-gso on hands it the bursts).
#
# Clients and server run homa-perf.  For each workload, the unloaded RTTs
# are measured first (one client, one RPC at a time, through the switch),
# then for each load and protocol (Homa, then TCP) every client offers
# load x rate / clients of request payload as Poisson arrivals, for
# --duration seconds after a warm-up; both protocols get the same sizes
# and arrival times.  In each client a generator thread (at real-time
# priority when allowed) hands every arrival to a sending thread: Homa's
# socket has a sending and a receiving thread; TCP has a pool of
# --tcp-conns persistent connections per client thread, each with a
# writing and a reading thread, a request going to the connection with
# the fewest outstanding.  A run where either protocol handed more than
# 1% of its arrivals over more than 1 ms late is marked invalid in the
# tables (its generator fell behind: no ratio is given).  The Homa hosts
# get HOMA_LINK_MBPS = the bottleneck rate (--link-mbps), so their pacers
# match it, and HOMA_MTU = link MTU (see homa_mtu).
# Results: OUT/tables.md (P50/P99 slowdown per size bucket), OUT/*.png
# (plots, when python3-matplotlib is installed), OUT/summary.json, and in
# OUT/raw/ every homa-perf output, the unloaded RTTs, the switch's tc
# statistics, and per run the hosts' TCP/UDP counters and machine CPU.
# Exit status 1 when a client failed (an RPC failed or was unfinished).
#
# Needs root (namespaces, tc).  Everything it creates is removed on exit,
# also on failure or interruption.  Addresses are 10.199.0.0/24, inside
# its own namespaces only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
prog=testbed.sh
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$here/netns_lib.sh"

rate=1gbit
clients=3
duration=10
workloads="w3 w4 w5"
loads="0.5 0.8"
out=testbed-out
smoke=0
perf=""
threads=1
server_threads=2
client_poll=""
mtu=1500
buffer=1000000
calib_rpcs=50
tcp_conns=8
smoke_load=0.3
homa_env=""
link_mbps=bottleneck
host_gso=off
workload_dir=""
port=4000

usage() {
	cat <<EOF
usage: scripts/testbed.sh [options]
Homa and TCP from several client namespaces to one server namespace
through an emulated switch port (htb, 8 DSCP priorities); writes
per-size-bucket P50/P99 slowdown tables and plots.

  --rate R          bottleneck: 1gbit or 5gbit (or Nmbit/Ngbit; default 1gbit)
  --clients N       client hosts (1..20; default 3)
  --duration S      measured seconds per run (default 10)
  --workloads "..." workloads (default "w3 w4 w5"; sizes capped at 1 MB)
  --loads "..."     fractions of the bottleneck offered (default "0.5 0.8")
  --out DIR         results folder (default testbed-out)
  --smoke           short check (CI): 200mbit, w4 at load 0.3 only, 2 s
                    per run, 20 RPCs per size for the unloaded RTTs
                    (options given explicitly still apply); light enough
                    for sanitizer builds on a shared 2-core machine
  --perf PATH       homa-perf to run (default: \$HOMA_TOOLS_DIR/homa-perf,
                    else build/tools/homa-perf)
  --workload-dir D  folder of w1..w5.cdf (default: workloads/ of the
                    repository)
  --threads T       homa-perf threads per client (default 1)
  --tcp-conns K     TCP connections per client thread (default 8), each
                    with a writing and a reading thread; a request goes
                    to the one with the fewest outstanding
  --server-threads T  Homa server threads (default 2)
  --client-poll     Homa clients run homa-perf --client-poll (one thread
                    per socket sending and waiting in ppoll, an
                    event-driven client) instead of a generator, a
                    sending and a receiving thread
  --mtu M           MTU of every link (default 1500)
  --buffer B        bytes each priority queue of the switch port holds
                    (default 1000000)
  --calib-rpcs K    RPCs per size for the unloaded RTTs (default 50)
  --link-mbps V     HOMA_LINK_MBPS of every host: "bottleneck" (default:
                    the --rate), "default" (not set: the library's
                    default) or a rate in Mbit/s
  --host-gso on|off hosts hand the switch GSO bursts of up to 64 KB (on),
                    or segment in software first (off, the default: the
                    switch sees MTU-sized packets, as a real one would)
  --homa-env "K=V ..."  more Homa settings for every host, e.g.
                    "HOMA_FLAGS=2" (no pacer); by default HOMA_LINK_MBPS is
                    the bottleneck rate and HOMA_MTU the link MTU, and
                    these words come after them
  --help            this text
Needs root.  Exit status: 0 all runs done and every RPC completed,
1 something failed, 2 bad options.
EOF
}

given=""         # options given explicitly (--smoke leaves them alone)
while [ $# -gt 0 ]; do
	case $1 in
	--rate) nl_need_arg "$1" $#; rate=$2; given+=" rate"; shift 2 ;;
	--clients) nl_need_arg "$1" $#; clients=$2; shift 2 ;;
	--duration) nl_need_arg "$1" $#; duration=$2; given+=" duration"
		shift 2 ;;
	--workloads) nl_need_arg "$1" $#; workloads=$2; given+=" workloads"
		shift 2 ;;
	--loads) nl_need_arg "$1" $#; loads=$2; given+=" loads"; shift 2 ;;
	--out) nl_need_arg "$1" $#; out=$2; shift 2 ;;
	--smoke) smoke=1; shift ;;
	--perf) nl_need_arg "$1" $#; perf=$2; shift 2 ;;
	--workload-dir) nl_need_arg "$1" $#; workload_dir=$2; shift 2 ;;
	--threads) nl_need_arg "$1" $#; threads=$2; shift 2 ;;
	--tcp-conns) nl_need_arg "$1" $#; tcp_conns=$2; shift 2 ;;
	--server-threads) nl_need_arg "$1" $#; server_threads=$2; shift 2 ;;
	--client-poll) client_poll=--client-poll; shift ;;
	--mtu) nl_need_arg "$1" $#; mtu=$2; shift 2 ;;
	--buffer) nl_need_arg "$1" $#; buffer=$2; shift 2 ;;
	--homa-env) nl_need_arg "$1" $#; homa_env=$2; shift 2 ;;
	--link-mbps) nl_need_arg "$1" $#; link_mbps=$2; shift 2 ;;
	--host-gso) nl_need_arg "$1" $#; host_gso=$2; shift 2 ;;
	--calib-rpcs) nl_need_arg "$1" $#; calib_rpcs=$2; given+=" calib_rpcs"
		shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) nl_die_usage "unknown option '$1'" ;;
	esac
done

if [ "$smoke" = 1 ]; then
	[[ $given == *" rate"* ]] || rate=200mbit
	[[ $given == *" workloads"* ]] || workloads=w4
	[[ $given == *" loads"* ]] || loads=$smoke_load
	[[ $given == *" duration"* ]] || duration=2
	[[ $given == *" calib_rpcs"* ]] || calib_rpcs=20
fi

# --- checking the options ---------------------------------------------
nl_parse_rate --rate "$rate" 100000
nl_is_uint "$clients" && [ "$clients" -ge 1 ] && [ "$clients" -le 20 ] ||
	nl_die_usage "--clients: 1..20, got '$clients'"
nl_is_num "$duration" && [ "${duration%.*}" -le 600 ] ||
	nl_die_usage "--duration: seconds up to 600, got '$duration'"
nl_is_uint "$threads" && [ "$threads" -ge 1 ] ||
	nl_die_usage "--threads: '$threads'"
nl_is_uint "$tcp_conns" && [ "$tcp_conns" -ge 1 ] &&
	[ "$tcp_conns" -le 256 ] ||
	nl_die_usage "--tcp-conns: 1..256, got '$tcp_conns'"
nl_is_uint "$server_threads" && [ "$server_threads" -ge 1 ] ||
	nl_die_usage "--server-threads: '$server_threads'"
nl_is_uint "$mtu" && [ "$mtu" -ge 576 ] && [ "$mtu" -le 65000 ] ||
	nl_die_usage "--mtu: 576..65000, got '$mtu'"
nl_is_uint "$buffer" && [ "$buffer" -ge "$mtu" ] ||
	nl_die_usage "--buffer: bytes, at least the MTU, got '$buffer'"
nl_is_uint "$calib_rpcs" && [ "$calib_rpcs" -ge 3 ] ||
	nl_die_usage "--calib-rpcs: at least 3, got '$calib_rpcs'"
for w in $workloads; do
	[[ $w =~ ^[wW][1-5]$ ]] || nl_die_usage "--workloads: w1..w5, got '$w'"
done
[ -n "$workloads" ] || nl_die_usage "--workloads is empty"
for l in $loads; do
	nl_is_fraction "$l" ||
		nl_die_usage "--loads: fractions in (0, 1], got '$l'"
done
[ -n "$loads" ] || nl_die_usage "--loads is empty"
# HOMA_LINK_MBPS of every host: the bottleneck rate (the pacers match
# it), the library's default (nothing set), or a number.
case $link_mbps in
bottleneck) link_env="HOMA_LINK_MBPS=$mbps" ;;
default) link_env="" ;;
*) nl_is_uint "$link_mbps" && [ "$link_mbps" -ge 1 ] ||
	nl_die_usage "--link-mbps: bottleneck, default or a rate in Mbit/s," \
		"got '$link_mbps'"
   link_env="HOMA_LINK_MBPS=$link_mbps" ;;
esac
case $host_gso in
on|off) ;;
*) nl_die_usage "--host-gso: on or off, got '$host_gso'" ;;
esac
nl_check_homa_env "$homa_env"

nl_find_perf "$perf"
if [ -z "$workload_dir" ]; then
	workload_dir=${HOMA_WORKLOAD_DIR:-$repo/workloads}
fi
for w in $workloads; do
	[ -r "$workload_dir/${w,,}.cdf" ] || { echo "testbed.sh: cannot read" \
		"$workload_dir/${w,,}.cdf (pass --workload-dir)" >&2; exit 1; }
done
nl_need_root "network namespaces and tc"
# Plots need matplotlib: prefer a python3 that has it.
nl_find_python matplotlib

mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
raw=$out/raw
rm -f "$raw"/*.json "$raw"/*.txt "$raw"/*.err

# libhoma's mtu setting is the largest IP datagram (the UDP header
# included), so Homa packets fit the link exactly at HOMA_MTU = link MTU.
homa_mtu=$mtu

# --- the namespaces ----------------------------------------------------
tag=hb$$
sw=${tag}sw
sv=${tag}sv
server_ip=10.199.0.1
running=()      # homa-perf processes started and not yet waited for
server_pid=""

# nl_stop_processes - the cleanup's first step (netns_lib.sh): stop the
# homa-perf processes still running.
nl_stop_processes() {
	# shellcheck disable=SC2086  # server_pid: a PID or nothing
	nl_kill_wait TERM "${running[@]}" $server_pid
}
nl_trap_cleanup

client_ns() { echo "${tag}c$1"; }

# setup - the switch, the server and the clients, and the bottleneck
# toward the server (netns_lib.sh: nl_port_htb).
setup() {
	local i
	nl_switch "$sw" "$mtu"
	nl_host_link "$sw" "$sv" sp "$server_ip" "$mtu" "$host_gso"
	for ((i = 1; i <= clients; i++)); do
		nl_host_link "$sw" "$(client_ns $i)" "p$i" \
			"10.199.0.$((10 + i))" "$mtu" "$host_gso"
	done
	nl_port_htb "$sw" sp "$mbps" "$mtu" "$buffer"
}

# Every host's environment (nl_in_host): the pacer at the bottleneck and
# Homa packets as large as the links' MTU, then the --homa-env words.
# shellcheck disable=SC2206  # link_env, homa_env: checked HOMA_X=V words
nl_host_env=($link_env "HOMA_MTU=$homa_mtu" $homa_env)

start_server() {
	nl_in_host "$sv" "$perf" server --port $port \
		--threads "$server_threads" --duration 7200 --json >"$raw/server.json" 2>"$raw/server.err" &
	server_pid=$!
	nl_wait_ready "$server_pid" "$raw/server.err" "the server"
}

failures=0

# run_load W LOAD PROTO - every client at LOAD/clients of the bottleneck.
run_load() {
	local w=$1 load=$2 proto=$3 i gbps f rc cpu0
	gbps=$(awk -v l="$load" -v m="$mbps" -v n="$clients" \
		'BEGIN { printf "%.6f", l * m / 1000 / n }')
	echo "testbed.sh: $w at load $load, $proto: $clients clients x" \
		"$gbps Gbit/s, $duration s"
	cpu0=$(cpu_ticks)
	for ((i = 1; i <= clients; i++)); do
		f=$raw/${w}_${load}_${proto}_c$i
		nl_in_host "$(client_ns $i)" "$perf" client \
			--server "$server_ip:$port" --workload "$w" \
			--workload-dir "$workload_dir" --proto "$proto" \
			--load-gbps "$gbps" --duration "$duration" \
			--threads "$threads" --tcp-conns "$tcp_conns" \
			--baseline "$raw/baseline_$w.txt" \
			--seed "$i" ${client_poll:+"$client_poll"} \
			--json >"$f.json" 2>"$f.err" &
		running+=($!)
	done
	for i in "${!running[@]}"; do
		rc=0
		wait "${running[$i]}" || rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "testbed.sh: client $((i + 1)) of $w $load $proto:" \
				"exit $rc" >&2
			cat "$raw/${w}_${load}_${proto}_c$((i + 1)).err" >&2 || true
			failures=$((failures + 1))
		fi
	done
	running=()
	host_counters "$raw/${w}_${load}_${proto}.nstat"
	# Busy fraction of all CPUs, and busy CPU-seconds, over the run.
	echo "$cpu0 $(cpu_ticks) $(getconf CLK_TCK)" | awk '{
		busy = $3 - $1; all = $4 - $2
		printf "%.3f %.3f\n", (all > 0) ? busy / all : 0, busy / $5 }' \
		>"$raw/${w}_${load}_${proto}.cpu"
}

# host_counters FILE - every host's TCP/IP counters (nstat, absolute since
# the namespace was made) and the kernel's per-CPU backlog drops.
host_counters() {
	local i
	{
		echo "# server"
		ip netns exec "$sv" nstat -asz 2>/dev/null |
			grep -E 'TcpRetransSegs|TCPTimeouts|TCPLossProbes|UdpRcvbufErrors|UdpInErrors|TcpExtTCPBacklogDrop' || true
		for ((i = 1; i <= clients; i++)); do
			echo "# client $i"
			ip netns exec "$(client_ns $i)" nstat -asz 2>/dev/null |
				grep -E 'TcpRetransSegs|TCPTimeouts|TCPLossProbes|UdpRcvbufErrors|UdpInErrors|TcpExtTCPBacklogDrop' || true
		done
		echo "# /proc/net/softnet_stat (hex: processed dropped ...)"
		cat /proc/net/softnet_stat
	} >"$1"
}

# cpu_ticks - "busy total" jiffies of the whole machine (/proc/stat).
cpu_ticks() {
	awk '/^cpu / { idle = $5 + $6; total = 0
		for (i = 2; i <= NF; i++) total += $i
		print total - idle, total; exit }' /proc/stat
}

# calibrate W - unloaded RTTs of W's sizes, from client 1, both protocols.
calibrate() {
	local w=$1
	echo "testbed.sh: $w: unloaded RTTs (client 1, one RPC at a time)"
	nl_calibrate "$(client_ns 1)" "$server_ip:$port" "$w" "$raw" \
		--workload-dir "$workload_dir" --proto both \
		--calib-rpcs "$calib_rpcs"
}

facts() {
	{
		echo "rate_mbps=$mbps"
		echo "clients=$clients"
		echo "duration=$duration"
		echo "workloads=$workloads"
		echo "loads=$loads"
		echo "mtu=$mtu"
		echo "buffer=$buffer"
		echo "threads=$threads"
		echo "tcp_conns=$tcp_conns"
		echo "homa_env=$homa_env"
		echo "link_mbps=$link_mbps"
		echo "host_gso=$host_gso"
		echo "homa_mtu=$homa_mtu"
		echo "server_threads=$server_threads"
		echo "client_poll=$client_poll"
		nl_machine_facts
		echo "perf=$perf"
	} >"$raw/facts.txt"
}

facts
setup
start_server
for w in $workloads; do
	calibrate "$w"
	for load in $loads; do
		for proto in homa tcp; do
			run_load "$w" "$load" "$proto"
		done
	done
done

# Stop the server (it reports on SIGTERM) before the summary.
kill -TERM "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
server_pid=""
tc -n "$sw" -s qdisc show dev sp >"$raw/switch_qdisc.txt" 2>&1 || true
tc -n "$sw" -s class show dev sp >"$raw/switch_class.txt" 2>&1 || true

if ! "$python" "$here/plot_testbed.py" --raw "$raw" --out "$out"; then
	echo "testbed.sh: plot_testbed.py failed" >&2
	failures=$((failures + 1))
fi
echo "testbed.sh: results in $out (tables.md, *.png, summary.json, raw/)"
[ "$failures" -eq 0 ] || { echo "testbed.sh: $failures failure(s)" >&2
	exit 1; }
exit 0
