# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# install_util.sh - helpers shared by the tests/install/check_*.sh scripts;
# sourced, never run:  . "$(dirname "${BASH_SOURCE[0]}")/install_util.sh"
#
# failures    the number of failed checks so far (0 when sourced)
# fail MSG... prints "FAIL: MSG" to stderr and counts one failure
# ok MSG...   prints "ok: MSG" to stdout

failures=0
fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}
ok() {
	echo "ok: $*"
}

# install_args COUNT USAGE ARG... - the calling script's arguments ARG...:
# exits 2 with "usage: SCRIPT USAGE" on stderr unless there are exactly
# COUNT (1 or 2) of them; otherwise sets src to the absolute path of the
# first (the source tree) and, when COUNT is 2, build to that of the second
# (the build tree).
install_args() {
	local count=$1 usage=$2
	shift 2
	if [ $# -ne "$count" ]; then
		echo "usage: $0 $usage" >&2
		exit 2
	fi
	# shellcheck disable=SC2034  # src and build are the caller's
	src=$(cd "$1" && pwd)
	if [ "$count" -eq 2 ]; then
		# shellcheck disable=SC2034
		build=$(cd "$2" && pwd)
	fi
}

# require_tools TOOL... - exits 1 with "FAIL: TOOL is not installed (run
# 'make deps')" on stderr for the first TOOL that is not on the PATH.
require_tools() {
	local tool
	for tool in "$@"; do
		command -v "$tool" >/dev/null 2>&1 ||
			{ echo "FAIL: $tool is not installed (run 'make deps')" >&2; exit 1; }
	done
}

# install_finish NAME MSG - the end of a script: exits 1 with "NAME: N
# failure(s)" on stderr when fail was called N > 0 times; otherwise prints
# "NAME: MSG" and returns 0.
install_finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$1: $failures failure(s)" >&2
		exit 1
	fi
	echo "$1: $2"
}
