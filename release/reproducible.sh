#!/usr/bin/env bash
# Proves the modules are reproducible: builds every policy again from
# scratch, from a second checkout at another path into a target directory of
# its own, annotates the result and compares it byte for byte with dist/,
# the modules `make dist` built from this checkout.
#
# Paths of crates.io sources end up in the modules (panic locations), so
# both builds remap $CARGO_HOME to /cargo: the result is then the same on
# any machine with the same toolchain and Cargo.lock. The release workflow
# builds with the same remapping (CARGO_ENCODED_RUSTFLAGS below), so anyone
# can rebuild a published module and compare it with the pulled layer.
#
# Usage: make reproducible   (dist/ first, then one full release build of
# the policies; the rebuilt modules are left in target/repro/dist)
set -euo pipefail
cd "$(dirname "$0")/.."
cargo_home=${CARGO_HOME:-$HOME/.cargo}
export CARGO_ENCODED_RUSTFLAGS="--remap-path-prefix=$cargo_home=/cargo"
xtask=target/release/xtask
policies=$(cargo run --locked --quiet -p cozystack-layout --bin policies | cut -f1)
for p in $policies; do
  [ -f "dist/$p.wasm" ] || { echo "dist/$p.wasm is missing: run make reproducible, which builds dist/ first" >&2; exit 1; }
done

# The second checkout: the tracked and new files of this tree, elsewhere.
src=target/repro-src
rebuilt=$PWD/target/repro
rm -rf "$rebuilt" "$src"
mkdir -p "$src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$src" 2>/dev/null || true
[ -f "$src/Cargo.toml" ] || { echo "could not copy the tree to $src" >&2; exit 1; }

started=$SECONDS
(cd "$src" && tools/build-modules "$rebuilt")
"$xtask" dist --wasm-dir "$rebuilt/wasm32-wasip1/policy-opt" --out "$rebuilt/dist" >/dev/null
echo "built $src into $rebuilt in $((SECONDS - started)) s"
rm -rf "$src"

status=0
for p in $policies; do
  a=dist/$p.wasm b=target/repro/dist/$p.wasm
  if cmp -s "$a" "$b"; then
    echo "identical  $p.wasm  sha256:$(sha256sum "$a" | cut -d' ' -f1)"
  else
    echo "DIFFERENT  $p.wasm: $(cmp "$a" "$b" | head -1)" >&2
    status=1
  fi
done
if grep -l -a -F "$cargo_home" dist/*.wasm target/repro/dist/*.wasm; then
  echo "the modules above still hold $cargo_home" >&2
  status=1
fi
exit $status
