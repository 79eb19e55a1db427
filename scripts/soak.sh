#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# shellcheck disable=SC2015,SC2317  # "check || die"; cleanup runs from trap
#
# soak.sh - a long run of libhoma under everything at once: load, loss,
# a server that dies every minute and a hostile host, checking that
# nothing leaks, no RPC is lost and none fails with an error that did not
# happen.
#
#   client c1 (W3) ─┐                   ┌─[htb]── server A (stable)
#   client c2 (W4) ─┼── switch (bridge) ┤
#   hostile h     ──┘                   └─[htb]── server B (killed and
#                                                  restarted every minute)
#
# Every host is a network namespace with one veth to the switch namespace,
# as in scripts/testbed.sh (both build it with scripts/netns_lib.sh): the
# switch ports toward the two servers are htb bottlenecks at --rate with 8
# priority classes (Homa priority p from the IP TOS byte), the other links
# unlimited; hosts segment in software, so loss hits single packets.
# Each client host runs two homa-perf clients, one per server, open loop
# with Poisson arrivals: c1 draws request sizes from W3, c2 from W4, each
# offering --load / 2 of --rate, so each server's port gets --load of its
# rate; responses are 100 bytes (homa-perf's default).  Every host but
# the hostile one drops incoming Homa packets at random with probability
# --loss percent (an iptables rule "-m statistic --mode random" in the
# host's INPUT chain; the host has no netem).  Server B gets SIGKILL every
# --restart-every seconds and is started again --down seconds later, on
# the same port.  Host h runs homa-hostile at --hostile-rate packets per
# second at both servers (and, over UDP, at the clients' sockets).
#
# Every homa-perf process writes a sample every --sample-every seconds:
# its resident memory (VmRSS), open descriptors and the RPCs its Homa
# sockets hold (num_rpcs, homa_stats_get(3)).  At the end
# scripts/soak_report.py sorts every RPC the clients issued into
# completed, failed with an expected error (ETIMEDOUT for either server;
# ENOTCONN, the ICMP "nobody listening", only for server B, which is away
# for a moment each minute), failed with an unexpected error, or lost
# (never ended, even after --drain seconds), and checks the target:
#   - 0 lost and 0 unexpected errors;
#   - descriptors and memory flat: for each long-lived process (the
#     clients, server A) the samples after --flat-after seconds are cut
#     in two halves by time; the later half may reach no more descriptors
#     than the earlier half's peak and at most --rss-slack KB more
#     resident memory (a leak grows on; the peak of a backlog, or a
#     descriptor opened once, does not count twice);
#   - no RPC left: every client holds 0 RPCs when it closes, and server A
#     holds 0 RPCs --quiet seconds after all traffic (the hostile host's
#     included) stopped.
# It writes OUT/summary.md (and prints it) and OUT/summary.json; OUT/raw
# keeps every process's output.  Exit status: 0 the target holds, 1 it
# does not (or a process failed), 2 bad options, 77 the machine cannot run
# it (not root, no ip/tc/iptables, no raw IP for --transport ip) unless
# SOAK_REQUIRE=1, which makes that 1.
#
# Needs root.  Everything it creates (namespaces, with their iptables
# rules, and processes) is removed on exit, also on failure or Ctrl-C.
# Addresses are 10.198.0.0/24, inside its own namespaces only.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog=soak.sh
# shellcheck source-path=SCRIPTDIR source=netns_lib.sh
. "$here/netns_lib.sh"

seconds=1800
transport=udp
seed=1
rate=100mbit
load=0.6
loss=1
restart_every=60
down=1
hostile_rate=1000
ask_max=1000
sample_every=5
flat_after=60
rss_slack=8192
fds_slack=""
drain=30
quiet=5
out=soak-out
perf=""
hostile=""
homa_env=""

usage() {
	cat <<EOF
usage: scripts/soak.sh [options]
A soak of libhoma in network namespaces: W3 and W4 load through an
emulated switch to two servers, random loss, one server killed and
restarted every minute, a hostile host; reports memory, descriptors and
live RPCs over time and every RPC as completed, failed (expected or
unexpected error) or lost, and checks that nothing leaks or is lost.

  --minutes M       length of the load (default 30)
  --seconds S       the same in seconds (overrides --minutes)
  --transport T     udp (default) or ip (Homa as IP protocol 146)
  --seed N          seed of the clients' sizes and arrivals and of the
                    hostile packets (default 1); the loss is not seeded
  --rate R          rate of each server's switch port, Nmbit or Ngbit
                    (default 100mbit)
  --load F          fraction of it offered to each server (default 0.6),
                    half W3, half W4
  --loss P          percent of Homa packets each host drops (default 1)
  --restart-every S kill server B every S seconds (default 60)
  --down S          seconds server B stays dead each time (default 1)
  --hostile-rate N  hostile packets per second (default 1000; 0: none)
  --ask-max N       the largest response a hostile request asks a server
                    for (homa-hostile --ask-max; default 1000)
  --sample-every S  seconds between samples of each process (default 5)
  --flat-after S    memory and descriptors must not grow after this
                    point of each process's life (default 60): the later
                    half of the samples after it may not reach more
                    descriptors than the earlier half's peak, nor more
                    than --rss-slack KB (default 8192) more memory
  --fds-slack N     more descriptors allowed in the later half (default
                    0; 1 over ip, whose raw ICMP socket opens the first
                    time a RESEND to a port nobody holds is answered)
  --drain S         seconds the clients wait for RPCs still in flight at
                    the end (default 30, at most 60)
  --quiet S         seconds after all traffic before server A must hold
                    no RPC (default 5)
  --short           the CI form: 30 s of load, a restart every 10 s,
                    50mbit, memory and descriptors flat after 10 s
                    with 16384 KB of slack, samples every 2 s
                    (options given explicitly still apply)
  --out DIR         results folder (default soak-out)
  --perf PATH       homa-perf (default: \$HOMA_TOOLS_DIR/homa-perf, else
                    build/tools/homa-perf); homa-hostile is taken from
                    the same folder unless --hostile PATH
  --homa-env "K=V ..."  more Homa settings for every host
  --help            this text
Needs root.  Exit status: 0 the target holds; 1 it does not, or a process
failed; 2 bad options; 77 the machine cannot run it (SOAK_REQUIRE=1 makes
that 1).
EOF
}

# nl_cannot_run WHY - (netns_lib.sh) the machine cannot run the soak:
# exit 77, or 1 under SOAK_REQUIRE=1.
nl_cannot_run() {
	if [ "${SOAK_REQUIRE:-0}" = 1 ]; then
		echo "soak.sh: FAIL: $* (SOAK_REQUIRE=1)" >&2
		exit 1
	fi
	echo "SKIP: soak.sh: $*" >&2
	exit 77
}

given=""
short=0
while [ $# -gt 0 ]; do
	case $1 in
	--minutes) nl_need_arg "$1" $#; [[ $2 =~ ^[0-9]+$ ]] ||
		nl_die_usage "--minutes: whole minutes, got '$2'"
		seconds=$(($2 * 60)); given+=" seconds"; shift 2 ;;
	--seconds) nl_need_arg "$1" $#; seconds=$2; given+=" seconds"
		shift 2 ;;
	--transport) nl_need_arg "$1" $#; transport=$2; shift 2 ;;
	--seed) nl_need_arg "$1" $#; seed=$2; shift 2 ;;
	--rate) nl_need_arg "$1" $#; rate=$2; given+=" rate"; shift 2 ;;
	--load) nl_need_arg "$1" $#; load=$2; shift 2 ;;
	--loss) nl_need_arg "$1" $#; loss=$2; shift 2 ;;
	--restart-every) nl_need_arg "$1" $#; restart_every=$2
		given+=" restart_every"; shift 2 ;;
	--down) nl_need_arg "$1" $#; down=$2; shift 2 ;;
	--hostile-rate) nl_need_arg "$1" $#; hostile_rate=$2; shift 2 ;;
	--ask-max) nl_need_arg "$1" $#; ask_max=$2; shift 2 ;;
	--sample-every) nl_need_arg "$1" $#; sample_every=$2
		given+=" sample_every"; shift 2 ;;
	--flat-after) nl_need_arg "$1" $#; flat_after=$2; given+=" flat_after"
		shift 2 ;;
	--rss-slack) nl_need_arg "$1" $#; rss_slack=$2; given+=" rss_slack"
		shift 2 ;;
	--fds-slack) nl_need_arg "$1" $#; fds_slack=$2; shift 2 ;;
	--drain) nl_need_arg "$1" $#; drain=$2; shift 2 ;;
	--quiet) nl_need_arg "$1" $#; quiet=$2; shift 2 ;;
	--short) short=1; shift ;;
	--out) nl_need_arg "$1" $#; out=$2; shift 2 ;;
	--perf) nl_need_arg "$1" $#; perf=$2; shift 2 ;;
	--hostile) nl_need_arg "$1" $#; hostile=$2; shift 2 ;;
	--homa-env) nl_need_arg "$1" $#; homa_env=$2; shift 2 ;;
	-h|--help) usage; exit 0 ;;
	*) nl_die_usage "unknown option '$1'" ;;
	esac
done
if [ "$short" = 1 ]; then
	[[ $given == *" seconds"* ]] || seconds=30
	[[ $given == *" restart_every"* ]] || restart_every=10
	[[ $given == *" rate"* ]] || rate=50mbit
	[[ $given == *" flat_after"* ]] || flat_after=10
	[[ $given == *" sample_every"* ]] || sample_every=2
	[[ $given == *" rss_slack"* ]] || rss_slack=16384
fi

# A short run without --flat-after judges from a third of the way.
if [[ $given != *" flat_after"* ]] && nl_is_uint "$seconds" &&
	[ "$seconds" -le "$flat_after" ]; then
	flat_after=$((seconds / 3))
fi

# --- checking the options ---------------------------------------------
nl_is_uint "$seconds" && [ "$seconds" -ge 5 ] && [ "$seconds" -le 3600 ] ||
	nl_die_usage "--seconds: 5..3600 (--minutes 1..60), got '$seconds'"
case $transport in udp|ip) ;; *)
	nl_die_usage "--transport: udp or ip, got '$transport'" ;;
esac
nl_is_uint "$seed" || nl_die_usage "--seed: an integer, got '$seed'"
nl_parse_rate --rate "$rate" 10000
nl_is_fraction "$load" ||
	nl_die_usage "--load: a fraction in (0, 1], got '$load'"
nl_is_num "$loss" && awk -v p="$loss" 'BEGIN { exit !(p < 50) }' ||
	nl_die_usage "--loss: percent below 50, got '$loss'"
nl_is_uint "$restart_every" && [ "$restart_every" -ge 2 ] ||
	nl_die_usage "--restart-every: seconds, at least 2," \
		"got '$restart_every'"
nl_is_num "$down" && awk -v d="$down" -v r="$restart_every" \
	'BEGIN { exit !(d < r) }' ||
	nl_die_usage "--down: seconds below --restart-every, got '$down'"
nl_is_uint "$hostile_rate" && [ "$hostile_rate" -le 100000 ] ||
	nl_die_usage "--hostile-rate: packets per second up to 100000," \
		"got '$hostile_rate'"
nl_is_uint "$ask_max" && [ "$ask_max" -le 1000000 ] ||
	nl_die_usage "--ask-max: bytes up to 1000000, got '$ask_max'"
nl_is_num "$sample_every" && awk -v s="$sample_every" \
	'BEGIN { exit !(s >= 0.1) }' ||
	nl_die_usage "--sample-every: seconds, at least 0.1," \
		"got '$sample_every'"
nl_is_uint "$flat_after" && [ "$flat_after" -lt "$seconds" ] ||
	nl_die_usage "--flat-after: seconds before the end of the load," \
		"got '$flat_after'"
nl_is_uint "$rss_slack" || nl_die_usage "--rss-slack: KB, got '$rss_slack'"
# The ip transport opens a raw ICMP socket the first time it answers a
# RESEND to a port nobody holds: one descriptor that may come at any time.
if [ -z "$fds_slack" ]; then
	if [ "$transport" = ip ]; then fds_slack=1; else fds_slack=0; fi
fi
nl_is_uint "$fds_slack" ||
	nl_die_usage "--fds-slack: descriptors, got '$fds_slack'"
nl_is_uint "$drain" && [ "$drain" -ge 1 ] && [ "$drain" -le 60 ] ||
	nl_die_usage "--drain: 1..60 seconds, got '$drain'"
nl_is_uint "$quiet" || nl_die_usage "--quiet: seconds, got '$quiet'"
nl_check_homa_env "$homa_env"

nl_find_perf "$perf"
[ -n "$hostile" ] || hostile=$(dirname "$perf")/homa-hostile
[ -x "$hostile" ] || { echo "soak.sh: no homa-hostile at $hostile" \
	"(build it, or pass --hostile)" >&2; exit 1; }
nl_find_python json

nl_need_root "network namespaces, tc, iptables"
ipt=""
for c in iptables iptables-nft iptables-legacy; do
	if command -v "$c" >/dev/null && "$c" -w -L -n >/dev/null 2>&1; then
		ipt=$c
		break
	fi
done
[ -n "$ipt" ] ||
	nl_cannot_run "needs a working iptables (Debian package iptables)"

mkdir -p "$out/raw"
out=$(cd "$out" && pwd)
raw=$out/raw
rm -f "$raw"/*

# --- the namespaces ----------------------------------------------------
tag=sk$$
sw=${tag}sw
svA=${tag}sa
svB=${tag}sb
c1=${tag}c1
c2=${tag}c2
hh=${tag}h
ipA=10.198.0.1
ipB=10.198.0.2
port=4000
pids=()          # every process started and not yet waited for
srvB_pid=""
mtu=1500

# nl_stop_processes - the cleanup's first step (netns_lib.sh): kill every
# process still running.
nl_stop_processes() {
	# shellcheck disable=SC2086  # srvB_pid: a PID or nothing
	nl_kill_wait KILL "${pids[@]}" $srvB_pid
}
nl_trap_cleanup

# add_loss NS - drop incoming Homa packets of host NS at random.
add_loss() {
	local match
	if [ "$transport" = ip ]; then match="-p 146"; else match="-p udp"; fi
	# shellcheck disable=SC2086  # match: two words
	ip netns exec "$1" "$ipt" -w -A INPUT -i eth0 $match -m statistic \
		--mode random --probability "$(awk -v p="$loss" \
		'BEGIN { printf "%.6f", p / 100 }')" -j DROP
}

# loss_counts NS - "dropped" packets of NS's loss rule.
loss_counts() {
	ip netns exec "$1" "$ipt" -w -L INPUT -v -x -n 2>/dev/null |
		awk '$3 == "DROP" { print $1; exit }'
}

# setup - the switch, the five hosts (software segmentation) and the
# bottlenecks toward the two servers (netns_lib.sh: nl_port_htb).
setup() {
	nl_switch "$sw" "$mtu"
	nl_host_link "$sw" "$svA" pa "$ipA" "$mtu" off
	nl_host_link "$sw" "$svB" pb "$ipB" "$mtu" off
	nl_host_link "$sw" "$c1" p1 10.198.0.11 "$mtu" off
	nl_host_link "$sw" "$c2" p2 10.198.0.12 "$mtu" off
	nl_host_link "$sw" "$hh" ph 10.198.0.20 "$mtu" off
	nl_port_htb "$sw" pa "$mbps" "$mtu" 1000000
	nl_port_htb "$sw" pb "$mbps" "$mtu" 1000000
}

# Every host's environment (nl_in_host): the transport, the pacer at the
# bottleneck and the link's MTU, then the --homa-env words.
# shellcheck disable=SC2206  # homa_env: checked HOMA_X=V words
nl_host_env=("HOMA_TRANSPORT=$transport" "HOMA_LINK_MBPS=$mbps"
	"HOMA_MTU=$mtu" $homa_env)

# start_server NS NAME - a homa-perf server in NS writing raw/NAME.*;
# sets started_pid.  Returns 1 when it did not get ready.
start_server() {
	local ns=$1 name=$2
	nl_in_host "$ns" "$perf" server --port $port --no-tcp --threads 2 \
		--sample-every "$sample_every" --json \
		>"$raw/$name.json" 2>"$raw/$name.err" &
	started_pid=$!
	nl_wait_ready "$started_pid" "$raw/$name.err" "server $name"
}

# calibrate W - unloaded RTTs of W's sizes into raw/baseline_W.txt, from
# c1 to server A before the loss (homa-perf needs them for slowdowns; the
# soak reports none).
calibrate() {
	nl_calibrate "$c1" "$ipA:$port" "$1" "$raw" --proto homa \
		--calib-rpcs 5
}

# start_client NS NAME W SERVER_IP SEED - a homa-perf client for the
# whole soak; its PID goes to pids, its name to the manifest.
start_client() {
	local ns=$1 name=$2 w=$3 sip=$4 s=$5 gbps
	gbps=$(awk -v l="$load" -v m="$mbps" \
		'BEGIN { printf "%.6f", l * m / 1000 / 2 }')
	nl_in_host "$ns" "$perf" client --server "$sip:$port" --proto homa \
		--workload "$w" --load-gbps "$gbps" --duration "$seconds" \
		--warmup 0 --drain "$drain" --baseline "$raw/baseline_$w.txt" \
		--seed "$s" --sample-every "$sample_every" --json \
		>"$raw/$name.json" 2>"$raw/$name.err" &
	pids+=($!)
	client_pids+=($!)
	echo "client $name $w $([ "$sip" = "$ipA" ] && echo A || echo B)" \
		>>"$raw/manifest.txt"
}

# client_udp_ports NS - the UDP ports of the sockets in NS (the clients'
# Homa sockets: nothing else runs there).
client_udp_ports() {
	ip netns exec "$1" ss -Huan 2>/dev/null |
		awk '{ n = split($4, a, ":"); print a[n] }' | sort -u
}

facts() {
	{
		nl_machine_facts
		echo "seconds=$seconds"
		echo "transport=$transport"
		echo "seed=$seed"
		echo "rate_mbps=$mbps"
		echo "load=$load"
		echo "loss_percent=$loss"
		echo "restart_every=$restart_every"
		echo "down=$down"
		echo "hostile_rate=$hostile_rate"
		echo "ask_max=$ask_max"
		echo "sample_every=$sample_every"
		echo "flat_after=$flat_after"
		echo "rss_slack_kb=$rss_slack"
		echo "fds_slack=$fds_slack"
		echo "drain=$drain"
		echo "quiet=$quiet"
		echo "homa_env=$homa_env"
		echo "perf=$perf"
	} >"$raw/facts.txt"
}

# --- the run -------------------------------------------------------------
facts
setup
if ! ip netns exec "$hh" "$python" -c \
	'import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, 146)' \
	2>/dev/null; then
	[ "$transport" = udp ] ||
		nl_cannot_run "no raw IP sockets (CAP_NET_RAW) for --transport ip"
fi
echo "soak.sh: $transport, $seconds s of W3+W4 at $load of $rate per server," \
	"$loss% loss, server B restarted every $restart_every s," \
	"$hostile_rate hostile packets/s (output in $out)"
start_server "$svA" serverA
srvA_pid=$started_pid
pids+=("$srvA_pid")
echo "server A serverA" >>"$raw/manifest.txt"
restarts=0
start_server "$svB" "serverB.$restarts"
srvB_pid=$started_pid
echo "server B serverB.$restarts" >>"$raw/manifest.txt"
calibrate w3
calibrate w4
for ns in "$svA" "$svB" "$c1" "$c2"; do
	add_loss "$ns"
done

client_pids=()
t_start=$(date +%s.%N)
start_client "$c1" c1_w3_A w3 "$ipA" $((seed * 10 + 1))
start_client "$c1" c1_w3_B w3 "$ipB" $((seed * 10 + 2))
start_client "$c2" c2_w4_A w4 "$ipA" $((seed * 10 + 3))
start_client "$c2" c2_w4_B w4 "$ipB" $((seed * 10 + 4))

hostile_pid=""
if [ "$hostile_rate" -gt 0 ]; then
	targets=(--target "$ipA:$port" --target "$ipB:$port")
	if [ "$transport" = udp ]; then
		sleep 1         # the clients' sockets exist by now
		for p in $(client_udp_ports "$c1"); do
			targets+=(--target "10.198.0.11:$p")
		done
		for p in $(client_udp_ports "$c2"); do
			targets+=(--target "10.198.0.12:$p")
		done
	fi
	echo "${targets[*]}" >"$raw/hostile_targets.txt"
	ip netns exec "$hh" "$hostile" "${targets[@]}" --rate "$hostile_rate" \
		--seed "$seed" --transport "$transport" --ask-max "$ask_max" \
		>"$raw/hostile.txt" 2>"$raw/hostile.err" &
	hostile_pid=$!
	pids+=("$hostile_pid")
fi

# now_s - seconds since the clients started.
now_s() { awk -v t0="$t_start" -v t="$(date +%s.%N)" \
	'BEGIN { printf "%.1f", t - t0 }'; }

# Server B dies every restart_every seconds until the load ends (it is up
# for the drain).
next=$restart_every
while [ "$next" -lt "$seconds" ]; do
	wait_s=$(awk -v t0="$t_start" -v n="$next" -v t="$(date +%s.%N)" \
		'BEGIN { w = t0 + n - t; printf "%.3f", (w > 0 ? w : 0) }')
	sleep "$wait_s"
	kill -KILL "$srvB_pid" 2>/dev/null || true
	wait "$srvB_pid" 2>/dev/null || true
	echo "$(now_s) kill" >>"$raw/restarts.txt"
	srvB_pid=""
	sleep "$down"
	restarts=$((restarts + 1))
	start_server "$svB" "serverB.$restarts" || exit 1
	srvB_pid=$started_pid
	echo "$(now_s) up" >>"$raw/restarts.txt"
	echo "server B serverB.$restarts" >>"$raw/manifest.txt"
	next=$((next + restart_every))
done

for i in "${!client_pids[@]}"; do
	rc=0
	wait "${client_pids[$i]}" || rc=$?
	echo "${client_pids[$i]} $rc" >>"$raw/client_exit.txt"
done
if [ -n "$hostile_pid" ]; then
	kill -TERM "$hostile_pid" 2>/dev/null || true
	wait "$hostile_pid" 2>/dev/null || true
fi
pids=("$srvA_pid")
echo "soak.sh: load over at $(now_s) s; quiet for $quiet s"
sleep "$quiet"
# A last sample of each server, then their reports (SIGTERM).
sleep "$sample_every"
for ns in "$svA" "$svB" "$c1" "$c2"; do
	echo "$ns $(loss_counts "$ns")" >>"$raw/loss_drops.txt"
done
for pid in "$srvA_pid" "$srvB_pid"; do
	kill -TERM "$pid" 2>/dev/null || true
	rc=0
	wait "$pid" 2>/dev/null || rc=$?
	echo "$pid $rc" >>"$raw/server_exit.txt"
done
pids=()
srvB_pid=""

"$python" "$here/soak_report.py" --raw "$raw" --out "$out"
