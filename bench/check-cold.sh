#!/usr/bin/env bash
# bench/check-cold.sh [CLI] [OBJECTS]: the time of a cold `check` (a new
# process: modules loaded, manifests read, every object judged) over a
# generated tree of OBJECTS objects (default 10000, bench/check-tree.py),
# median of RUNS runs (default five) of wall-clock and CPU (user+system)
# seconds, the output discarded; on a shared machine CPU is the steadier
# figure. Two lines: the first run on a machine (an empty cache of compiled
# modules, so the modules are compiled and stored) and every run after it
# (the modules read from the cache). The cache is a scratch directory, never
# the user's. docs/performance.md quotes it, and a 100-object tree shows how
# much of it is loading the modules. CLI defaults to
# target/release/cozystack-policies (dist/, or its embedded modules).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${1:-$root/target/release/cozystack-policies}
objects=${2:-10000}
tree=$(mktemp -d)
trap 'rm -rf "$tree"' EXIT
python3 "$root/bench/check-tree.py" "$objects" "$tree/manifests"
export XDG_CACHE_HOME=$tree/cache
cd "$root"
walls=() cpus=()
# One timed check, its times appended to walls and cpus.
timed() {
  local status=0 wall user system
  /usr/bin/time -f '%e %U %S' -o "$tree/time" "$cli" check --json "$tree/manifests" \
    >"$tree/out.json" 2>"$tree/err" || status=$?
  [ "$status" -le 1 ] || { cat "$tree/err" >&2; exit "$status"; }
  # The last line: GNU time writes "Command exited with non-zero status 1"
  # before it when violations are found.
  read -r wall user system < <(tail -n 1 "$tree/time")
  walls+=("$wall")
  cpus+=("$(echo "$user + $system" | bc)")
}
median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }
report() {
  local findings
  findings=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["findings"]))' "$tree/out.json")
  printf 'cold check of %s objects (%s findings), %s: median %s s wall, %s s CPU\n' \
    "$objects" "$findings" "$1" "$(median "${walls[@]}")" "$(median "${cpus[@]}")"
  walls=() cpus=()
}
for _ in $(seq "${RUNS:-5}"); do
  rm -rf "$XDG_CACHE_HOME"
  timed
done
report "first run (empty cache)"
for _ in $(seq "${RUNS:-5}"); do
  timed
done
report "cache filled"
