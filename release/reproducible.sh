#!/usr/bin/env bash
# Proves the modules are reproducible: builds every policy twice from
# scratch, into two target directories and from two checkouts at different
# paths, annotates both builds and compares the modules byte for byte.
#
# Paths of crates.io sources end up in the modules (panic locations), so
# both builds remap $CARGO_HOME to /cargo: the result is then the same on
# any machine with the same toolchain and Cargo.lock. The release workflow
# builds with the same remapping (REPRODUCIBLE_RUSTFLAGS below), so anyone
# can rebuild a published module and compare it with the pulled layer.
#
# Usage: release/reproducible.sh   (slow: two full release builds of the
# policies; the modules of the first build are left in target/repro-a/dist)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo_home=${CARGO_HOME:-$HOME/.cargo}
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$cargo_home=/cargo"
cli=target/release/cozystack-policies
policies=$(for d in policies/*/Cargo.toml; do basename "$(dirname "$d")"; done)

# The second checkout: the tracked and new files of this tree, elsewhere.
src_b=target/repro-src
rm -rf target/repro-a target/repro-b "$src_b"
mkdir -p "$src_b"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src_b" 2>/dev/null || true
[ -f "$src_b/Cargo.toml" ] || { echo "could not copy the tree to $src_b" >&2; exit 1; }

build() { # build <source dir> <target dir>
  local started=$SECONDS
  (cd "$1" && tools/build-modules "$2")
  "$cli" dist --wasm-dir "$2/wasm32-wasip1/policy-opt" --out "$2/dist" >/dev/null
  echo "built $1 into $2 in $((SECONDS - started)) s"
}
build . "$PWD/target/repro-a"
build "$src_b" "$PWD/target/repro-b"
rm -rf "$src_b"

status=0
for p in $policies; do
  a=target/repro-a/dist/$p.wasm b=target/repro-b/dist/$p.wasm
  if cmp -s "$a" "$b"; then
    echo "identical  $p.wasm  sha256:$(sha256sum "$a" | cut -d' ' -f1)"
  else
    echo "DIFFERENT  $p.wasm: $(cmp "$a" "$b" | head -1)" >&2
    status=1
  fi
done
# `make dist` builds with the same remapping: its modules must be these.
for p in $policies; do
  if [ -f "dist/$p.wasm" ] && ! cmp -s "dist/$p.wasm" "target/repro-a/dist/$p.wasm"; then
    echo "DIFFERENT  dist/$p.wasm is not the reproducible build" >&2
    status=1
  fi
done
if grep -l -a -F "$cargo_home" target/repro-a/dist/*.wasm; then
  echo "the modules above still hold $cargo_home" >&2
  status=1
fi
exit $status
