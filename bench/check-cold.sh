#!/usr/bin/env bash
# bench/check-cold.sh [CLI] [OBJECTS]: the time of a cold `check` (a new
# process: modules compiled, manifests read, every object judged) over a
# generated tree of OBJECTS objects (default 10000, bench/check-tree.py),
# median of RUNS runs (default five) of wall-clock and CPU (user+system) seconds, the
# output discarded; on a shared machine CPU is the steadier figure.
# docs/performance.md quotes it, and a 100-object tree shows how much of it
# is compiling the modules. CLI defaults to target/release/cozystack-policies
# (dist/, or its embedded modules).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$root/target/release/cozystack-policies}
objects=${2:-10000}
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
python3 "$root/bench/check-tree.py" "$objects" "$tree/manifests"
cd "$root"
walls=() cpus=()
for _ in $(seq "${RUNS:-5}"); do
  status=0
  /usr/bin/time -f '%e %U %S' -o "$tree/time" "$cli" check --json "$tree/manifests" \
    >"$tree/out.json" 2>"$tree/err" || status=$?
  [ "$status" -le 1 ] || { cat "$tree/err" >&2; exit "$status"; }
  # The last line: GNU time writes "Command exited with non-zero status 1"
  # before it when violations are found.
  read -r wall user system < <(tail -n 1 "$tree/time")
  walls+=("$wall")
  cpus+=("$(echo "$user + $system" | bc)")
done
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$tree/out.json")
printf 'cold check of %s objects (%s findings): median %s s wall, %s s CPU\n' \
  "$objects" "$findings" "$(median "${walls[@]}")" "$(median "${cpus[@]}")"
