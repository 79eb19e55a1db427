#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_homa_faults.sh HOMA_FAULTS [SEEDS] - the homa-faults command line
# (help, exit status 2 for bad options, runs that repeat exactly, the
# reproducing command of a run) and the CI fault campaign: SEEDS seeds
# (default 200, or $HOMA_FAULT_SEEDS) must run without an invariant
# violation.  A violation prints its seed and the command that repeats it.
set -u
tool=${1:?usage: check_homa_faults.sh HOMA_FAULTS [SEEDS]}
seeds=${2:-${HOMA_FAULT_SEEDS:-200}}
TOOL=$tool
TOOL_NAME=homa-faults
. "$(dirname "$0")/../tool_check_lib.sh"

"$tool" --help >"$tmp/out" 2>&1 && grep -q '^usage: homa-faults' "$tmp/out" &&
	grep -q -- '--seeds A..B' "$tmp/out" && ok || bad "--help"

expect_usage_error --seeds 5
expect_usage_error --seeds 9..3
expect_usage_error --seeds a..b
expect_usage_error --hosts 1
expect_usage_error --hosts 65
expect_usage_error --messages 0
expect_usage_error --priorities 9
expect_usage_error --pacer maybe
expect_usage_error --trace 1
expect_usage_error --count
expect_usage_error --bogus 1
expect_usage_error stray

# One seed twice: the same output, byte for byte, but for the wall time.
"$tool" --seed 7 --verbose | sed 's/events in .*//' >"$tmp/a" || true
"$tool" --seed 7 --verbose | sed 's/events in .*//' >"$tmp/b" || true
if [ -s "$tmp/a" ] && cmp -s "$tmp/a" "$tmp/b"; then ok; else
	bad "seed 7 does not repeat"; fi
grep -q '^seed 7: 4 hosts' "$tmp/a" && grep -q 'faults until' "$tmp/a" &&
	grep -q '^homa-faults: seeds 7..7: 1 runs' "$tmp/a" && ok ||
	bad "verbose output: $(head -c 300 "$tmp/a")"
"$tool" --seed 7 --trace all | grep -q ' -> .*: DATA id ' && ok ||
	bad "--trace all prints no packets"

# The campaign.
"$tool" --from 1 --count "$seeds" >"$tmp/campaign" 2>&1
rc=$?
tail -n 1 "$tmp/campaign"
if [ $rc -eq 0 ] && grep -q "^homa-faults: seeds 1\.\.$seeds: $seeds runs, 0 with violations" "$tmp/campaign"; then
	ok
else
	bad "campaign of $seeds seeds (exit $rc):"
	grep -A 12 '^VIOLATION' "$tmp/campaign" | head -n 60
	# A violation must name its reproducing command.
	grep -q '  reproduce: homa-faults --seed [0-9]* --hosts 4 ' \
		"$tmp/campaign" || bad "no reproducing command printed"
fi

check_finish
