#!/usr/bin/env bash
# Builds the policies and the floor module under several release-profile
# variants and prints module sizes and benchmark ratios for each, which is
# how the `policy` profile in Cargo.toml was chosen. Usage:
#   bench/profile-table.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
# The same path remapping as `make dist`, so the chosen row matches dist/.
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=${CARGO_HOME:-$HOME/.cargo}=/cargo"
rounds=${1:-2000}
xtask=target/release/xtask
policies=$(cargo run --locked --quiet -p cozystack-layout --bin policies | cut -f1)

# Each variant: the policies' opt-level, shared/'s opt-level (a per-package
# override: the JSON and field code every rule runs), LTO, codegen units.
printf '%-34s' variant; for p in $policies; do printf ' %24s' "$p"; done; echo
for variant in "s 3 true 1" "s s true 1" "3 3 true 1" "z 3 true 1" "z z true 1" "s 3 false 16"; do
  read -r opt shared lto cgu <<<"$variant"
  name="opt=$opt shared=$shared lto=$lto cgu=$cgu"
  dir="target/profiles/opt$opt-shared$shared-lto$lto-cgu$cgu"
  [ "$shared" = 3 ] && shared_level=3 || shared_level="\"$shared\""
  # Each module as tools/build-modules builds it: a cdylib alone, the
  # policies with their waPC entry points (the `wapc` feature).
  for package in $policies floor-policy; do
    features=wapc; [ "$package" = floor-policy ] && features=
    CARGO_PROFILE_POLICY_OPT_LEVEL=$opt CARGO_PROFILE_POLICY_LTO=$lto CARGO_PROFILE_POLICY_CODEGEN_UNITS=$cgu \
      cargo rustc --locked --quiet --config "profile.policy.package.cozystack-policy-shared.opt-level=$shared_level" \
      --profile policy --target wasm32-wasip1 --target-dir "$dir" -p "$package" \
      ${features:+--features "$features"} --lib --crate-type cdylib
  done
  tools/optimize-modules "$dir/wasm32-wasip1/policy" "$dir/wasm32-wasip1/policy-opt"
  $xtask dist --wasm-dir "$dir/wasm32-wasip1/policy-opt" --out "$dir/dist" >/dev/null
  table=$($xtask bench --rounds "$rounds" --dist "$dir/dist" --floor "$dir/wasm32-wasip1/policy-opt/floor_policy.wasm")
  printf '%-34s' "$name"
  for p in $policies; do
    printf ' %24s' "$(awk -v p="$p" '$1 == p { printf "%s %s", $2, $5 }' <<<"$table")"
  done
  echo
done
