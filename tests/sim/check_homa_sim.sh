#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_homa_sim.sh HOMA_SIM [WORKLOAD_DIR] - the homa-sim command line:
# help, exit status 2 with a message for bad options, the table, JSON
# that repeats byte for byte for the same seed, slow receivers and --set.
set -u
sim=${1:?usage: check_homa_sim.sh HOMA_SIM [WORKLOAD_DIR]}
# Default: the repository's workloads/ folder (this script is in
# tests/sim/).
dir=${2:-$(cd "$(dirname "$0")/../.." && pwd)/workloads}
[ -f "$dir/w4.cdf" ] || { echo "no workloads at $dir"; exit 1; }
TOOL=$sim
TOOL_NAME=homa-sim
TOOL_ARGS=(--workload-dir "$dir")
. "$(dirname "$0")/../tool_check_lib.sh"

"$sim" --help >"$tmp/out" 2>&1 && grep -q '^usage: homa-sim' "$tmp/out" &&
	grep -q -- '--priorities' "$tmp/out" && grep -q -- '--pacer on|off' \
	"$tmp/out" && grep -q -- '--rx-ns N' "$tmp/out" &&
	grep -q -- '--service-ns N' "$tmp/out" &&
	grep -q -- '--set NAME=VALUE' "$tmp/out" && ok || bad "--help"

expect_usage_error --load 0
expect_usage_error --load 1.5
expect_usage_error --load abc
expect_usage_error --priorities 0
expect_usage_error --priorities 9
expect_usage_error --hosts 1
expect_usage_error --hosts 12x
expect_usage_error --messages
expect_usage_error --workload w9
expect_usage_error --workload /nonexistent.cdf
expect_usage_error --topology ring
expect_usage_error --topology two-tier --hosts 100
expect_usage_error --link-gbps -1
expect_usage_error --cutoffs magic
expect_usage_error --overcommit 0
expect_usage_error --pacer maybe
expect_usage_error --check 1
expect_usage_error --bogus
expect_usage_error stray
expect_usage_error --rx-ns 1000000001
expect_usage_error --rx-ns -1
expect_usage_error --rx-queue-kb 0
expect_usage_error --rx-ns 30000 --rx-queue-kb 1
expect_usage_error --hosts 8 --rx-hosts 9
expect_usage_error --gap-ns 0
expect_usage_error --service-ns -1
expect_usage_error --service-ns 1000000000001
expect_usage_error --hosts 8 --service-hosts 9
expect_usage_error --load 0.5 --gap-ns 50000
expect_usage_error --wait-responses maybe
expect_usage_error --set
expect_usage_error --set max_peer_probes
expect_usage_error --set =5
expect_usage_error --set no_such_setting=1
expect_usage_error --set max_peer_probes=0
expect_usage_error --set max_peer_probes=1x
expect_usage_error --set link_mbps=1000
expect_usage_error --set unsched_cutoff7=100
# The messages name what is wrong: the setting and its range, the FIFO.
"$sim" --workload-dir "$dir" --set max_peer_probes=0 2>&1 |
	grep -q 'max_peer_probes.*1\.\.1000000' && ok || bad "--set range message"
"$sim" --workload-dir "$dir" --set no_such_setting=1 2>&1 |
	grep -q "unknown core setting 'no_such_setting'" && ok ||
	bad "--set unknown name message"
"$sim" --workload-dir "$dir" --rx-ns 30000 --rx-queue-kb 1 2>&1 |
	grep -q -- '--rx-queue-kb 1: .*one full packet' && ok ||
	bad "--rx-queue-kb too small message"

args=(--workload-dir "$dir" --workload w4 --hosts 8 --load 0.5
      --messages 300 --seed 3)
"$sim" "${args[@]}" --json >"$tmp/a.json" 2>"$tmp/err" || bad "json run"
"$sim" "${args[@]}" --json >"$tmp/b.json" 2>>"$tmp/err" || bad "json run 2"
if cmp -s "$tmp/a.json" "$tmp/b.json" && [ -s "$tmp/a.json" ]; then
	ok
else
	bad "same seed, different JSON"
fi
for key in '"messages":300' '"completed":300' '"short_p99_slowdown":' \
	   '"p99_slowdown":' '"buckets":\[{"max_bytes":' '"count":' \
	   '"p50_slowdown":'; do
	grep -q "$key" "$tmp/a.json" && ok || bad "JSON lacks $key"
done
[ "$(wc -l <"$tmp/a.json")" -eq 1 ] && ok || bad "JSON is not one line"
grep -q 'wall' "$tmp/a.json" && bad "wall clock in --json" || ok
"$sim" "${args[@]}" --json --timing | grep -q '"events_per_second":' &&
	ok || bad "--timing"
"$sim" "${args[@]}" --seed 4 --json >"$tmp/c.json" || bad "seed 4 run"
cmp -s "$tmp/a.json" "$tmp/c.json" && bad "seed changes nothing" || ok

"$sim" "${args[@]}" >"$tmp/table" || bad "table run"
grep -q 'P99 slowdown' "$tmp/table" && grep -q 'completed 300' "$tmp/table" &&
	grep -q 'simulated time' "$tmp/table" &&
	grep -q 'events/s' "$tmp/table" && ok || bad "table: $(cat "$tmp/table")"

"$sim" --workload-dir "$dir" --workload "$dir/w1.cdf" --hosts 4 \
	--messages 100 --priorities 1 --json | grep -q '"completed":100' &&
	ok || bad "workload given as a file, one priority"
# The pacer ablation: the JSON says so; with the pacer on the bytes
# waiting at a NIC stay within the run's max_nic_queue_ns at 10 Gbit/s
# (core_settings shows it when off the core's 5000: homa-sim's default is
# 0) and three full packets (1,558 wire bytes each), both with the
# default and with the kernel's 5 us (6,250 bytes); with the pacer off
# they grow far beyond; no run has violations.
nicq() { sed -n 's/.*"max_nic_queue_bytes":\([0-9]*\),.*/\1/p' "$1"; }
nic_bound() {
	local ns
	ns=$(grep -o '"max_nic_queue_ns":[0-9]*' "$1" | cut -d: -f2)
	echo $(( ${ns:-5000} * 10000 / 8000 + 3 * 1558 ))
}
"$sim" "${args[@]}" --pacer off --json >"$tmp/off.json" || bad "pacer off run"
"$sim" "${args[@]}" --set max_nic_queue_ns=5000 --json >"$tmp/k.json" ||
	bad "5 us allowance run"
grep -q '"max_nic_queue_ns":0}' "$tmp/a.json" &&
	! grep -q '"max_nic_queue_ns"' "$tmp/k.json" &&
	[ "$(nic_bound "$tmp/a.json")" -eq 4674 ] &&
	[ "$(nic_bound "$tmp/k.json")" -eq 10924 ] && ok ||
	bad "max_nic_queue_ns: default 0, --set 5000"
grep -q '"pacer":"off"' "$tmp/off.json" &&
	[ "$(nicq "$tmp/off.json")" -gt 100000 ] &&
	grep -q '"pacer":"on"' "$tmp/a.json" &&
	[ "$(nicq "$tmp/a.json")" -gt 0 ] &&
	[ "$(nicq "$tmp/a.json")" -le "$(nic_bound "$tmp/a.json")" ] &&
	[ "$(nicq "$tmp/k.json")" -gt 0 ] &&
	[ "$(nicq "$tmp/k.json")" -le "$(nic_bound "$tmp/k.json")" ] &&
	grep -q '"violations":0,' "$tmp/off.json" &&
	grep -q '"violations":0,' "$tmp/k.json" &&
	grep -q '"violations":0,' "$tmp/a.json" && ok || bad "pacer off JSON"
"$sim" "${args[@]}" --check off --json | grep -q '"completed":300' &&
	ok || bad "--check off"
grep -q '"overcommit":8,' "$tmp/a.json" && ok || bad "overcommit in JSON"
"$sim" "${args[@]}" --overcommit 1 --json | grep -q '"overcommit":1,' &&
	ok || bad "--overcommit 1"

# Slow receivers: host 0 of 4 reads a packet per 50 us behind a 128 KiB
# FIFO and gets more than that (3000 W1 requests, 0.1 s): the JSON shows
# the options, FIFO drops, the FIFO's peak and every RPC's result; the
# table has a line for it; a run without --rx-ns shows none.
slow=(--workload-dir "$dir" --workload w1 --hosts 4 --gap-ns 50000
      --wait-responses on --seed 4 --messages 3000 --rx-ns 50000
      --rx-hosts 1 --rx-queue-kb 128)
"$sim" "${slow[@]}" --json >"$tmp/slow.json" || bad "slow receiver run"
for key in '"rx_ns":50000,' '"rx_queue_bytes":131072,' '"rx_hosts":1,' \
	   '"mean_gap_ns":50000,' '"wait_responses":"on",' \
	   '"violations":0,' \
	   '"core_settings":{"link_mbps":10000,"max_nic_queue_ns":0}' \
	   '"load":0.0067,'; do
	grep -q "$key" "$tmp/slow.json" && ok || bad "slow JSON lacks $key"
done
json_num() { grep -o "\"$1\":[0-9]*" "$2" | head -1 | cut -d: -f2; }
drops=$(json_num rx_drops "$tmp/slow.json")
peak=$(json_num max_rx_queue_bytes "$tmp/slow.json")
resp=$(json_num responses "$tmp/slow.json")
errs=$(json_num client_errors "$tmp/slow.json")
if [ "${drops:-0}" -gt 0 ] && [ "${peak:-0}" -gt 100000 ] &&
   [ "${peak:-0}" -le 131072 ] && [ $((resp + errs)) -eq 3000 ]; then
	ok
else
	bad "slow receiver: drops $drops, peak $peak, $resp + $errs RPCs"
fi
grep -q '"rx_ns":0,"rx_queue_bytes":33554432,"rx_hosts":0,"rx_drops":0,' \
	"$tmp/a.json" && ok || bad "fast receivers in JSON"
"$sim" "${slow[@]}" | grep -q '^slow receiver: host 0, 50.0 us per packet' &&
	ok || bad "slow receiver line in the table"
grep -q '^slow receiver' "$tmp/table" && bad "slow line without --rx-ns" || ok
# --set: reflected in core_settings, and a real setting changes a result
# (10-tick timeouts fail RPCs that the default 100 ticks let finish).
"$sim" "${slow[@]}" --json --set timeout_ticks=10 \
	--set=alive_timeout_ticks=0xa >"$tmp/set.json" || bad "--set run"
grep -q '"core_settings":{"link_mbps":10000,"timeout_ticks":10,"alive_timeout_ticks":10,"max_nic_queue_ns":0}' \
	"$tmp/set.json" && ok || bad "--set not in core_settings"
[ "$(json_num client_errors "$tmp/set.json")" -gt "${errs:-0}" ] && ok ||
	bad "--set timeout_ticks=10 changed nothing"
"$sim" "${args[@]}" --set max_overcommit=2 --json |
	grep -q '"overcommit":2,' && ok || bad "--set max_overcommit=2"

# Slow servers: host 0's application takes 400 ms per request, about 50
# requests queue for it (20 s of simulated time); BUSY keeps every client
# waiting, none times out.
"$sim" --workload-dir "$dir" --workload w1 --hosts 4 --messages 200 \
	--gap-ns 100000 --wait-responses on --service-ns 400000000 \
	--service-hosts 1 --seed 2 --json >"$tmp/svc.json" || bad "service run"
grep -q '"service_ns":400000000,"service_hosts":1' "$tmp/svc.json" && ok ||
	bad "service keys in JSON"
if [ "$(json_num responses "$tmp/svc.json")" = 200 ] &&
   [ "$(json_num client_errors "$tmp/svc.json")" = 0 ] &&
   [ "$(json_num rpc_timeouts "$tmp/svc.json")" = 0 ] &&
   [ "$(json_num simulated_ns "$tmp/svc.json")" -gt 20000000000 ]; then
	ok
else
	bad "slow server: RPCs timed out or did not wait"
fi

"$sim" --workload-dir "$dir" --topology two-tier --hosts 18 --racks 3 \
	--spines 2 --messages 200 --load 0.5 --json |
	grep -q '"hosts":18,' && ok || bad "small two-tier run"

check_finish
