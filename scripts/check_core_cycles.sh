#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# check_core_cycles.sh - no two files of the core call each other.
#
# Usage: scripts/check_core_cycles.sh [--strict] [--graph] FILE...
#        scripts/check_core_cycles.sh --self-test
#   FILE      the core's static library (build/libhoma_core.a) or its object
#             files; each object (homa_rpc.c.o -> homa_rpc) is one node
#   --strict  also fail on longer cycles (a -> b -> c -> a), not only on
#             pairs
#   --graph   print every dependency "a -> b: one symbol a uses from b"
#   --self-test  build small archives with a pair, a three-file cycle and
#             a one-way dependency (with $CC, default cc) and check that
#             the check tells them apart
#
# The graph comes from the symbol tables (nm): file a depends on file b when
# a's object has an undefined symbol (a function or variable) that b's
# object defines.  Calls inside one file, to static functions, and through
# static inline functions of headers (attributed to the file they are
# inlined into) count as what the compiler made of them; calls through
# function pointers do not show.
#
# Exit status: 0 when no pair (with --strict: no cycle) is found, 1 when
# one is (each printed with the symbols of both directions), 2 on a usage
# error or when the input holds fewer than two objects or no dependency
# (nothing was checked).

set -euo pipefail

usage() {
	sed -n '4,16p' "$0" | sed 's/^# \{0,1\}//'
}

# graph_of FILE... - lines "a b symbol": a uses symbol, defined by b.
graph_of() {
	nm -A -g -P "$@" | awk '
	{
		name = $1
		sub(/:$/, "", name)
		if (match(name, /\[[^]]*\]$/))
			name = substr(name, RSTART + 1, RLENGTH - 2)
		sub(/.*\//, "", name)
		sub(/\.o$/, "", name)
		sub(/\.c$/, "", name)
		files[name] = 1
		if ($3 == "U")
			use[name, $2] = 1
		else if ($3 != "w" && $3 != "v")
			def[$2] = name
	}
	END {
		for (f in files)
			print "file", f
		for (k in use) {
			split(k, p, SUBSEP)
			if ((p[2] in def) && def[p[2]] != p[1])
				print "dep", p[1], def[p[2]], p[2]
		}
	}' | sort
}

# check STRICT GRAPH_FLAG - read graph_of's lines; print pairs and cycles;
# exit as the usage says.
check() {
	awk -v strict="$1" -v show="$2" '
	$1 == "file" { nodes[++n] = $2; next }
	$1 == "dep" {
		if (!(($2, $3) in sym)) {
			sym[$2, $3] = $4
			adj[$2] = adj[$2] " " $3
			deps++
			if (show)
				printf "%s -> %s: %s\n", $2, $3, $4
		}
		next
	}
	# scc - Tarjan: the strongly connected components of the graph.
	function scc(v,    list, k, i, w) {
		idx[v] = low[v] = ++counter
		stack[++sp] = v
		on[v] = 1
		k = split(adj[v], list, " ")
		for (i = 1; i <= k; i++) {
			w = list[i]
			if (!(w in idx)) {
				scc(w)
				if (low[w] < low[v])
					low[v] = low[w]
			} else if ((w in on) && idx[w] < low[v]) {
				low[v] = idx[w]
			}
		}
		if (low[v] == idx[v]) {
			comp = ""
			size = 0
			do {
				w = stack[sp--]
				delete on[w]
				comp = comp " " w
				size++
			} while (w != v)
			if (size > 1)
				cycles[++ncycles] = comp
		}
	}
	END {
		if (n < 2 || deps == 0) {
			printf "check_core_cycles: %d objects, %d dependencies: " \
			       "nothing to check\n", n, deps
			exit 2
		}
		for (k in sym) {
			split(k, p, SUBSEP)
			if (p[1] < p[2] && ((p[2], p[1]) in sym)) {
				printf "PAIR %s <-> %s: %s uses %s, %s uses %s\n",
				       p[1], p[2], p[1], sym[k], p[2],
				       sym[p[2], p[1]]
				pairs++
			}
		}
		for (i = 1; i <= n; i++)
			if (!(nodes[i] in idx))
				scc(nodes[i])
		for (i = 1; i <= ncycles; i++)
			printf "%s files that reach one another:%s\n",
			       strict ? "CYCLE" : "note: cycle of", cycles[i]
		printf "check_core_cycles: %d files, %d dependencies, %d " \
		       "pairs calling each other, %d cycles\n", n, deps,
		       pairs, ncycles
		exit (pairs > 0 || (strict && ncycles > 0)) ? 1 : 0
	}'
}

# self_test - the check on archives made for it.
self_test() {
	local cc=${CC:-cc} status
	dir=$(mktemp -d)
	trap 'rm -rf "${dir:-}"' EXIT
	# a <-> b: a pair.  c -> d -> e -> c: a longer cycle.  f -> a: one
	# way.
	printf 'void b_f(void);\nvoid a_f(void) { b_f(); }\n' > "$dir/a.c"
	printf 'void a_f(void);\nvoid b_f(void) { a_f(); }\n' > "$dir/b.c"
	printf 'void d_f(void);\nvoid c_f(void) { d_f(); }\n' > "$dir/c.c"
	printf 'void e_f(void);\nvoid d_f(void) { e_f(); }\n' > "$dir/d.c"
	printf 'void c_f(void);\nvoid e_f(void) { c_f(); }\n' > "$dir/e.c"
	printf 'void a_f(void);\nvoid f_f(void) { a_f(); }\n' > "$dir/f.c"
	for f in a b c d e f; do
		"$cc" -c -o "$dir/$f.c.o" "$dir/$f.c"
	done
	expect() {   # expect STATUS ARGS...: the check exits with STATUS
		status=0
		bash "$0" "${@:2}" > "$dir/out" || status=$?
		if [ "$status" != "$1" ]; then
			cat "$dir/out"
			echo "FAIL: check_core_cycles ${*:2}: exit $status," \
			     "expected $1"
			exit 1
		fi
	}
	said() {     # said PATTERN: the last check printed a line matching it
		if ! grep -q "$1" "$dir/out"; then
			cat "$dir/out"
			echo "FAIL: no line matching '$1'"
			exit 1
		fi
	}
	expect 1 "$dir/a.c.o" "$dir/b.c.o" "$dir/f.c.o"
	said '^PAIR a <-> b: a uses b_f, b uses a_f$'
	expect 0 "$dir/a.c.o" "$dir/f.c.o"
	said '^check_core_cycles: 2 files, 1 dependencies, 0 pairs'
	expect 0 "$dir/c.c.o" "$dir/d.c.o" "$dir/e.c.o"
	said '^note: cycle of files that reach one another:'
	expect 1 --strict "$dir/c.c.o" "$dir/d.c.o" "$dir/e.c.o"
	said '^CYCLE files that reach one another:'
	ar rcs "$dir/lib.a" "$dir/a.c.o" "$dir/b.c.o"
	expect 1 "$dir/lib.a"
	said '^PAIR a <-> b:'
	expect 0 --graph "$dir/f.c.o" "$dir/a.c.o"
	said '^f -> a: a_f$'
	expect 2 "$dir/a.c.o"
	echo "check_core_cycles: self-test passed"
}

strict=0
graph=0
while [ $# -gt 0 ]; do
	case "$1" in
	--strict) strict=1; shift ;;
	--graph) graph=1; shift ;;
	--self-test) self_test; exit 0 ;;
	-h|--help) usage; exit 0 ;;
	--) shift; break ;;
	-*) usage >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	usage >&2
	exit 2
fi
for f in "$@"; do
	if [ ! -r "$f" ]; then
		echo "check_core_cycles: cannot read $f" >&2
		exit 2
	fi
done
graph_of "$@" | check "$strict" "$graph"
