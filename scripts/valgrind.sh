#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# valgrind.sh - run the unit tests and the end-to-end smoke test under
# valgrind (memcheck): invalid reads and writes, uses of uninitialised
# values, bad frees and leaks fail the run.
#
# Usage: scripts/valgrind.sh [-h|--help] [-B DIR] [-k] [PATTERN...]
#   -B DIR     build directory (default: build, as 'make test' uses); it is
#              configured and built first (cmake; a plain build without
#              sanitizers, which valgrind needs)
#   -k         keep going: run every program even after a failure
#   PATTERN    only the programs whose name contains one of the patterns
#              (for example: test_homa_pool smoke)
# Environment:
#   VALGRIND        the valgrind command (default: valgrind)
#   VALGRIND_EXTRA  extra valgrind options (for example --track-origins=yes)
#   HOMA_WERROR     ON to build with -Werror (as CI does)
#
# Each program runs as
#   valgrind --error-exitcode=1 --leak-check=full \
#            --suppressions=DIR/valgrind/homa.supp <program>
# from its own build directory (the unit tests from DIR/tests/unit, the
# smoke test from DIR/tests/e2e); its output goes to DIR/valgrind/NAME.log.
# The summary lists each program with its status and time.  The one
# suppression: the library's progress thread is detached and lives as long
# as the process, so the thread-local block pthread_create gave it is still
# in use ("possibly lost") at exit.
#
# Exit status: 0 when every program passed; 1 when one failed (a valgrind
# error, a leak or a test failure); 2 on a usage or build error.
#
# Requires: valgrind (Debian package valgrind), cmake, a C compiler,
# libcmocka-dev.
set -euo pipefail

usage() {
	sed -n '4,34p' "$0" | sed 's/^# \{0,1\}//'
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
if ! command -v "$vg" >/dev/null 2>&1; then
	echo "valgrind.sh: $vg not found (apt-get install valgrind)" >&2
	exit 2
fi

# A plain build (valgrind cannot run sanitized programs).
if grep -Eq '^HOMA_SANITIZE:[A-Z]*=.+' "$build/CMakeCache.txt" 2>/dev/null
then
	echo "valgrind.sh: $build is a sanitizer build; use another -B" >&2
	exit 2
fi
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

programs=()
for p in "$build"/tests/unit/test_*; do
	[ -x "$p" ] && [ -f "$p" ] && wanted "$(basename "$p")" &&
		programs+=("$p")
done
smoke="$build/tests/e2e/test_socket_smoke"
[ -x "$smoke" ] && wanted "$(basename "$smoke")" && programs+=("$smoke")
if [ ${#programs[@]} -eq 0 ]; then
	echo "valgrind.sh: no program to run in $build" >&2
	exit 2
fi

logdir="$build/valgrind"
mkdir -p "$logdir"
supp="$logdir/homa.supp"
cat >"$supp" <<'EOF'
{
   homa-progress-thread-tls
   Memcheck:Leak
   match-leak-kinds: possible
   fun:calloc
   ...
   fun:_dl_allocate_tls
   ...
   fun:pthread_create*
   fun:progress_spawn
}
EOF
results=()
failed=0
for p in "${programs[@]}"; do
	name=$(basename "$p")
	log="$logdir/$name.log"
	t0=$(date +%s)
	# shellcheck disable=SC2086  # VALGRIND_EXTRA is a list of options
	if (cd "$(dirname "$p")" && "$vg" --error-exitcode=1 --leak-check=full \
		--suppressions="$(realpath "$supp")" ${VALGRIND_EXTRA:-} \
		"./$name") >"$log" 2>&1; then
		status=ok
	else
		status="FAILED (log: $log)"
		failed=1
	fi
	t1=$(date +%s)
	summary=$(grep -E 'ERROR SUMMARY' "$log" | tail -n 1 |
		  sed -E 's/^==[0-9]+== //' || true)
	results+=("$(printf '%-28s %5ss  %s  %s' "$name" $((t1 - t0)) \
		"$status" "$summary")")
	echo "${results[-1]}"
	if [ $failed -ne 0 ] && [ $keep_going -eq 0 ]; then
		break
	fi
done

echo
echo "================ valgrind summary ================"
printf '%s\n' "${results[@]}"
if [ $failed -ne 0 ]; then
	echo "valgrind: FAILED"
	exit 1
fi
echo "valgrind: ${#results[@]} programs, no error"
