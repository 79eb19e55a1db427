#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# check_homa_hostile.sh HOMA_HOSTILE - the homa-hostile command line (help,
# exit status 2 for bad options) and what it sends over UDP on loopback:
# a receiver (python3) counts the datagrams and hashes them; the tool's
# own count matches, every kind of packet is sent, and the same seed sends
# the same bytes in the same order (another seed other bytes); a homa-perf
# server survives its requests and keeps no RPC of them.
set -u
tool=${1:?usage: check_homa_hostile.sh HOMA_HOSTILE}
TOOL=$tool
TOOL_NAME=homa-hostile
. "$(dirname "$0")/../tool_check_lib.sh"

"$tool" --help >"$tmp/out" 2>&1 && grep -q '^usage: homa-hostile' "$tmp/out" &&
	grep -q -- '--transport udp|ip' "$tmp/out" && ok || bad "--help"

expect_usage_error
expect_usage_error --rate 100
expect_usage_error --target 10.0.0.1
expect_usage_error --target host:4000
expect_usage_error --target 127.0.0.1:0
expect_usage_error --target 127.0.0.1:4000 --rate 0
expect_usage_error --target 127.0.0.1:4000 --transport tcp
expect_usage_error --target 127.0.0.1:4000 --duration
expect_usage_error --target 127.0.0.1:4000 --bogus 1
expect_usage_error --target 127.0.0.1:4000 stray

# run SEED OUT - 400 packets (0.4 s at 1000/s) at a receiver on loopback;
# the receiver's "count sha256" into OUT.rx, the tool's line into OUT.tx.
run() {
	python3 - "$tool" "$1" "$2" <<'PY'
import hashlib, socket, subprocess, sys, threading
tool, seed, out = sys.argv[1:4]
rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:    # room for every packet even if this thread is slow (root)
    rx.setsockopt(socket.SOL_SOCKET, 33, 8 << 20)   # SO_RCVBUFFORCE
except OSError:
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
rx.bind(("127.0.0.1", 0))
rx.settimeout(0.2)
port = rx.getsockname()[1]
got = []
done = threading.Event()

def receive():
    while True:
        try:
            got.append(rx.recv(70000))
        except socket.timeout:
            if done.is_set():
                return

t = threading.Thread(target=receive)
t.start()
p = subprocess.run([tool, "--target", "127.0.0.1:%d" % port, "--rate",
                    "1000", "--duration", "0.4", "--seed", seed],
                   capture_output=True, text=True, timeout=60)
done.set()
t.join()
h = hashlib.sha256()
for d in got:    # bytes 0-3: the ports, the sockets' own (new each run)
    h.update(len(d).to_bytes(4, "big") + d[4:])
open(out + ".rx", "w").write("%d %s\n" % (len(got), h.hexdigest()))
open(out + ".tx", "w").write(p.stdout)
sys.exit(p.returncode)
PY
}

if run 5 "$tmp/a" && run 5 "$tmp/b" && run 6 "$tmp/c"; then ok; else
	bad "a run on loopback failed: $(cat "$tmp"/*.tx 2>/dev/null)"; fi
line=$(cat "$tmp/a.tx")
sent=$(sed -n 's/^homa-hostile: sent \([0-9]*\) packets over udp.*/\1/p' \
	<<<"$line")
rx=$(cut -d' ' -f1 "$tmp/a.rx")
if [ -n "$sent" ] && [ "$sent" = "$rx" ]; then ok; else
	bad "sent '$sent' (line: $line), received '$rx'"; fi
# The duration counts due times, not the clock: exactly 400 packets.
[ "$sent" = 400 ] && ok || bad "400 packets due, '$sent' sent"
for k in random truncated bad-type bad-data half-open request control; do
	grep -qE "(\(|, )$k [1-9]" <<<"$line" && ok || bad "no $k packet: $line"
done
grep -q 'send errors 0$' <<<"$line" && ok || bad "send errors: $line"
# The same seed sends the same packets, another seed others (but for the
# ports, those of sockets bound anew each run).
cmp -s "$tmp/a.rx" "$tmp/b.rx" && ok || bad "seed 5 twice: different packets"
cmp -s "$tmp/a.rx" "$tmp/c.rx" && bad "seeds 5 and 6 sent the same" || ok
# Against a homa-perf server on loopback (next to the tool, when built):
# 2,000 hostile requests, a quarter of them asking for 0 bytes
# (--ask-max 3), are all taken or dropped as from a wrong port, those
# taken answered (no homa_reply error), and none leaves an RPC behind
# once they stop.
perf=$(dirname "$tool")/homa-perf
if [ -x "$perf" ]; then
	port=$((20000 + $$ % 10000))
	"$perf" server --port "$port" --no-tcp --sample-every 0.2 --json \
		>"$tmp/srv.json" 2>"$tmp/srv.err" &
	spid=$!
	for _ in $(seq 100); do
		grep -q ready "$tmp/srv.err" && break
		sleep 0.1
	done
	"$tool" --target "127.0.0.1:$port" --kinds request --ask-max 3 \
		--rate 2000 --duration 1 --seed 3 >"$tmp/req.tx" || true
	# Wait for the state, not for a time: the server's samples until one
	# shows no RPC (the RPCs end on the server's timeouts; the bound is
	# only there so that a failure ends).
	n=0
	while [ "$n" -lt 300 ]; do
		last=$(grep '^sample' "$tmp/srv.err" | tail -n 1)
		[[ $last == *" num_rpcs=0" ]] && break
		sleep 0.1
		n=$((n + 1))
	done
	[[ $last == *" num_rpcs=0" ]] && ok ||
		bad "homa-perf server still holds RPCs: $last"
	kill -TERM "$spid"
	wait "$spid"
	grep -q '"homa_errors":0,' "$tmp/srv.json" && ok ||
		bad "homa-perf server: $(grep -o '"homa_errors":[0-9]*,"tcp_errors":[0-9]*,"homa_first_error":"[^"]*"' "$tmp/srv.json")"
	# Each request is taken or, when its header's source port is not
	# the datagram's (a quarter of them), dropped as from a wrong port.
	python3 - "$tmp/srv.json" <<'PY' && ok || bad "homa-perf server: requests lost"
import json, sys
c = json.load(open(sys.argv[1]))["counters"]
n = c["requests_received"] + c["drop_wrong_port"]
sys.exit(0 if n == 2000 else print("received + wrong port:", n) or 1)
PY
fi
check_finish
