#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_homa_perf.sh HOMA_PERF [UDP_BOUND] - the homa-perf command line
# (help, exit status 2 for bad options) and short loopback runs of each
# kind, as CI's smoke version of the benchmark: closed loop with both
# protocols, open loop (also with clients that wait in ppoll,
# --client-poll), a workload, a server that waits in epoll_wait
# (--server-epoll), and the JSON output; the open-loop TCP connection
# pool (requests spread over every connection, all answered, bytes
# checked, and a server that answers other bytes caught); runs marked
# invalid when a generator is made late (--test-stall), in homa-perf's
# output and in scripts/plot_testbed.py's tables; one round of
# scripts/loopback_rounds.sh (with plain UDP, -u, when UDP_BOUND is given);
# a traced run (HOMA_TRACE_FILE) read by scripts/trace_rpc.py.  Each run
# must complete every RPC it measured.  Only correctness is checked, never
# a speed: the machines are shared.
set -u
tool=${1:?usage: check_homa_perf.sh HOMA_PERF [UDP_BOUND]}
udp_bound=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
workloads=$(cd "$here/../.." && pwd)/workloads   # the repository's
TOOL=$tool
TOOL_NAME=homa-perf
. "$here/../tool_check_lib.sh"
# Server ports (1..32767) of its own, away from other tests' ports.
port=$((21000 + $$ % 2000))

# check_json FILE PROTOS... - every listed protocol measured RPCs, none
# failed or was left unfinished, and the server answered them.
check_json() {
	local file=$1
	shift
	python3 - "$file" "$@" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for proto in sys.argv[2:]:
    r = doc["results"][proto]
    assert r["completed"] > 0, (proto, "nothing completed")
    assert r["failed"] == 0 and r["unfinished"] == 0, (proto, r["first_error"])
    assert r["buckets"] and r["all"]["rtt_us"], (proto, "no histogram")
    served = doc["server_side"][proto + "_served"]
    assert served >= r["completed"], (proto, served, r["completed"])
    assert doc["server_side"][proto + "_errors"] == 0, proto
EOF
}

# run NAME PROTOS... -- ARGS... - a loopback run with --json, checked.
run() {
	local name=$1 protos=()
	shift
	while [ "$1" != "--" ]; do
		protos+=("$1")
		shift
	done
	shift
	port=$((port + 1))
	if "$tool" loopback --port "$port" --json "$@" >"$tmp/$name.json" \
		2>"$tmp/$name.err" && check_json "$tmp/$name.json" "${protos[@]}" \
		2>"$tmp/$name.check"; then
		ok
	else
		bad "$name: homa-perf loopback $*"
		tail -n 5 "$tmp/$name.err" "$tmp/$name.check"
	fi
}

"$tool" --help >"$tmp/out" 2>&1 && grep -q '^usage: homa-perf server' \
	"$tmp/out" && grep -q -- '--server-epoll' "$tmp/out" &&
	grep -q -- '--client-poll' "$tmp/out" && ok ||
	bad "--help"

"$tool" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q '^usage: homa-perf' "$tmp/err" &&
	[ ! -s "$tmp/out" ] && ok || bad "no arguments -> exit $rc"
expect_usage_error bogus
expect_usage_error loopback
expect_usage_error loopback --size 0
expect_usage_error loopback --size 1000001
expect_usage_error loopback --size 100 --proto udp
expect_usage_error loopback --size 100 --outstanding 0
expect_usage_error client --server 127.0.0.1:1 --size 100 --server-epoll
expect_usage_error loopback --size 100 --outstanding 2 --client-poll
expect_usage_error server --port 4000 --client-poll
expect_usage_error server --port 4000 --size 100
expect_usage_error loopback --size 100 --rate 100 --test-stall udp
expect_usage_error loopback --size 100 --outstanding 2 --test-stall tcp
expect_usage_error loopback --size 100 --rate 100 --tcp-conns 0
expect_usage_error loopback --size 100 --rate 100 --tcp-conns 257

run closed homa tcp -- --size 1000 --outstanding 4 --duration 0.5 \
	--calib-rpcs 5
run open homa tcp -- --size 100 --rate 2000 --duration 0.5 --calib-rpcs 5
run poll homa -- --proto homa --size 3000 --rate 2000 --client-poll \
	--duration 0.5 --calib-rpcs 5
grep -q '"client_poll":true' "$tmp/poll.json" &&
	grep -q '"client_poll":false' "$tmp/open.json" && ok ||
	bad "client_poll in JSON"
# The open-loop TCP pool: 4 connections, echoes of a workload's sizes
# (the reader compares every byte), each connection given requests.
run pool tcp -- --proto tcp --workload w3 --workload-dir "$workloads" \
	--echo --rate 2000 --tcp-conns 4 --duration 0.5 --calib-rpcs 3
if python3 - "$tmp/pool.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
r = doc["results"]["tcp"]
assert doc["tcp_conns"] == 4, doc["tcp_conns"]
per = r["conn_issued"]
assert len(per) == 4 and all(n > 0 for n in per), per
assert sum(per) == r["issued"] == r["completed"], (per, r["issued"])
assert r["arrivals"] >= r["issued"] and "valid" in r, r
EOF
then ok; else bad "TCP pool: requests over every connection"; fi
# Without --tcp-conns an open loop has 8 connections, a closed loop 1.
grep -q '"tcp_conns":8' "$tmp/open.json" &&
	grep -q '"tcp_conns":1' "$tmp/closed.json" && ok ||
	bad "default --tcp-conns (8 open loop, 1 closed loop)"

# A TCP server that answers with other bytes than asked for: every
# response is counted failed, naming the byte that differs.
port=$((port + 1))
python3 - "$port" >"$tmp/badsrv.out" 2>&1 <<'EOF' &
import socket, struct, sys, threading
ls = socket.socket()
ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
ls.bind(("127.0.0.1", int(sys.argv[1])))
ls.listen(16)
ls.settimeout(30)
print("ready", flush=True)
def serve(c):
    f = c.makefile("rb")
    while True:
        hdr = f.read(4)
        if len(hdr) < 4:
            return
        body = f.read(struct.unpack(">I", hdr)[0])
        want = struct.unpack(">I", body[:4])[0]
        c.sendall(struct.pack(">I", want) + b"\xff" * want)
try:
    while True:
        c, _ = ls.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
except socket.timeout:
    pass
EOF
badsrv=$!
printf 'tcp 100 50000 10\n' >"$tmp/base.txt"
for _ in $(seq 100); do
	grep -q ready "$tmp/badsrv.out" && break
	sleep 0.1
done
"$tool" client --server "127.0.0.1:$port" --proto tcp --size 100 \
	--rate 500 --duration 0.3 --baseline "$tmp/base.txt" \
	>"$tmp/badsrv.txt" 2>"$tmp/badsrv.err"
rc=$?
kill "$badsrv" 2>/dev/null
wait "$badsrv" 2>/dev/null
if [ $rc -eq 1 ] && grep -q 'differs from the bytes asked for at byte 0' \
	"$tmp/badsrv.err" && grep -q '^tcp: 0 RPCs' "$tmp/badsrv.txt"; then
	ok
else
	bad "a TCP server answering other bytes (exit $rc)"
	tail -n 3 "$tmp/badsrv.err" "$tmp/badsrv.out"
fi

# A generator made late (--test-stall: every 10th arrival 2 ms late)
# makes its protocol's run invalid: no ratio, the reason in the text and
# the JSON.  Whether the other protocol kept up depends on the machine
# and is not checked.
port=$((port + 1))
if "$tool" loopback --port "$port" --size 100 --rate 1000 --duration 0.5 \
	--calib-rpcs 3 --test-stall tcp >"$tmp/stall.txt" 2>"$tmp/stall.err" &&
   grep -q '^P99 slowdown, tcp / homa, per bucket: invalid (.*tcp [0-9.]*% late' \
	"$tmp/stall.txt" && grep -q '^  INVALID: more than 1% of the arrivals' \
	"$tmp/stall.txt"; then
	ok
else
	bad "--test-stall tcp: the run marked invalid"
	grep -E 'arrivals|INVALID|P99' "$tmp/stall.txt" | head -n 5
fi
run stallh homa tcp -- --size 100 --rate 1000 --duration 0.5 --calib-rpcs 3 \
	--test-stall homa
if python3 - "$tmp/stallh.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
h = doc["results"]["homa"]
assert not doc["valid"] and "homa" in doc["invalid_reason"], doc["invalid_reason"]
assert not h["valid"] and h["late"] * 10 >= h["arrivals"] * 0.9, h
assert h["late_fraction"] > 0.01, h["late_fraction"]
EOF
then ok; else bad "--test-stall homa: JSON marks the run invalid"; fi

# scripts/plot_testbed.py on a run whose TCP generator was late: the
# table says INVALID and gives no Homa/TCP ratio, the target check gives
# no verdict, summary.json says which run is invalid.
plot=$here/../../scripts/plot_testbed.py
if [ -d "$workloads" ]; then
	mkdir -p "$tmp/tb/raw"
	port=$((port + 1))
	"$tool" loopback --port "$port" --workload w4 --workload-dir \
		"$workloads" --load-gbps 0.05 --duration 0.5 --calib-rpcs 3 \
		--test-stall tcp --json >"$tmp/tb/raw/w4_0.8_homa_c1.json" \
		2>"$tmp/tb.err"
	cp "$tmp/tb/raw/w4_0.8_homa_c1.json" "$tmp/tb/raw/w4_0.8_tcp_c1.json"
	if python3 "$plot" --raw "$tmp/tb/raw" --out "$tmp/tb" \
		>"$tmp/tb.out" 2>&1 &&
	   grep -q '^\*\*INVALID run\*\* (.*TCP [0-9.]*% late)' "$tmp/tb/tables.md" &&
	   grep -q '^| 1 | .* | invalid (.*TCP [0-9.]*% late) |' "$tmp/tb/tables.md" &&
	   grep -q 'no verdict: invalid run' "$tmp/tb/tables.md" &&
	   grep -Eq '^\| arrivals > 1 ms late \| [0-9]+ of [0-9]+ \([0-9.]+%\).* \| [0-9]+ of [0-9]+ \([0-9.]+%\) INVALID \|$' \
		"$tmp/tb/tables.md" &&
	   python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
t = [r for r in d["runs"] if r["proto"] == "tcp"][0]
assert not t["valid"] and t["late_fraction"] > 0.01 and not d["target"]["valid"]
' "$tmp/tb/summary.json"; then
		ok
	else
		bad "plot_testbed.py marks a late run invalid"
		tail -n 3 "$tmp/tb.err" "$tmp/tb.out"
		grep -E 'INVALID|late|Target' "$tmp/tb/tables.md" | head -n 5
	fi
fi

run large homa -- --proto homa --size 1000000 --outstanding 2 \
	--duration 0.5 --calib-rpcs 3
run epoll homa -- --proto homa --size 5000 --outstanding 4 \
	--server-epoll --duration 0.5 --calib-rpcs 5
if [ -d "$workloads" ]; then
	run workload homa tcp -- --workload w3 --workload-dir "$workloads" \
		--outstanding 8 --duration 0.5 --calib-rpcs 3
else
	bad "no workloads at $workloads"
fi

# scripts/loopback_rounds.sh: one short round of two variants, every line
# and both medians printed (the requests sent as to a network peer, so
# that GRANTs are counted); small messages (no GRANTs) too; a variant that
# is no program is refused.
rounds=$here/../../scripts/loopback_rounds.sh
if "$rounds" -n 1 -d 0.3 -s 100000 -o 2 "a=$tool:HOMA_LOOPBACK_UNSCHED_BYTES=0" \
	"b=$tool:HOMA_LOOPBACK_UNSCHED_BYTES=0:HOMA_POLL_USECS=0" \
	>"$tmp/rounds" 2>&1 &&
   [ "$(grep -c '^round 1 .* ratio [0-9.]*  grants [0-9]' "$tmp/rounds")" = 2 ] &&
   "$rounds" -n 1 -d 0.3 -s 100 -o 2 "c=$tool" >"$tmp/small" 2>&1 &&
   grep -q '^round 1 c .* ratio [0-9.]*  grants -$' "$tmp/small" &&
   [ "$(grep -c '^  [ab] .* ratio [0-9.]*  Homa CPU' "$tmp/rounds")" = 2 ]; then
	ok
else
	bad "loopback_rounds.sh"
	tail -n 5 "$tmp/rounds"
fi
"$rounds" -n 1 "x=$tmp/none" >"$tmp/out" 2>&1
[ $? -eq 2 ] && ok || bad "loopback_rounds.sh with a missing program"
# -a passes options on to homa-perf: a valid one runs, an unknown one
# makes homa-perf refuse the run.
if "$rounds" -n 1 -d 0.3 -s 100 -o 2 -a "--server-threads 1" "c=$tool" \
	>"$tmp/extra" 2>&1 && grep -q '^round 1 c .* ratio [0-9.]*' "$tmp/extra" &&
   "$rounds" -n 1 -d 0.3 -s 100 -o 2 -a "--no-such-option" "c=$tool" \
	>"$tmp/extra" 2>&1 && grep -q 'homa-perf failed' "$tmp/extra" &&
   ! grep -q '^round 1 c ' "$tmp/extra"; then
	ok
else
	bad "loopback_rounds.sh -a"
	tail -n 5 "$tmp/extra"
fi

# -u: the round ends with plain UDP, its Gbit/s and both ratios, and their
# medians; a -u that is no program is refused.
if [ -n "$udp_bound" ]; then
	if "$rounds" -n 1 -d 0.3 -s 1000000 -o 1 -u "$udp_bound" "c=$tool" \
		>"$tmp/udp" 2>&1 &&
	   grep -q '^round 1 udp-bound  udp  *[0-9.]* Gbit/s  udp/tcp [0-9.]*  homa/udp [0-9.]*$' "$tmp/udp" &&
	   grep -q '^  udp-bound  udp/tcp [0-9.]*  homa/udp [0-9.]*  (1 rounds' "$tmp/udp"; then
		ok
	else
		bad "loopback_rounds.sh -u"
		tail -n 5 "$tmp/udp"
	fi
	"$rounds" -n 1 -u "$tmp/none" "c=$tool" >"$tmp/out" 2>&1
	[ $? -eq 2 ] && ok || bad "loopback_rounds.sh -u with a missing program"
fi

# HOMA_TRACE_FILE: a traced 1 MB closed loop writes the trace at exit and
# scripts/trace_rpc.py finds its threads and round trips in it; a trace
# that cannot be written is reported on stderr.
tracer=$here/../../scripts/trace_rpc.py
port=$((port + 1))
if HOMA_TRACE_FILE="$tmp/trace" "$tool" loopback --port "$port" --proto homa \
	--size 1000000 --outstanding 1 --duration 0.3 --calib-rpcs 3 \
	>"$tmp/traced" 2>&1 &&
   head -n 1 "$tmp/trace" | grep -q '^# libhoma trace: [0-9]* events, 0 dropped$' &&
   grep -q ' send_enter 0$' "$tmp/trace" &&
   python3 "$tracer" "$tmp/trace" >"$tmp/phases" 2>&1 &&
   grep -q '^round trips of client thread [0-9]*: [1-9]' "$tmp/phases" &&
   grep -q '^  round trip ' "$tmp/phases"; then
	ok
else
	bad "HOMA_TRACE_FILE and trace_rpc.py"
	tail -n 5 "$tmp/traced" "$tmp/phases"
fi
port=$((port + 1))
HOMA_TRACE_FILE=/nonexistent/dir/trace "$tool" loopback --port "$port" \
	--proto homa --size 100 --duration 0.1 --calib-rpcs 3 >/dev/null \
	2>"$tmp/err"
grep -q 'libhoma: cannot write the trace to /nonexistent/dir/trace' \
	"$tmp/err" && ok || bad "an unwritable HOMA_TRACE_FILE"
# A bad HOMA_TRACE_EVENTS is reported and the default kept; trace_rpc.py
# refuses a file that is no trace (exit 2, a message naming it).
port=$((port + 1))
HOMA_TRACE_FILE="$tmp/trace2" HOMA_TRACE_EVENTS=many "$tool" loopback \
	--port "$port" --proto homa --size 100 --duration 0.1 --calib-rpcs 3 \
	>/dev/null 2>"$tmp/err"
grep -q 'libhoma: ignoring HOMA_TRACE_EVENTS=many (expected 1\.\.16777216)' \
	"$tmp/err" && grep -q ' recv_leave ' "$tmp/trace2" && ok ||
	bad "a bad HOMA_TRACE_EVENTS"
echo "not a trace" >"$tmp/notrace"
python3 "$tracer" "$tmp/notrace" >/dev/null 2>"$tmp/err"
[ $? -eq 2 ] && grep -q "^trace_rpc.py: $tmp/notrace: " "$tmp/err" && ok ||
	bad "trace_rpc.py on a file that is no trace"

check_finish
