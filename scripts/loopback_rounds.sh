#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# loopback_rounds.sh - compare builds (or settings) of libhoma on loopback,
# each next to TCP in the same run, over several interleaved rounds, and
# print every round and the medians.  The machines are shared and noisy: a
# single run says little, the median of interleaved rounds of Homa / TCP
# ratios says more.
#
# Usage: scripts/loopback_rounds.sh [-h|--help] [-n ROUNDS] [-s BYTES]
#            [-o OUTSTANDING] [-d SECONDS] [-a ARGS] [-u UDP_BOUND]
#            VARIANT...
#   VARIANT    LABEL=PATH_TO_HOMA_PERF[:NAME=VALUE[:NAME=VALUE...]], for
#              example new=build/tools/homa-perf or
#              poll200=build/tools/homa-perf:HOMA_POLL_USECS=200
#   -n ROUNDS  rounds; each runs every variant once, in order (default 5)
#   -s BYTES   request size (default 1000000; responses are 100 bytes)
#   -o N       RPCs in flight (default 4)
#   -d SECONDS measured seconds per protocol and run (default 3)
#   -a ARGS    more homa-perf options for every run, split at spaces, for
#              example -a "--server-threads 1"
#   -u PATH    also run plain UDP (udp-bound, scripts/udp_bound.c: 1 MB
#              messages one at a time) for SECONDS at the end of each
#              round, and print its Gbit/s over the round's first TCP run
#              and the first variant's Homa Gbit/s over it (the bound for
#              any UDP transport; meant for -s 1000000 -o 1)
# Output: one line per run (Homa and TCP Gbit/s of requests, CPU us per
# RPC of the whole process, the ratio, GRANTs the server sent per request
# it received, over the whole run, or "-"),
# then per variant the median ratio and the median CPU per RPC (with -u,
# the medians of the UDP ratios too).
set -euo pipefail

usage() { sed -n '4,31p' "$0" | sed 's/^# \{0,1\}//'; }

rounds=5 size=1000000 outstanding=4 seconds=3 extra=() udp_bound=
while [ $# -gt 0 ]; do
	case "$1" in
	-h|--help) usage; exit 0 ;;
	-n) rounds=$2; shift 2 ;;
	-s) size=$2; shift 2 ;;
	-o) outstanding=$2; shift 2 ;;
	-d) seconds=$2; shift 2 ;;
	-a) read -r -a extra <<<"$2"; shift 2 ;;
	-u) udp_bound=$2; shift 2 ;;
	-*) echo "loopback_rounds.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
	*) break ;;
	esac
done
if [ $# -eq 0 ]; then
	echo "loopback_rounds.sh: no VARIANT given" >&2
	usage >&2
	exit 2
fi
if [ -n "$udp_bound" ] && [ ! -x "$udp_bound" ]; then
	echo "loopback_rounds.sh: -u '$udp_bound' is not executable" >&2
	exit 2
fi
for v in "$@"; do
	bin=${v#*=}; bin=${bin%%:*}
	if [ "${v%%=*}" = "$v" ] || [ ! -x "$bin" ]; then
		echo "loopback_rounds.sh: '$v' is not LABEL=EXECUTABLE[:NAME=VALUE...]" >&2
		exit 2
	fi
done

results=$(mktemp)
trap 'rm -f "$results"' EXIT

# field NAME LINE - the number before NAME in a homa-perf summary line.
field() { sed -E "s|.* ([0-9.]+) $1.*|\\1|" <<<"$2"; }

for r in $(seq "$rounds"); do
	first_h="" first_t=""
	for v in "$@"; do
		label=${v%%=*}; rest=${v#*=}; bin=${rest%%:*}
		envs=()
		if [ "$rest" != "$bin" ]; then
			IFS=: read -r -a envs <<<"${rest#*:}"
		fi
		rc=0
		out=$(env "${envs[@]}" "$bin" loopback --size "$size" \
			--resp-size 100 --outstanding "$outstanding" \
			--duration "$seconds" "${extra[@]}" 2>&1) || rc=$?
		h=$(grep '^homa:' <<<"$out" || true)
		t=$(grep '^tcp:' <<<"$out" || true)
		if [ -z "$h" ] || [ -z "$t" ]; then
			echo "round $r $label: homa-perf failed:" >&2
			tail -5 <<<"$out" >&2
			continue
		fi
		hg=$(field 'Gbit/s of requests' "$h")
		tg=$(field 'Gbit/s of requests' "$t")
		hc=$(sed -E 's/.*CPU ([0-9.]+) us.*/\1/' <<<"$h")
		tc=$(sed -E 's/.*CPU ([0-9.]+) us.*/\1/' <<<"$t")
		g=$(grep 'packets sent:.*GRANT=' <<<"$out" | tail -1 |
		    sed -E 's/.*GRANT=([0-9]+).*/\1/' || true)
		q=$(grep 'requests_received=' <<<"$out" | tail -1 |
		    sed -E 's/.*requests_received=([0-9]+).*/\1/' || true)
		if [ -n "$g" ] && [ -n "$q" ] && [ "$q" -gt 0 ]; then
			g=$(awk -v g="$g" -v q="$q" 'BEGIN { printf "%.1f/RPC", g / q }')
		fi
		ratio=$(awk -v a="$hg" -v b="$tg" 'BEGIN { printf "%.2f", a / b }')
		printf 'round %s %-10s homa %6s Gbit/s %6s us/RPC  tcp %6s Gbit/s %6s us/RPC  ratio %s  grants %s%s\n' \
			"$r" "$label" "$hg" "$hc" "$tg" "$tc" "$ratio" "${g:--}" \
			"$([ $rc -eq 0 ] || echo "  (homa-perf exit $rc: an RPC failed or was unfinished)")"
		echo "$label $ratio $hc" >>"$results"
		[ -n "$first_h" ] || { first_h=$hg; first_t=$tg; }
	done
	if [ -n "$udp_bound" ] && [ -n "$first_h" ]; then
		u=$("$udp_bound" --seconds "$seconds" 2>&1 |
		    sed -nE 's/.*: ([0-9.]+) Gbit\/s.*/\1/p' || true)
		if [ -z "$u" ]; then
			echo "round $r udp-bound failed" >&2
			continue
		fi
		ut=$(awk -v a="$u" -v b="$first_t" 'BEGIN { printf "%.2f", a / b }')
		hu=$(awk -v a="$first_h" -v b="$u" 'BEGIN { printf "%.2f", a / b }')
		printf 'round %s %-10s udp  %6s Gbit/s  udp/tcp %s  homa/udp %s\n' \
			"$r" "udp-bound" "$u" "$ut" "$hu"
		echo "udp-bound $ut $hu" >>"$results"
	fi
done

echo "medians:"
# medians LABEL FORMAT - the medians of columns 2 and 3 of LABEL's lines
# of the results, printed with FORMAT (label, two medians, count).
medians() {
	awk -v l="$1" -v f="$2" '
		BEGIN { n = 0 }
		$1 == l { a[n] = $2 + 0; b[n] = $3 + 0; n++ }
		function median(x, n,   i, j, t) {
			for (i = 0; i < n; i++)
				for (j = i + 1; j < n; j++)
					if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
			return n % 2 ? x[(n - 1) / 2] : (x[n / 2 - 1] + x[n / 2]) / 2
		}
		END {
			if (n == 0) { printf "  %-10s no result\n", l; exit }
			printf f, l, median(a, n), median(b, n), n
		}' "$results"
}
for v in "$@"; do
	medians "${v%%=*}" '  %-10s ratio %.2f  Homa CPU %.1f us/RPC  (%d rounds)\n'
done
if [ -n "$udp_bound" ]; then
	medians udp-bound '  %-10s udp/tcp %.2f  homa/udp %.2f  (%d rounds; first variant)\n'
fi
