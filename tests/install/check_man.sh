#!/usr/bin/env bash
# check_man.sh SOURCE_DIR - check the manual pages in man/.
#
# - Every function declared in include/homa.h has a page man/<function>.3,
#   and every program tools/NAME.c (installed as bin/NAME with _ as -) a
#   page man/NAME.1 with an EXIT STATUS section.
# - A link page (".so man3/x.3") points at a page that exists.
# - Every other page has a .TH line naming itself and its section, a NAME
#   section that names it, and renders with groff -man -ww and with man -l
#   without a single warning.
set -euo pipefail
# shellcheck source=tests/install/install_util.sh
. "$(dirname "${BASH_SOURCE[0]}")/install_util.sh"

install_args 1 SOURCE_DIR "$@"
require_tools groff man

# A tree like share/man, so that ".so man3/x.3" resolves as when installed.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/homa-man.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/man1" "$tmp/man3" "$tmp/man7"
pages=0
for f in "$src"/man/*.1 "$src"/man/*.3 "$src"/man/*.7; do
	[ -e "$f" ] || continue
	cp "$f" "$tmp/man${f##*.}/"
	pages=$((pages + 1))
done
[ "$pages" -gt 0 ] || { echo "FAIL: no manual pages in $src/man" >&2; exit 1; }
[ -e "$tmp/man7/homa.7" ] || fail "man/homa.7 is missing"

for fn in $(grep -oE '^[a-z_][a-z0-9_ ]*[[:space:]*]+homa_[a-z0-9_]+\(' \
	"$src/include/homa.h" | grep -oE 'homa_[a-z0-9_]+' | sort -u); do
	[ -e "$tmp/man3/$fn.3" ] || fail "homa.h declares $fn but man/$fn.3 is missing"
done

for f in "$src"/tools/*.c; do
	[ -e "$f" ] || continue
	prog=$(basename "$f" .c | tr _ -)
	[ -e "$tmp/man1/$prog.1" ] ||
		fail "bin/$prog is installed but man/$prog.1 is missing"
done

cd "$tmp"
for page in man1/*.1 man3/*.3 man7/*.7; do
	[ -e "$page" ] || continue
	name=$(basename "$page")
	section=${name##*.}
	name=${name%.*}
	first=$(head -n 1 "$page")
	if [[ $first == .so\ * ]]; then
		target=${first#.so }
		[ "$(wc -l <"$page")" -eq 1 ] ||
			fail "$page: a .so link page must hold that one line"
		[ -e "$target" ] || fail "$page: link target $target does not exist"
		continue
	fi
	grep -qiE "^\.TH \"?$name\"? \"?$section\"? " "$page" ||
		fail "$page: no '.TH $name $section ...' line"
	awk '/^\.SH/ { sec = $2; next } sec == "NAME" { print; exit }' "$page" |
		grep -qE "(^|[ ,])$name(\\\\f[BRIP])?(,| \\\\-)" ||
		fail "$page: NAME section does not name $name"
	for s in NAME SYNOPSIS DESCRIPTION "SEE ALSO"; do
		grep -qE "^\.SH \"?$s\"?\$" "$page" || fail "$page: no $s section"
	done
	if [ "$section" = 1 ]; then
		grep -qE '^\.SH "?EXIT STATUS"?$' "$page" ||
			fail "$page: no EXIT STATUS section"
	fi
	if [ "$section" = 3 ]; then
		for s in "RETURN VALUE" ERRORS; do
			grep -qE "^\.SH \"?$s\"?\$" "$page" || fail "$page: no $s section"
		done
	fi
	warnings=$(groff -man -ww -z "$page" 2>&1 >/dev/null) || true
	[ -z "$warnings" ] || fail "$page: groff -man -ww: $warnings"
	warnings=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings=w -l "$page" 2>&1 \
		>/dev/null) || fail "$page: man -l failed"
	[ -z "$warnings" ] || fail "$page: man -l: $warnings"
	[ -n "$(LC_ALL=C.UTF-8 MANWIDTH=80 man -l "$page" 2>/dev/null)" ] ||
		fail "$page: man -l renders nothing"
done

install_finish check_man "$pages pages checked, all render without warnings"
