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
