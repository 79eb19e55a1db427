#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# test_preload.sh - programs written for the Linux kernel Homa module's user
# API run unmodified on libhoma under LD_PRELOAD=libhoma_preload.so.
#
# The programs are tests/preload/kapi_*.c: they include only libc, the
# Linux headers and homa_kernel_uapi.h next to them (the kernel's constants
# and structs), and reference no libhoma function (checked here with nm).
# Each runs under the shim and must exit 0 and print its PASS line:
#   kapi_echo_server + kapi_echo_client   request/response with bpages, 1 B
#                        .. 1 MB, byte for byte, 8 in flight, private RPCs;
#                        IPv4, and IPv6 when the loopback has ::1; then
#                        kapi_rpc (1 MB three times, and ENOTCONN from a
#                        port nobody holds); the server ends on SIGTERM
#                        and HOMA_PRELOAD_STATS holds its counters
#   kapi_poll            epoll/poll/ppoll/select/pselect over Homa sockets,
#                        a pipe and a UDP socket in one set; a private
#                        response never makes a socket readable (poll with
#                        a 200 ms timeout returns 0, recvmsg(id) then takes
#                        it), a shared one next to it does and recvmsg(0)
#                        takes only the shared one; edge-triggered epoll
#                        (EPOLLIN|EPOLLET, EPOLLIN|EPOLLOUT|EPOLLET): an
#                        edge per new response, none lost while reading
#   kapi_fork            children that close the Homa descriptors, exec,
#                        system(), _exit; the parent's RPCs go on
#   kapi_abort           HOMAIOCABORT (also of private RPCs: not readable,
#                        reported to recvmsg(id) only) and HOMAIOCINFO
#   kapi_errors          the kernel's errnos; files, pipes, UDP unaffected
#   kapi_dup             dup, dup2, dup3, F_DUPFD, close, O_NONBLOCK
#   kapi_region          a region unmapped (then the socket closed) or made
#                        read-only while a response comes: EFAULT, no crash;
#                        writable again, the socket works
#   kapi_wmem            the send-memory limit (run with HOMA_WMEM_MAX=100000):
#                        MSG_DONTWAIT and O_NONBLOCK sends fail with EAGAIN
#                        at the limit, POLLOUT/EPOLLOUT gone; a blocking
#                        sendmsg waits until HOMAIOCABORT frees memory, and
#                        is woken by shutdown with ESHUTDOWN
# The echo pair and the single-process programs run over each transport
# of PRELOAD_TRANSPORTS: UDP, and raw IP (protocol 146) when the process has
# CAP_NET_RAW (as root, as in CI).
# It also checks that the shim exports the calls it interposes, that
# programs which never touch Homa (sh, tr, cat, ls) behave the same under it,
# and that without the shim the programs do fail (no kernel module here).
#
# When libhoma_preload.so was built with a sanitizer (make asan / make tsan)
# the sanitizer's runtime is preloaded first, as it must come first.
#
# Environment (CTest sets the first; all optional):
#   HOMA_BUILD_DIR          the build folder (default: ../.. of the current
#                           folder, which CTest makes build/tests/e2e)
#   PRELOAD_TRANSPORTS      HOMA_TRANSPORT values to run the programs with
#                           (default "udp ip" with CAP_NET_RAW, else "udp"
#                           and a note saying raw IP did not run)
#   HOMA_TEST_REQUIRE_RAW   1: without CAP_NET_RAW, fail instead of leaving
#                           raw IP out (CI sets it)
#   PRELOAD_TIMEOUT         seconds one program may take (default 120)
#
# Prints one line per check ("ok ..." or "FAIL ...") and a summary; exits 1
# when any check failed, else 77 (CTest: skipped) when raw IP did not run
# for want of CAP_NET_RAW, else 0.

set -u

build_dir=${HOMA_BUILD_DIR:-$(cd ../.. 2>/dev/null && pwd)}
shim=$build_dir/libhoma_preload.so
ex=$build_dir/tests/preload
# has_cap_net_raw - whether this shell's effective set holds CAP_NET_RAW
# (capability 13), which HOMA_TRANSPORT=ip needs.
has_cap_net_raw() {
	local eff
	eff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status 2>/dev/null)
	[ -n "$eff" ] && (( (0x$eff >> 13) & 1 ))
}
raw_note=""
if [ -n "${PRELOAD_TRANSPORTS:-}" ]; then
	transports=$PRELOAD_TRANSPORTS
elif has_cap_net_raw; then
	transports="udp ip"
else
	transports=udp
	raw_note="no CAP_NET_RAW (run as root): the programs ran over UDP only, raw IP did NOT run"
fi
limit=${PRELOAD_TIMEOUT:-120}
log_dir=$(mktemp -d "${TMPDIR:-/tmp}/homa-preload.XXXXXX")
passed=0
failed=0
server_pid=""

cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	if [ "$failed" -eq 0 ]; then
		rm -rf "$log_dir"
	else
		echo "logs kept in $log_dir"
	fi
}
trap cleanup EXIT

ok() { echo "ok   $*"; passed=$((passed + 1)); }
fail() { echo "FAIL $*"; failed=$((failed + 1)); }

echo "transports: $transports"
if [ -n "$raw_note" ]; then
	if [ "${HOMA_TEST_REQUIRE_RAW:-0}" = 1 ]; then
		fail "$raw_note (HOMA_TEST_REQUIRE_RAW=1)"
	else
		echo "NOTE: $raw_note"
	fi
fi

if [ ! -f "$shim" ]; then
	echo "FAIL no $shim (is src/preload/ empty?)"
	exit 1
fi

# The sanitizer runtime the shim needs, if any, goes first.
runtime=$(ldd "$shim" 2>/dev/null | awk '/lib(a|t)san\.so/ { print $3 }')
preload="${runtime:+$runtime }$shim"

# Ports: a base per run, so reruns and other tests do not collide.
base=$((10000 + ($$ * 7) % 20000))

# run NAME LOG CMD... - run under the shim with a time limit.
run() {
	local name=$1 log=$2
	shift 2
	LD_PRELOAD="$preload" timeout "$limit" "$@" >"$log" 2>&1
}

# expect_pass NAME LOG STATUS PATTERN - status 0 and PATTERN in the log.
expect_pass() {
	local name=$1 log=$2 status=$3 pattern=$4

	if [ "$status" -eq 0 ] && grep -q -- "$pattern" "$log"; then
		ok "$name: $(grep -- "$pattern" "$log" | head -n 1)"
	else
		fail "$name: exit status $status"
		sed 's/^/     | /' "$log" | tail -n 20
	fi
}

# 1. The shim interposes the calls of the kernel API.
missing=""
syms=$(nm -D --defined-only "$shim" 2>/dev/null | awk '{ print $3 }')
for s in socket bind setsockopt getsockopt sendmsg recvmsg ioctl close \
	 dup dup2 dup3 fcntl read write send recv sendto recvfrom shutdown \
	 getsockname close_range; do
	echo "$syms" | grep -qx "$s" || missing="$missing $s"
done
if [ -z "$missing" ]; then
	ok "libhoma_preload.so exports the interposed calls"
else
	fail "libhoma_preload.so does not export:$missing"
fi

# 2. The programs use the kernel API only: no libhoma function.
for prog in "$ex"/kapi_*; do
	[ -x "$prog" ] || continue
	used=$(nm -D --undefined-only "$prog" 2>/dev/null |
	       awk '{ print $2 }' | grep '^homa_' | tr '\n' ' ')
	if [ -n "$used" ]; then
		fail "$(basename "$prog") calls libhoma directly: $used"
	fi
done
count=$(ls "$ex"/kapi_* 2>/dev/null | wc -l)
if [ "$count" -ge 9 ]; then
	ok "$count kernel-API programs, none calling libhoma directly"
else
	fail "expected 9 kapi_* programs in $ex, found $count"
fi

# 3. Without the shim they fail: the kernel has no Homa here.
if grep -qw '^homa' /proc/modules 2>/dev/null; then
	echo "skip the no-shim check: the kernel Homa module is loaded"
else
	timeout "$limit" "$ex/kapi_errors" $base >"$log_dir/noshim.log" 2>&1
	status=$?
	if [ "$status" -ne 0 ] && grep -q "Protocol not supported" \
	       "$log_dir/noshim.log"; then
		ok "without the shim socket(IPPROTO_HOMA) fails (status $status)"
	else
		fail "kapi_errors without the shim: status $status"
	fi
fi

# 4. The echo pair, per transport and address family.
families=4
if grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 \
	2>/dev/null; then
	families="4 6"
fi
port=$base
for transport in $transports; do
	for fam in $families; do
		port=$((port + 1))
		name="echo $transport IPv$fam"
		slog="$log_dir/server-$transport-$fam.log"
		clog="$log_dir/client-$transport-$fam.log"
		HOMA_TRANSPORT=$transport LD_PRELOAD="$preload" \
			HOMA_PRELOAD_STATS="$log_dir/stats-$transport-$fam" \
			timeout "$limit" "$ex/kapi_echo_server" $port $fam \
			>"$slog" 2>&1 &
		server_pid=$!
		for _ in $(seq 100); do
			grep -q "serving port" "$slog" && break
			kill -0 "$server_pid" 2>/dev/null || break
			sleep 0.1
		done
		if ! grep -q "serving port" "$slog"; then
			fail "$name: the server did not start"
			sed 's/^/     | /' "$slog" | tail -n 10
			kill "$server_pid" 2>/dev/null
			wait "$server_pid" 2>/dev/null
			server_pid=""
			continue
		fi
		# The server's raw protocol-146 socket (ss -w), there over
		# raw IP only.  Only this server's (the child of timeout):
		# other runs may have their own servers meanwhile.
		if command -v ss >/dev/null 2>&1; then
			srv_child=$(pgrep -P "$server_pid" | head -n 1)
			raw=$(ss -Hwap 2>/dev/null |
			      grep -c "ipproto-146 .*\"kapi_echo_serve\",pid=${srv_child:-none},")
			if { [ "$transport" = ip ] && [ "$raw" -lt 1 ]; } ||
			   { [ "$transport" = udp ] && [ "$raw" -ne 0 ]; }; then
				fail "$name: the server has $raw raw" \
					"protocol-146 sockets (ss -w)"
			fi
		fi
		HOMA_TRANSPORT=$transport run "$name" "$clog" \
			"$ex/kapi_echo_client" $port $fam 60
		status=$?
		expect_pass "$name" "$clog" $status "kapi_echo_client: PASS"
		# kapi_rpc: 1 MB three times, then a port nobody holds.
		HOMA_TRANSPORT=$transport run "$name rpc" "$clog.rpc" \
			"$ex/kapi_rpc" $port $fam 1000000 3
		expect_pass "kapi_rpc $transport IPv$fam" "$clog.rpc" $? \
			"kapi_rpc: PASS 3 RPCs"
		HOMA_TRANSPORT=$transport run "$name none" "$clog.none" \
			"$ex/kapi_rpc" $((port + 5000)) $fam 100 1 ENOTCONN
		expect_pass "kapi_rpc $transport IPv$fam, no server" \
			"$clog.none" $? "kapi_rpc: PASS failed with ENOTCONN"
		# SIGTERM: the server closes its socket and exits 0; with
		# HOMA_PRELOAD_STATS the shim wrote the socket's counters.
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
		status=$?
		server_pid=""
		if grep -q FAIL "$slog"; then
			fail "$name: server: $(grep FAIL "$slog" | head -n 1)"
		fi
		expect_pass "$name: the server ends on SIGTERM" "$slog" \
			$status "kapi_echo_server: served"
		if grep -q "^homa_preload_stats pid=[0-9]* port=$port .*requests_received=[1-9]" \
			"$log_dir/stats-$transport-$fam" 2>/dev/null; then
			ok "$name: HOMA_PRELOAD_STATS holds the server's counters"
		else
			fail "$name: HOMA_PRELOAD_STATS: no line for port $port" \
				"with requests_received"
			sed 's/^/     | /' "$log_dir/stats-$transport-$fam" 2>/dev/null
		fi
	done
done

# 5. The single-process programs, per transport.
for transport in $transports; do
	for prog in poll fork abort errors dup wmem region; do
		port=$((port + 1))
		log="$log_dir/$prog-$transport.log"
		# kapi_wmem fills the send memory: a small limit keeps it
		# quick (the others keep the default).
		limit_env=HOMA_WMEM_MAX=100000000
		[ "$prog" = wmem ] && limit_env=HOMA_WMEM_MAX=100000
		HOMA_TRANSPORT=$transport run "$prog" "$log" \
			env "$limit_env" "$ex/kapi_$prog" $port
		expect_pass "kapi_$prog $transport" "$log" $? \
			"kapi_$prog: PASS"
	done
	if ! grep -q "child atexit ran" "$log_dir/fork-$transport.log"; then
		fail "kapi_fork $transport: the child's atexit handler did" \
			"not run"
	fi
done

# 6. Programs that never use Homa are not disturbed.
tmpf="$log_dir/plain.txt"
printf 'line one\nline two\n' >"$tmpf"
out=$(LD_PRELOAD="$preload" sh -c "tr a-z A-Z <'$tmpf' | grep TWO" 2>&1)
out2=$(LD_PRELOAD="$preload" cat "$tmpf" 2>&1)
LD_PRELOAD="$preload" ls / >/dev/null 2>&1
ls_status=$?
if [ "$out" = "LINE TWO" ] && [ "$out2" = "$(cat "$tmpf")" ] &&
   [ "$ls_status" -eq 0 ]; then
	ok "sh, tr, grep, cat, ls behave the same under the shim"
else
	fail "plain programs under the shim: '$out' / '$out2' / ls $ls_status"
fi

echo "preload: $passed passed, $failed failed (transports: $transports)"
[ "$failed" -eq 0 ] || exit 1
if [ -n "$raw_note" ]; then
	echo "SKIP: $raw_note"
	exit 77
fi
exit 0
