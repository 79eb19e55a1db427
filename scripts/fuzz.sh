#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# fuzz.sh - build the libFuzzer targets with clang and run each one for a
# while on a temporary copy of its seed corpus ('make fuzz' runs it).
#
# Usage: scripts/fuzz.sh [-h|--help] [-B DIR] [-t SECONDS] [NAME...]
#   -B DIR      build directory (default: build-fuzz); it is configured
#               with -DHOMA_FUZZ=ON and the fuzzers are built there first
#   -t SECONDS  how long each fuzzer runs (default: 30)
#   NAME        only these fuzzers (fuzz_NAME.c or NAME, e.g. ip4);
#               default: every fuzz/fuzz_*.c
# Environment:
#   CC           the compiler (default: clang; libFuzzer needs clang)
#   CMAKE        the cmake command (default: cmake)
#   CMAKE_ARGS   extra arguments of the configure step
#   HOMA_WERROR  ON to build with -Werror (as CI does)
#   JOBS         parallel build jobs (default: 2)
#
# Each fuzz/fuzz_NAME.c runs on a copy of fuzz/corpus/NAME/ (new inputs
# are not written into the repository; a missing corpus means an empty
# start, with a note) with -timeout=10 -rss_limit_mb=2048, its output in
# DIR/artifacts/fuzz_NAME.log; crashing inputs are kept in DIR/artifacts/
# (fuzz_NAME-crash-...).  Per fuzzer it prints "=== fuzz_NAME: ok" with
# libFuzzer's final statistics, or the end of its log and
# "=== fuzz_NAME: FAILED (log: ...)"; the last line names the failed ones
# (.ci/run collects the FAILED lines).
#
# Exit status: 0 when every fuzzer ran its time without a finding; 1 when
# one failed (a crash, a sanitizer report, a timeout or leak of libFuzzer);
# 2 on a usage or build error (no clang, no fuzz target).
set -euo pipefail

usage() {
	sed -n '4,31p' "$0" | sed 's/^# \{0,1\}//'
}

build=build-fuzz
seconds=30
while [ $# -gt 0 ]; do
	case $1 in
	-h | --help) usage; exit 0 ;;
	-B) [ $# -ge 2 ] || { usage >&2; exit 2; }; build=$2; shift 2 ;;
	-t) [ $# -ge 2 ] || { usage >&2; exit 2; }; seconds=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "fuzz.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
done
case $seconds in
'' | *[!0-9]*)
	echo "fuzz.sh: -t takes whole seconds, not '$seconds'" >&2
	exit 2 ;;
esac

cd "$(dirname "$0")/.."
cc=${CC:-clang}
cmake=${CMAKE:-cmake}
if ! command -v "$cc" >/dev/null 2>&1; then
	echo "error: make fuzz needs clang ($cc not found); run 'make deps'." >&2
	exit 2
fi

# The fuzzers to run: those named, else every fuzz/fuzz_*.c.
sources=()
if [ $# -eq 0 ]; then
	for src in fuzz/fuzz_*.c; do
		[ -f "$src" ] && sources+=("$src")
	done
	if [ ${#sources[@]} -eq 0 ]; then
		echo "error: no fuzz targets: fuzz/fuzz_*.c matches no file." >&2
		exit 2
	fi
else
	for name in "$@"; do
		name=${name%.c}
		name=fuzz_${name#fuzz_}
		if [ ! -f "fuzz/$name.c" ]; then
			echo "fuzz.sh: no fuzz target fuzz/$name.c" >&2
			exit 2
		fi
		sources+=("fuzz/$name.c")
	done
fi

# shellcheck disable=SC2086  # CMAKE_ARGS: several arguments, split on purpose
set -x
CC=$cc "$cmake" -S . -B "$build" -DHOMA_FUZZ=ON \
	-DHOMA_WERROR="${HOMA_WERROR:-OFF}" ${CMAKE_ARGS:-} || exit 2
"$cmake" --build "$build" -j "${JOBS:-2}" --target fuzzers || exit 2
{ set +x; } 2>/dev/null

# run_one SRC - run the fuzzer of fuzz/SRC on a copy of its corpus;
# the status is 0 when it found nothing.
run_one() {
	local name corpus work status=0
	name=$(basename "$1" .c)
	corpus=fuzz/corpus/${name#fuzz_}
	work=$(mktemp -d "${TMPDIR:-/tmp}/homa-$name.XXXXXX")
	if [ -d "$corpus" ]; then
		cp -R "$corpus/." "$work/"
	else
		echo "note: $corpus does not exist; $name starts from an empty corpus"
	fi
	echo "=== $name: $seconds s, corpus $corpus ($(ls "$work" | wc -l) inputs)"
	if "$build/fuzz/$name" -max_total_time="$seconds" \
		-timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/artifacts/$name-" \
		"$work" >"$build/artifacts/$name.log" 2>&1; then
		tail -n 12 "$build/artifacts/$name.log" |
			grep -E '^(stat::|Done|#[0-9]+.*DONE)' || true
		echo "=== $name: ok"
	else
		tail -n 60 "$build/artifacts/$name.log"
		echo "=== $name: FAILED (log: $build/artifacts/$name.log)"
		status=1
	fi
	rm -rf "$work"
	return $status
}

mkdir -p "$build/artifacts"
failed=""
ran=0
for src in "${sources[@]}"; do
	run_one "$src" || failed="$failed $(basename "$src" .c)"
	ran=$((ran + 1))
done
if [ -n "$failed" ]; then
	echo "fuzz: $ran fuzzers run, failed:$failed"
	exit 1
fi
echo "fuzz: $ran fuzzers run for $seconds s each, no failure"
