#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_testbed_smoke.sh - scripts/testbed.sh --smoke end to end: network
# namespaces (3 clients, a switch with an htb bottleneck of 8 priority
# classes, a server), W4 at 30% of 200 Mbit/s, Homa then TCP, 2 s each.
# Checks that it produced its tables, summary and plot, that every RPC
# of every run completed (no failed and no unfinished RPC), that the TCP
# clients spread their requests over their pool of connections, and that
# late arrivals are reported per protocol with a validity verdict.
# Nothing here is timed: how fast the RPCs were, and whether the machine
# let the generators keep up (valid or not), is not checked.
#
# Environment (set by CTest): HOMA_SOURCE_DIR, HOMA_TOOLS_DIR.  Needs
# root (namespaces, tc) and python3 with matplotlib (python3-matplotlib).
set -euo pipefail

src=${HOMA_SOURCE_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
tools=${HOMA_TOOLS_DIR:-$src/build/tools}

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

[ "$(id -u)" -eq 0 ] || fail "needs root (network namespaces and tc)"
[ -x "$tools/homa-perf" ] || fail "no $tools/homa-perf (build first)"
python=""
for p in python3 /usr/bin/python3; do
	if command -v "$p" >/dev/null && "$p" -c 'import matplotlib' 2>/dev/null
	then
		python=$p
		break
	fi
done
[ -n "$python" ] || fail "python3 with matplotlib is needed (Debian" \
	"package python3-matplotlib; 'make deps')"

# Bad option values are refused before anything is set up (exit 2).
for bad in "--link-mbps fast" "--link-mbps 0" "--host-gso maybe"; do
	rc=0
	# shellcheck disable=SC2086  # an option and its value
	msg=$(bash "$src/scripts/testbed.sh" $bad 2>&1) || rc=$?
	[ "$rc" -eq 2 ] || fail "testbed.sh $bad: exit $rc, expected 2"
	grep -q -- "${bad%% *}" <<<"$msg" || fail "testbed.sh $bad: $msg"
done

out=$(mktemp -d "${TMPDIR:-/tmp}/homa-testbed-smoke.XXXXXX")
trap 'rm -rf "$out"' EXIT

echo "== scripts/testbed.sh --smoke (output in $out)"
rc=0
bash "$src/scripts/testbed.sh" --smoke --perf "$tools/homa-perf" \
	--out "$out" || rc=$?
ls -l "$out" "$out/raw" || true
[ "$rc" -eq 0 ] || fail "testbed.sh exited with $rc"

[ -s "$out/tables.md" ] || fail "no tables.md"
grep -q '^| 1 | ' "$out/tables.md" || fail "tables.md has no bucket rows"
# The machine's CPU per RPC, for Homa and for TCP.
grep -Eq '^\| machine CPU, us/RPC [^|]*\| [0-9.]+ \| [0-9.]+ \|$' \
	"$out/tables.md" || fail "tables.md has no machine CPU per RPC"
# Late arrivals of both protocols, as a count of the arrivals.
grep -Eq '^\| arrivals > 1 ms late \| [0-9]+ of [0-9]+ \([0-9.]+%\)( INVALID)? \| [0-9]+ of [0-9]+ \([0-9.]+%\)( INVALID)? \|$' \
	"$out/tables.md" || fail "tables.md has no late arrivals of each protocol"
[ -s "$out/summary.json" ] || fail "no summary.json"
png=$out/testbed_200mbit_w4.png
[ -s "$png" ] || fail "no plot $png"
[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "$png is not a PNG file"
cat "$out/tables.md"

# Every run of both protocols: clients all reported, RPCs were measured,
# none failed, none was left unfinished.
"$python" - "$out/summary.json" <<'EOF'
import json
import sys

doc = json.load(open(sys.argv[1]))
runs = doc["runs"]
seen = {r["proto"] for r in runs}
problems = []
if seen != {"homa", "tcp"}:
    problems.append(f"protocols measured: {sorted(seen)}")
for r in runs:
    name = f"{r['workload']} {r['load']} {r['proto']}"
    if r["clients"] != 3:
        problems.append(f"{name}: {r['clients']} client results, not 3")
    if r["completed"] <= 0:
        problems.append(f"{name}: no RPC measured")
    if r["failed"] or r["unfinished"]:
        problems.append(f"{name}: {r['failed']} failed, "
                        f"{r['unfinished']} unfinished")
    if r["errors"]:
        problems.append(f"{name}: {r['errors'][:3]}")
    if not r["all_completed"]:
        problems.append(f"{name}: not all RPCs completed")
    if r["arrivals"] <= 0 or r["valid"] not in (True, False):
        problems.append(f"{name}: no arrivals or no validity verdict")
if not doc["all_completed"]:
    problems.append("summary: all_completed is false")
# Every TCP client used all its connections (8 by default).
import glob, os
for path in glob.glob(os.path.join(os.path.dirname(sys.argv[1]), "raw",
                                   "*_tcp_c*.json")):
    res = json.load(open(path))["results"]["tcp"]
    per = res["conn_issued"]
    if len(per) != 8 or min(per) == 0 or sum(per) != res["issued"]:
        problems.append(f"{os.path.basename(path)}: requests per "
                        f"connection {per}, issued {res['issued']}")
for p in problems:
    print("FAIL:", p)
sys.exit(1 if problems else 0)
EOF
echo "PASS: testbed smoke run: outputs present, every RPC completed"
