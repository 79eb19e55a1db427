#!/usr/bin/env bash
# check_homa_sim_installed.sh SOURCE_DIR BUILD_DIR - the installed tools
# work on their own, away from the source tree.
#
# 1. 'cmake --install' into a temporary prefix puts the workloads in
#    share/libhoma/workloads (identical to workloads/) and a manual page
#    share/man/man1/NAME.1 for every program of bin/.
# 2. <prefix>/bin/homa-sim --messages 200 --json, run from an empty folder
#    with no HOMA_SIM_WORKLOAD_DIR, completes every message: W1-W5 are built
#    in.  With --workload-dir pointing at the installed copies the JSON is
#    the same, byte for byte; an installed .cdf file works as --workload.
# 3. The command-line rules of the tools: an option whose value is missing
#    (the next argument is another option) is refused with "option --NAME
#    needs a value" and exit status 2, nothing on stdout; an unknown
#    workload names the valid ones.
set -euo pipefail
# shellcheck source=tests/install/install_util.sh
. "$(dirname "${BASH_SOURCE[0]}")/install_util.sh"

install_args 2 "SOURCE_DIR BUILD_DIR" "$@"
require_tools python3

tmp=$(mktemp -d "${TMPDIR:-/tmp}/homa-sim-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# --- 1: the installation ------------------------------------------------------
unset DESTDIR MAKEFLAGS MFLAGS MAKELEVEL
if ! cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log" >&2
	echo "FAIL: cmake --install $build --prefix $prefix failed" >&2
	exit 1
fi
for f in "$src"/workloads/*.cdf; do
	name=$(basename "$f")
	cmp -s "$f" "$prefix/share/libhoma/workloads/$name" &&
		ok "share/libhoma/workloads/$name installed" ||
		fail "share/libhoma/workloads/$name missing or different"
done
for f in "$src"/tools/*.c; do
	prog=$(basename "$f" .c | tr _ -)
	[ -e "$prefix/share/man/man1/$prog.1" ] &&
		ok "share/man/man1/$prog.1 installed" ||
		fail "no manual page share/man/man1/$prog.1 for bin/$prog"
done

# --- 2: homa-sim from an empty folder ------------------------------------------
sim=$prefix/bin/homa-sim
[ -x "$sim" ] || { echo "FAIL: $sim not installed" >&2; exit 1; }
mkdir "$tmp/empty"
cd "$tmp/empty"
unset HOMA_SIM_WORKLOAD_DIR

# completed FILE MESSAGES - the JSON in FILE completed every message.
completed() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
want = int(sys.argv[2])
assert doc["messages"] == want, ("messages", doc["messages"])
assert doc["completed"] == want, ("completed", doc["completed"], want)
EOF
}

if "$sim" --messages 200 --json >"$tmp/builtin.json" 2>"$tmp/err" &&
	completed "$tmp/builtin.json" 200; then
	ok "homa-sim --messages 200 --json: 200 completed (built-in W4)"
else
	fail "homa-sim --messages 200 --json from $tmp/empty: $(head -c 300 "$tmp/err")"
fi
"$sim" --messages 200 --json --workload-dir "$prefix/share/libhoma/workloads" \
	>"$tmp/files.json" 2>"$tmp/err" &&
	cmp -s "$tmp/builtin.json" "$tmp/files.json" &&
	ok "--workload-dir with the installed files: the same JSON" ||
	fail "--workload-dir with the installed files differs from built-in"
"$sim" --messages 100 --json --workload \
	"$prefix/share/libhoma/workloads/w2.cdf" >"$tmp/w2.json" 2>"$tmp/err" &&
	completed "$tmp/w2.json" 100 &&
	ok "--workload FILE (installed w2.cdf)" ||
	fail "--workload FILE: $(head -c 300 "$tmp/err")"
for w in w1 w2 w3 w5; do
	"$sim" --messages 50 --json --workload "$w" >"$tmp/$w.json" \
		2>"$tmp/err" && completed "$tmp/$w.json" 50 &&
		ok "--workload $w (built in)" ||
		fail "--workload $w: $(head -c 300 "$tmp/err")"
done

# --- 3: command-line rules ----------------------------------------------------
# usage_error PROG PATTERN ARGS... - exit 2, PATTERN in stderr, no stdout.
usage_error() {
	local prog=$1 pattern=$2 rc=0
	shift 2
	"$prefix/bin/$prog" "$@" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 2 ] && grep -q -- "$pattern" "$tmp/err" &&
	   [ ! -s "$tmp/out" ]; then
		ok "$prog $*: exit 2, '$pattern'"
	else
		fail "$prog $* -> exit $rc, stderr: $(head -c 200 "$tmp/err")"
	fi
}
usage_error homa-sim "option --workload needs a value" --workload --messages 10
usage_error homa-sim "option --messages needs a value" --messages --json
usage_error homa-sim "option --messages needs a value" --messages=--json
usage_error homa-sim "option --seed needs a value" --seed
usage_error homa-sim "w1\.\.w5" --workload w9
usage_error homa-sim "w1\.\.w5" --workload /nonexistent.cdf
usage_error homa-sim "w4.cdf" --workload-dir "$tmp/empty"
usage_error homa-perf "option --workload needs a value" \
	loopback --workload --size 10
usage_error homa-perf "option --size needs a value" loopback --size
usage_error homa-perf "option --echo takes no value" loopback --size 1 \
	--echo=1
usage_error homa-perf "w1\.\.w5" loopback --workload w9
usage_error homa-demo "option --rounds needs a value" --rounds --json
usage_error homa-demo "option --rounds needs a value" --rounds
usage_error homa-demo "unknown option" --bogus
usage_error homa-faults "option needs a value: '--seed'" --seed --verbose
usage_error homa-faults "option needs a value: '--hosts'" --hosts

install_finish check_homa_sim_installed "all passed"
