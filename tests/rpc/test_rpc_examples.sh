#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_rpc_examples.sh - the programs of examples/rpc end to end on
# loopback: echo_server with echo_client (the stub call and the call with
# a deadline and metadata), kv_server with kv_client (put, replace, get,
# delete, and NOT_FOUND for a missing key, exit status 1), a client of a
# server that is gone (UNAVAILABLE), and the servers' graceful stop on
# SIGTERM with echo_server's counters.  Nothing here is timed; each wait
# for a server to listen or stop has a 30 s guard.
#
# Environment (set by CTest): HOMA_BUILD_DIR, the build folder.
set -uo pipefail

build=${HOMA_BUILD_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../build" && pwd)}
ex=$build/examples/rpc
tmp=$(mktemp -d "${TMPDIR:-/tmp}/homa-rpc-examples.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
failed=0

fail() {
	echo "FAIL: $*"
	failed=1
}

for p in echo_server echo_client kv_server kv_client; do
	[ -x "$ex/$p" ] || { echo "FAIL: $ex/$p missing (build first)"; exit 1; }
done

# start NAME LOG - start server NAME on a free port (20000 + pid % 5000,
# then the next ones while the port is taken); sets port and pid.
start() {
	local name=$1 log=$2 i
	for i in $(seq 0 40); do
		port=$((20000 + ($$ + i * 7) % 5000))
		"$ex/$name" "$port" >"$log" 2>&1 &
		pid=$!
		for _ in $(seq 300); do
			grep -q '^serving' "$log" && { pids+=("$pid"); return 0; }
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		grep -q 'in use' "$log" || break
	done
	cat "$log"
	echo "FAIL: $name did not start"
	exit 1
}

# stop PID - SIGTERM, and wait for the graceful stop.
stop() {
	kill -TERM "$1"
	for _ in $(seq 300); do
		kill -0 "$1" 2>/dev/null || { wait "$1"; return $?; }
		sleep 0.1
	done
	fail "server $1 did not stop on SIGTERM"
	return 1
}

# expect WANT_RC WANT_TEXT CMD... - run CMD, check its status and output.
expect() {
	local want_rc=$1 want=$2 out rc
	shift 2
	out=$("$@" 2>&1)
	rc=$?
	if [ "$rc" -ne "$want_rc" ] || ! grep -qF -- "$want" <<<"$out"; then
		fail "$* -> exit $rc, output: $out (want exit $want_rc and '$want')"
	else
		echo "ok    $(basename "$1") ${*:2} -> $(tr '\n' ' ' <<<"$out")"
	fi
}

start echo_server "$tmp/echo.log"
echo_port=$port echo_pid=$pid
expect 0 "reply: hello" "$ex/echo_client" "$echo_port" hello
expect 0 "with a 100 ms deadline: hello" "$ex/echo_client" "$echo_port" hello

start kv_server "$tmp/kv.log"
kv_port=$port kv_pid=$pid
expect 1 "NOT_FOUND" "$ex/kv_client" "$kv_port" get fruit
expect 0 "created" "$ex/kv_client" "$kv_port" put fruit apple
expect 0 "replaced" "$ex/kv_client" "$kv_port" put fruit pear
expect 0 "pear" "$ex/kv_client" "$kv_port" get fruit
expect 0 "deleted" "$ex/kv_client" "$kv_port" delete fruit
expect 1 "NOT_FOUND" "$ex/kv_client" "$kv_port" delete fruit

stop "$echo_pid" || fail "echo_server exited with status $?"
grep -q '^calls: 4 started, 4 ok, 0 failed' "$tmp/echo.log" ||
	fail "echo_server's counters: $(tail -n 1 "$tmp/echo.log")"
stop "$kv_pid" || fail "kv_server exited with status $?"
expect 1 "UNAVAILABLE" "$ex/echo_client" "$echo_port" gone

[ "$failed" -eq 0 ] && echo "PASS: examples/rpc" || echo "FAIL: examples/rpc"
exit "$failed"
