# SPDX-License-Identifier: BSD-2-Clause
# tool_check_lib.sh - what the check_TOOL.sh scripts of tests/sim/ and
# tests/perf/ share, sourced by them: a temporary folder ($tmp, removed on exit), counting
# checks (ok, bad, check_finish), and the check of a command line that
# must be refused.  The sourcing script sets TOOL (the program) and
# TOOL_NAME (the prefix of its messages), and may set the array TOOL_ARGS
# (arguments put before those of every expect_usage_error call).

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*"; }

# expect_usage_error ARGS... - exit 2, a "TOOL_NAME:" message, no stdout.
expect_usage_error() {
	"$TOOL" ${TOOL_ARGS[@]+"${TOOL_ARGS[@]}"} "$@" >"$tmp/out" 2>"$tmp/err"
	local rc=$?
	if [ $rc -eq 2 ] && grep -q "^$TOOL_NAME: " "$tmp/err" &&
	   [ ! -s "$tmp/out" ]; then
		ok
	else
		bad "$TOOL_NAME $* -> exit $rc, stderr: $(head -c 200 "$tmp/err")"
	fi
}

# check_finish - print the counts; the status is 0 when nothing failed.
check_finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ]
}
