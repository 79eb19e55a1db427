#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_homa_sim.sh HOMA_SIM [WORKLOAD_DIR] - the homa-sim command line:
# help, exit status 2 with a message for bad options, the table, and JSON
# that repeats byte for byte for the same seed.
set -u
sim=${1:?usage: check_homa_sim.sh HOMA_SIM [WORKLOAD_DIR]}
dir=${2:-}
if [ -z "$dir" ]; then
	for up in ../ ../../ ../../../ ../../../../ ../../../../../; do
		if [ -f "${up}shared/workloads/w4.cdf" ]; then
			dir="${up}shared/workloads"
			break
		fi
	done
fi
[ -n "$dir" ] || { echo "no shared/workloads found"; exit 1; }
TOOL=$sim
TOOL_NAME=homa-sim
TOOL_ARGS=(--workload-dir "$dir")
. "$(dirname "$0")/tool_check_lib.sh"

"$sim" --help >"$tmp/out" 2>&1 && grep -q '^usage: homa-sim' "$tmp/out" &&
	grep -q -- '--priorities' "$tmp/out" && grep -q -- '--pacer on|off' \
	"$tmp/out" && ok || bad "--help"

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
# The pacer ablation: the JSON says so, bytes wait at the NICs, and the
# default run (pacer on) has none waiting; no run has violations.
"$sim" "${args[@]}" --pacer off --json >"$tmp/off.json" || bad "pacer off run"
grep -q '"pacer":"off"' "$tmp/off.json" &&
	! grep -q '"max_nic_queue_bytes":0,' "$tmp/off.json" &&
	grep -q '"pacer":"on"' "$tmp/a.json" &&
	grep -q '"max_nic_queue_bytes":0,' "$tmp/a.json" &&
	grep -q '"violations":0,' "$tmp/off.json" &&
	grep -q '"violations":0,' "$tmp/a.json" && ok || bad "pacer off JSON"
"$sim" "${args[@]}" --check off --json | grep -q '"completed":300' &&
	ok || bad "--check off"
grep -q '"overcommit":8,' "$tmp/a.json" && ok || bad "overcommit in JSON"
"$sim" "${args[@]}" --overcommit 1 --json | grep -q '"overcommit":1,' &&
	ok || bad "--overcommit 1"

"$sim" --workload-dir "$dir" --topology two-tier --hosts 18 --racks 3 \
	--spines 2 --messages 200 --load 0.5 --json |
	grep -q '"hosts":18,' && ok || bad "small two-tier run"

check_finish
