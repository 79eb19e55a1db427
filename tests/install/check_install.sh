#!/usr/bin/env bash
# check_install.sh SOURCE_DIR BUILD_DIR - test the installation of libhoma.
#
# 1. 'make install-only' (what 'make install' runs after building) into a
#    temporary PREFIX, and again with DESTDIR into a staging directory.
# 2. Every file is where it belongs: homa.h, libhoma.so* with its SONAME
#    links, libhoma.a, homa.pc (naming PREFIX, not DESTDIR), the tools, the
#    manual pages, the Wireshark dissector (share/libhoma/wireshark/homa.lua,
#    which tshark loads when it is installed).
# 3. libhoma.so has SONAME libhoma.so.0 and exports exactly the functions of
#    homa.h, which are exactly those of libhoma.map.
# 4. A small program compiled with `pkg-config --cflags --libs homa` links
#    against the installed libhoma.so and runs; so does one linked with
#    libhoma.a.
# 5. When homa-rpc was built: its header, libraries, homa-rpc.pc and
#    homa_rpc(3) are installed, libhoma-rpc.so has SONAME libhoma-rpc.so.0
#    and exports exactly the functions of homa-rpc.h, and a program built
#    with `pkg-config --cflags --libs homa-rpc` runs.
#
# Environment: CC (default cc), HOMA_TEST_CFLAGS (extra flags for the test
# program, e.g. the sanitizer flags of the build being tested).
set -euo pipefail
# shellcheck source=tests/install/install_util.sh
. "$(dirname "${BASH_SOURCE[0]}")/install_util.sh"

install_args 2 "SOURCE_DIR BUILD_DIR" "$@"
cc=${CC:-cc}
read -r -a extra_cflags <<<"${HOMA_TEST_CFLAGS:-}"
require_tools pkg-config readelf objdump nm

tmp=$(mktemp -d "${TMPDIR:-/tmp}/homa-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Called from make (make test -> ctest -> here): do not inherit its flags.
unset MAKEFLAGS MFLAGS MAKELEVEL MAKEOVERRIDES
run_install() {  # run_install PREFIX DESTDIR LOG
	if ! make -C "$src" --no-print-directory install-only \
		BUILD="$build" PREFIX="$1" DESTDIR="$2" >"$3" 2>&1; then
		cat "$3" >&2
		echo "FAIL: make install PREFIX=$1 DESTDIR=$2 failed" >&2
		exit 1
	fi
}

# The names the library must export, three ways.
header_syms=$(grep -oE '^[a-z_][a-z0-9_ ]*[[:space:]*]+homa_[a-z0-9_]+\(' \
	"$src/include/homa.h" | grep -oE 'homa_[a-z0-9_]+' | sort -u)
map_syms=$(sed -e 's|/\*.*\*/||' "$src/libhoma.map" |
	grep -oE '^[[:space:]]*homa_[a-z0-9_]+;' | tr -d ' \t;' | sort -u)
tool_names=$(for f in "$src"/tools/*.c; do
	[ -e "$f" ] || continue
	basename "$f" .c | tr _ -
done)

# check_tree ROOT - the installed files under ROOT (PREFIX or DESTDIR/PREFIX).
check_tree() {
	local root=$1 f
	for f in include/homa.h lib/libhoma.a lib/libhoma.so lib/libhoma.so.0 \
		lib/libhoma.so.0.1.0 lib/pkgconfig/homa.pc \
		share/man/man7/homa.7; do
		[ -e "$root/$f" ] && ok "$f installed" || fail "$f missing in $root"
	done
	[ -L "$root/lib/libhoma.so" ] &&
		[ "$(readlink "$root/lib/libhoma.so")" = libhoma.so.0 ] ||
		fail "lib/libhoma.so is not a link to libhoma.so.0"
	[ -L "$root/lib/libhoma.so.0" ] &&
		[ "$(readlink "$root/lib/libhoma.so.0")" = libhoma.so.0.1.0 ] ||
		fail "lib/libhoma.so.0 is not a link to libhoma.so.0.1.0"
	cmp -s "$src/include/homa.h" "$root/include/homa.h" ||
		fail "installed homa.h differs from include/homa.h"
	for f in $header_syms; do
		[ -e "$root/share/man/man3/$f.3" ] ||
			fail "no manual page share/man/man3/$f.3"
	done
	for f in "$src"/man/*.3 "$src"/man/*.7; do
		[ -e "$f" ] || continue
		case $f in *.3) d=man3 ;; *) d=man7 ;; esac
		[ -e "$root/share/man/$d/$(basename "$f")" ] ||
			fail "$(basename "$f") not installed in share/man/$d"
	done
	for f in $tool_names; do
		[ -x "$root/bin/$f" ] && ok "bin/$f installed" ||
			fail "bin/$f missing in $root"
	done
	f=share/libhoma/wireshark/homa.lua
	if cmp -s "$src/tools/wireshark/homa.lua" "$root/$f"; then
		ok "$f installed"
	else
		fail "$f missing in $root or differs from tools/wireshark/homa.lua"
	fi
}

# --- 1, 2: install into PREFIX, and into DESTDIR/PREFIX ----------------------
prefix=$tmp/prefix
run_install "$prefix" "" "$tmp/install.log"
check_tree "$prefix"
grep -qx "prefix=$prefix" "$prefix/lib/pkgconfig/homa.pc" ||
	fail "homa.pc does not say prefix=$prefix"

stage=$tmp/stage
staged_prefix=$tmp/not-created/usr
run_install "$staged_prefix" "$stage" "$tmp/install-destdir.log"
check_tree "$stage$staged_prefix"
[ ! -e "$staged_prefix" ] ||
	fail "install with DESTDIR wrote into $staged_prefix itself"
grep -qx "prefix=$staged_prefix" "$stage$staged_prefix/lib/pkgconfig/homa.pc" ||
	fail "homa.pc (DESTDIR) does not say prefix=$staged_prefix"

# The installed dissector loads: tshark lists the protocol (with a HOME of
# its own, where no personal homa.lua plugin clashes with it).
if command -v tshark >/dev/null 2>&1; then
	mkdir -p "$tmp/home"
	if HOME=$tmp/home tshark -G protocols -X \
		"lua_script:$prefix/share/libhoma/wireshark/homa.lua" \
		2>"$tmp/tshark.err" | awk -F '\t' '$3 == "homa" { f = 1 }
		END { exit !f }'; then
		ok "tshark loads the installed homa.lua"
	else
		fail "tshark does not load the installed homa.lua:" \
			"$(head -n 3 "$tmp/tshark.err")"
	fi
else
	echo "note: tshark not installed: the installed homa.lua was not loaded"
fi

# --- 3: SONAME and exported symbols -------------------------------------------
lib=$prefix/lib/libhoma.so.0.1.0
readelf -d "$lib" | grep -q 'SONAME.*\[libhoma\.so\.0\]' &&
	ok "readelf: SONAME libhoma.so.0" || fail "readelf -d shows no SONAME libhoma.so.0"
objdump -p "$lib" | grep -qE 'SONAME[[:space:]]+libhoma\.so\.0$' &&
	ok "objdump: SONAME libhoma.so.0" || fail "objdump -p shows no SONAME libhoma.so.0"

exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtWDBRV]$/ {print $3}' |
	sed 's/@.*//' | grep -v '^HOMA_0$' | sort -u)
if [ "$header_syms" = "$map_syms" ]; then
	ok "libhoma.map lists exactly the functions of homa.h"
else
	fail "libhoma.map and homa.h differ:"
	diff <(echo "$header_syms") <(echo "$map_syms") | sed 's/^/    /' >&2 || true
fi
if [ "$exported" = "$header_syms" ]; then
	ok "libhoma.so exports exactly the $(echo "$header_syms" | wc -l) functions of homa.h"
else
	fail "libhoma.so exports (>) differ from homa.h (<):"
	diff <(echo "$header_syms") <(echo "$exported") | sed 's/^/    /' >&2 || true
fi

# --- 4: compile and run against the installed library -----------------------
cat >"$tmp/prog.c" <<'EOF'
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <homa.h>

int main(void)
{
	int64_t value;
	int fd = homa_socket(AF_INET, SOCK_DGRAM, IPPROTO_HOMA);

	if (fd < 0) {
		fprintf(stderr, "homa_socket: %s\n", strerror(errno));
		return 1;
	}
	if (homa_close(fd) != 0) {
		fprintf(stderr, "homa_close: %s\n", strerror(errno));
		return 1;
	}
	if (homa_config_get("unsched_bytes", &value) != 0) {
		fprintf(stderr, "homa_config_get: %s\n", strerror(errno));
		return 1;
	}
	printf("homa socket %d opened and closed\n", fd);
	return 0;
}
EOF

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
pc_flags=$(pkg-config --cflags --libs homa) ||
	{ fail "pkg-config --cflags --libs homa failed"; pc_flags=""; }
echo "pkg-config --cflags --libs homa: $pc_flags"
# shellcheck disable=SC2086  # pkg-config output is a list of words
if "$cc" "${extra_cflags[@]}" -o "$tmp/prog" "$tmp/prog.c" $pc_flags \
	2>"$tmp/cc.log"; then
	ok "compiled with pkg-config --cflags --libs homa"
	readelf -d "$tmp/prog" | grep -q 'NEEDED.*\[libhoma\.so\.0\]' &&
		ok "program needs libhoma.so.0" ||
		fail "program is not linked against libhoma.so.0"
	if out=$(LD_LIBRARY_PATH=$prefix/lib "$tmp/prog" 2>&1); then
		ok "program ran against the installed libhoma.so: $out"
	else
		fail "program linked with libhoma.so failed: $out"
	fi
else
	cat "$tmp/cc.log" >&2
	fail "compiling against the installed header and library failed"
fi

# shellcheck disable=SC2046
if "$cc" "${extra_cflags[@]}" -o "$tmp/prog-static" "$tmp/prog.c" \
	$(pkg-config --cflags homa) "$prefix/lib/libhoma.a" \
	$(pkg-config --static --libs-only-other homa) -lm 2>"$tmp/cc.log"; then
	if out=$("$tmp/prog-static" 2>&1); then
		ok "program ran linked with the installed libhoma.a: $out"
	else
		fail "program linked with libhoma.a failed: $out"
	fi
else
	cat "$tmp/cc.log" >&2
	fail "linking with the installed libhoma.a failed"
fi

# --- 5: homa-rpc, when it was built (HOMA_RPC=ON) ---------------------------
if [ -e "$build/libhoma-rpc.so" ]; then
	for f in include/homa-rpc.h lib/libhoma-rpc.a lib/libhoma-rpc.so.0 \
		lib/pkgconfig/homa-rpc.pc share/man/man3/homa_rpc.3; do
		[ -e "$prefix/$f" ] && ok "$f installed" || fail "$f missing"
	done
	rpc_lib=$prefix/lib/libhoma-rpc.so.0.1.0
	readelf -d "$rpc_lib" | grep -q 'SONAME.*\[libhoma-rpc\.so\.0\]' &&
		ok "SONAME libhoma-rpc.so.0" || fail "no SONAME libhoma-rpc.so.0"
	rpc_header=$(grep -oE '^[A-Za-z_][A-Za-z0-9_ ]*[[:space:]*]+homa_rpc_[a-z0-9_]+\(' \
		"$src/include/homa-rpc.h" | grep -oE 'homa_rpc_[a-z0-9_]+\($' |
		tr -d '(' | sort -u)
	rpc_exported=$(nm -D --defined-only "$rpc_lib" |
		awk '$2 ~ /^[TtWDBRV]$/ {print $3}' | sed 's/@.*//' |
		grep -v '^HOMA_RPC_0$' | sort -u)
	if [ "$rpc_exported" = "$rpc_header" ]; then
		ok "libhoma-rpc.so exports exactly the functions of homa-rpc.h"
	else
		fail "libhoma-rpc.so exports (>) differ from homa-rpc.h (<):"
		diff <(echo "$rpc_header") <(echo "$rpc_exported") |
			sed 's/^/    /' >&2 || true
	fi
	cat >"$tmp/rpcprog.c" <<'EOF2'
#include <stdio.h>
#include <string.h>
#include <homa-rpc.h>

int main(void)
{
	if (strcmp(homa_rpc_code_name(HOMA_RPC_UNAVAILABLE),
		   "UNAVAILABLE") != 0)
		return 1;
	printf("homa-rpc status 14 is %s\n", homa_rpc_code_name(14));
	return 0;
}
EOF2
	# shellcheck disable=SC2046
	if "$cc" "${extra_cflags[@]}" -o "$tmp/rpcprog" "$tmp/rpcprog.c" \
		$(pkg-config --cflags --libs homa-rpc) 2>"$tmp/cc.log" &&
		out=$(LD_LIBRARY_PATH=$prefix/lib "$tmp/rpcprog" 2>&1); then
		ok "program built with pkg-config homa-rpc ran: $out"
	else
		cat "$tmp/cc.log" >&2
		fail "program built with pkg-config homa-rpc failed: ${out:-}"
	fi
fi

install_finish check_install "all checks passed"
