#!/usr/bin/env bash
# Checks that docs/settings.md holds exactly the settings table the code
# prints (homa-config --markdown).  Usage: check_settings.sh HOMA_CONFIG DOC
set -euo pipefail
tool=${1:?path of homa-config}
doc=${2:?path of docs/settings.md}
want=$("$tool" --markdown)
have=$(sed -n '/^<!-- settings table/,/^<!-- end of settings table/p' "$doc" |
	sed '1d;$d')
if [ "$want" != "$have" ]; then
	echo "docs/settings.md is out of date; regenerate its table with:" >&2
	echo "  homa-config --markdown" >&2
	diff <(echo "$want") <(echo "$have") >&2 || true
	exit 1
fi
echo "settings table matches ($(echo "$want" | wc -l) lines)"
# Every setting also has its row in homa(7).
man=${3:-$(dirname "$doc")/../man/homa.7}
missing=0
for name in $("$tool" --markdown | sed -n 's/^| `\([a-z0-9_]*\)` .*/\1/p'); do
	# The eight cutoffs share one row: unsched_cutoff0 .. unsched_cutoff7.
	case $name in unsched_cutoff[1-7]) continue ;; esac
	if ! grep -q "^\.BR $name " "$man"; then
		echo "homa(7) has no row for the setting $name" >&2
		missing=1
	fi
done
[ "$missing" -eq 0 ] || exit 1
echo "homa(7) lists every setting"
