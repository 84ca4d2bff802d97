#!/usr/bin/env bash
# The HTML report in a real browser: headless Chromium opens the page
# `cozystack-policies report --format html` writes for the fixtures in
# cli/tests/data/report, runs its script, and the rendered DOM must show the
# totals and rows the report's CSV and JSON give for the same input, and the
# filter from the address (#q=...) must keep just the matching rows.
#
#   e2e/browser/report.sh                 check; screenshot in target/browser/
#   e2e/browser/report.sh --update-docs   also refresh docs/report.png
#
# Without Chromium the check is skipped, saying so; under CI (CI=true) it
# is installed (Debian's `chromium`) or the check fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

cli=target/release/cozystack-policies
data=cli/tests/data/report
out=target/browser
update_docs=false
[ "${1:-}" = --update-docs ] && update_docs=true

chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  if [ "${CI:-}" = true ]; then
    tools/need chromium chromium
    chromium=$(command -v chromium)
  else
    echo "SKIPPED report-browser: Chromium is not installed (apt-get install chromium)"
    exit 0
  fi
fi
[ -x "$cli" ] || { echo "$cli is missing: run \`make cli\`" >&2; exit 2; }

mkdir -p "$out"
profile=$(mktemp -d)
trap 'rm -rf "$profile"' EXIT
flags=(--headless --disable-gpu --no-first-run --user-data-dir="$profile"
       --virtual-time-budget=5000 --hide-scrollbars)
# Chromium refuses to run as root with its sandbox.
[ "$(id -u)" = 0 ] && flags+=(--no-sandbox)

inputs=("$data/policyreports.json" --since "$data/policyreports-previous.json")
"$cli" report "${inputs[@]}" --format html >"$out/report.html"
page="file://$PWD/$out/report.html"

# What the page must show, from the other formats of the same report.
findings=$("$cli" report "${inputs[@]}" --format json | grep -m1 -oE '"findings": [0-9]+' | grep -oE '[0-9]+$')
rows=$(("$("$cli" report "${inputs[@]}" --format csv | wc -l)" - 1))
query=chart-render
matching=$("$cli" report "${inputs[@]}" --format csv | grep -c ",$query,")

dom() { timeout 60 "$chromium" "${flags[@]}" --dump-dom "$1" 2>"$out/chromium.log"; }
span() { grep -oE "<span id=\"$1\">[^<]*</span>" | sed -E 's/<[^>]*>//g'; }

failed=0
expect() { # what, got, wanted
  if [ "$2" = "$3" ]; then
    echo "ok   $1: $2"
  else
    echo "FAIL $1: got '$2', expected '$3'"
    failed=1
  fi
}

whole=$(dom "$page")
expect "script ran" "$(grep -c 'data-ready="true"' <<<"$whole")" 1
expect "total findings" "$(span total-findings <<<"$whole")" "$findings"
expect "rows in the table" "$(span rows <<<"$whole")" "$rows"
expect "rows shown unfiltered" "$(span shown <<<"$whole")" "$rows"

filtered=$(dom "$page#q=$query")
expect "rows shown for #q=$query" "$(span shown <<<"$filtered")" "$matching"
expect "filter box holds the query" \
  "$(grep -c "id=\"filter\"" <<<"$filtered")" 1

timeout 60 "$chromium" "${flags[@]}" --window-size=1280,1000 \
  --screenshot="$PWD/$out/report.png" "$page" 2>>"$out/chromium.log" >/dev/null
expect "screenshot written" "$(test -s "$out/report.png" && echo yes)" yes
if $update_docs; then
  cp "$out/report.png" docs/report.png
  echo "wrote docs/report.png"
fi

[ "$failed" = 0 ] || { echo "report-browser failed; Chromium's log: $out/chromium.log" >&2; exit 1; }
echo "report-browser: the HTML report renders its totals and filters in $("$chromium" --version 2>/dev/null)"
