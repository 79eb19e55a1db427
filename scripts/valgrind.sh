#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# valgrind.sh - run the unit tests and the end-to-end test programs under
# valgrind (memcheck): invalid reads and writes, uses of uninitialised
# values, bad frees and leaks (definite and possible) fail the run.
#
# Usage: scripts/valgrind.sh [-h|--help] [-B DIR] [-k] [PATTERN...]
#   -B DIR     build directory (default: build, as 'make test' uses); it is
#              configured and built first (cmake; a plain build without
#              sanitizers, which valgrind needs)
#   -k         keep going: run every program even after a failure
#   PATTERN    only the programs whose name contains one of the patterns
#              (for example: test_homa_pool smoke)
# Environment:
#   VALGRIND          the valgrind command (default: valgrind)
#   VALGRIND_EXTRA    extra valgrind options (for example --track-origins=yes)
#   VALGRIND_E2E      the end-to-end programs to run (default: see below;
#                     "all": every test_* program of DIR/tests/e2e)
#   VALGRIND_TIMEOUT  seconds one program may take (default 600)
#   HOMA_WERROR       ON to build with -Werror (as CI does)
#
# Programs: every unit test of the core, the datapath and the socket layer
# (DIR/tests/unit/test_*), of the tools' library (DIR/tests/tools/test_*)
# and of homa-rpc (DIR/tests/rpc/test_*), then these end-to-end programs,
# which take 2-20 s each under valgrind (the whole run 2-3 min):
#   test_socket_smoke test_e2e_rpc test_e2e_errors test_e2e_pool
#   test_e2e_threads test_e2e_loss_stress test_e2e_hostile test_rpc_e2e
#   (the last when homa-rpc is built)
# test_e2e_loss_stress runs 500 RPCs (LOSS_STRESS_RPCS, unless set) instead
# of 2000, test_e2e_hostile a slower and smaller flood (HOSTILE_PACKETS=5000
# HOSTILE_RATE=2000, unless set): valgrind runs one thread at a time and
# 20-50 times slower, and a flood at full rate starves the genuine RPCs of
# the test into timeouts (no memory error: the test's own liveness check).
# Not run: the shell-script tests (test_loss.sh needs root and namespaces,
# and valgrind would trace bash; the C programs it runs are here already),
# the simulator tests (tests/sim: the same core as the unit tests, for
# minutes) and the tools.
#
# Each program runs as
#   valgrind --error-exitcode=1 --leak-check=full --num-callers=30 \
#            --fair-sched=yes --suppressions=scripts/valgrind.supp <program>
# from its own build directory, within VALGRIND_TIMEOUT, with E2E_VALGRIND=1
# in its environment (tests that need threads to run at once skip); children
# it forks are checked too.  --fair-sched=yes hands the CPU to the program's
# runnable threads in turn: with valgrind's default lock, a thread that
# polls or sends without pause can keep the others from running for longer
# than an RPC's timeout, and its peer then seems dead.  Its output goes to
# DIR/valgrind/NAME.log.  The summary lists each program with its status
# and time, and ends with the lines of each failed program's log that say
# why.  scripts/valgrind.supp says what is suppressed and why (only
# glibc's thread vector of the library's detached progress thread, alive
# at exit).
#
# valgrind 3.19 (Debian 12) does not know epoll_pwait2 (syscall 441): it
# prints "WARNING: unhandled amd64-linux syscall: 441" and fails the call
# with ENOSYS, and the library's progress thread falls back to epoll_wait
# (millisecond timeouts), as on a kernel before 5.11.  The warning is
# expected, not an error.
#
# Exit status: 0 when every program passed (a program that skipped some of
# its tests, exit status 77, is listed so and passes); 1 when one failed (a
# valgrind error, a leak, a test failure or a timeout); 2 on a usage or
# build error.
#
# Requires: valgrind (Debian package valgrind), cmake, a C compiler,
# libcmocka-dev.
set -euo pipefail

usage() {
	sed -n '4,62p' "$0" | sed 's/^# \{0,1\}//'
}

build=build
keep_going=0
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	-B) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
	-k) keep_going=1; shift ;;
	--) shift; break ;;
	-*) echo "valgrind.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
done
patterns=("$@")

cd "$(dirname "$0")/.."
vg=${VALGRIND:-valgrind}
supp=$PWD/scripts/valgrind.supp
limit=${VALGRIND_TIMEOUT:-600}
case $limit in
'' | *[!0-9]*)
	echo "valgrind.sh: VALGRIND_TIMEOUT takes whole seconds, not '$limit'" >&2
	exit 2 ;;
esac
if ! command -v "$vg" >/dev/null 2>&1; then
	echo "valgrind.sh: $vg not found (apt-get install valgrind)" >&2
	exit 2
fi
if [ ! -f "$supp" ]; then
	echo "valgrind.sh: $supp is missing" >&2
	exit 2
fi

# A plain build (valgrind cannot run sanitized programs).
if grep -Eq '^HOMA_SANITIZE:[A-Z]*=.+' "$build/CMakeCache.txt" 2>/dev/null
then
	echo "valgrind.sh: $build is a sanitizer build; use another -B" >&2
	exit 2
fi
echo "valgrind.sh: building $build"
cmake -S . -B "$build" -DHOMA_WERROR="${HOMA_WERROR:-OFF}" >/dev/null ||
	exit 2
cmake --build "$build" -j "${JOBS:-2}" >/dev/null || exit 2

# wanted NAME - true when NAME matches a pattern (or none was given).
wanted() {
	local p
	[ ${#patterns[@]} -eq 0 ] && return 0
	for p in "${patterns[@]}"; do
		case $1 in *"$p"*) return 0 ;; esac
	done
	return 1
}

# failure_lines LOG - the errors and the test failures of LOG, to read
# without it (valgrind's reports, cmocka's failure lines and their source
# lines; the last lines of the log when none of these is there).
failure_lines() {
	local lines
	lines=$(grep -E '^==[0-9]+== +(Invalid|Conditional|Use of uninit|Syscall param|Mismatched|Source and dest|[0-9,]+ bytes in .* lost in loss record|at 0x|by 0x)|^\[  (FAILED|ERROR|TIMEOUT) *\]|^\[   LINE   \]|^ERROR' \
		"$1" | head -n 60 || true)
	[ -n "$lines" ] || lines=$(tail -n 20 "$1")
	printf '%s\n' "$lines" | sed 's/^/    | /'
}

programs=()
for p in "$build"/tests/unit/test_* "$build"/tests/tools/test_* \
	 "$build"/tests/rpc/test_*; do
	[ -x "$p" ] && [ -f "$p" ] && wanted "$(basename "$p")" &&
		programs+=("$p")
done
default_e2e="test_socket_smoke test_e2e_rpc test_e2e_errors test_e2e_pool
test_e2e_threads test_e2e_loss_stress test_e2e_hostile"
# homa-rpc's end-to-end program, unless it was left out (HOMA_RPC=OFF).
[ -x "$build/tests/e2e/test_rpc_e2e" ] && default_e2e="$default_e2e test_rpc_e2e"
if [ "${VALGRIND_E2E:-}" = all ]; then
	for p in "$build"/tests/e2e/test_*; do
		case $p in *.sh | *.py) continue ;; esac
		[ -x "$p" ] && [ -f "$p" ] && wanted "$(basename "$p")" &&
			programs+=("$p")
	done
else
	for name in ${VALGRIND_E2E:-$default_e2e}; do
		p="$build/tests/e2e/$name"
		wanted "$name" || continue
		if [ ! -x "$p" ]; then
			echo "valgrind.sh: $p is not a program" >&2
			exit 2
		fi
		programs+=("$p")
	done
fi
if [ ${#programs[@]} -eq 0 ]; then
	echo "valgrind.sh: no program to run in $build" >&2
	exit 2
fi

# Smaller loads for valgrind (see above), unless the caller chose.
export LOSS_STRESS_RPCS=${LOSS_STRESS_RPCS:-500}
export HOSTILE_PACKETS=${HOSTILE_PACKETS:-5000}
export HOSTILE_RATE=${HOSTILE_RATE:-2000}
export E2E_VALGRIND=1

logdir="$build/valgrind"
mkdir -p "$logdir"
rm -f "$logdir"/*.log
echo "valgrind.sh: ${#programs[@]} programs, logs in $logdir/"
results=()
reasons=()
failed=0
t_all=$(date +%s)
for p in "${programs[@]}"; do
	name=$(basename "$p")
	log="$logdir/$name.log"
	t0=$(date +%s)
	# shellcheck disable=SC2086  # VALGRIND_EXTRA is a list of options
	if (cd "$(dirname "$p")" &&
	    timeout -k 10 "$limit" "$vg" --error-exitcode=1 --leak-check=full \
		--num-callers=30 --fair-sched=yes --suppressions="$supp" \
		${VALGRIND_EXTRA:-} \
		"./$name") >"$log" 2>&1; then
		status=ok
	else
		rc=$?
		status="FAILED (exit status $rc; log: $log)"
		[ $rc = 124 ] && status="FAILED (killed after $limit s; log: $log)"
		[ $rc = 77 ] && status="ok, with tests SKIPPED (exit status 77; log: $log)"
		[ $rc = 77 ] || failed=1
	fi
	t1=$(date +%s)
	# One line per process (a forked child has its own); the worst one.
	summary=$(grep -E '== ERROR SUMMARY' "$log" |
		  sed -E 's/^==[0-9]+== //' | sort -t: -k2 -n -r | head -n 1 ||
		  true)
	results+=("$(printf '%-28s %5ss  %s  %s' "$name" $((t1 - t0)) \
		"$status" "$summary")")
	echo "${results[-1]}"
	if [ "${status%%,*}" != ok ]; then
		reasons+=("$name:" "$(failure_lines "$log")")
		printf '%s\n' "${reasons[-1]}"
		[ $keep_going -eq 0 ] && break
	fi
done

echo
echo "================ valgrind summary ================"
printf '%s\n' "${results[@]}"
echo "time: $(( $(date +%s) - t_all ))s"
if [ $failed -ne 0 ]; then
	# Again here, so that the end of the output says why.
	printf '%s\n' "${reasons[@]}"
	echo "valgrind: FAILED"
	exit 1
fi
echo "valgrind: ${#results[@]} programs, no error"
