#!/usr/bin/env bash
# The standalone CLI end to end (CONTRIBUTING.md: "Building the CLI"): the binary
# `cargo install` makes with the modules of dist/ embedded, run from an
# empty directory with nothing but manifests, must judge them as the clone
# does. The install reuses the workspace's target directory, so only the
# CLI itself is compiled again. First, the binary built without modules
# must say so when it finds no clone. Then the installed binary checks a
# directory, standard input and a git revision diff in every format, and
# the repository's example change (e2e/tests/standalone.rs, which runs it
# with nothing of this machine's user).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# Compiled modules are cached under the scratch directory, not the home.
export XDG_CACHE_HOME=$scratch/cache
fail() { echo "FAIL: $*" >&2; exit 1; }

# A workspace binary without embedded modules, outside any clone.
mkdir "$scratch/empty"
set +e
(cd "$scratch/empty" && "$root/target/release/cozystack-policies" check . >"$scratch/out" 2>&1)
code=$?
set -e
[ "$code" = 2 ] || fail "no modules and no clone should exit 2, got $code: $(cat "$scratch/out")"
grep -q "carries no embedded modules" "$scratch/out" || fail "unclear message: $(cat "$scratch/out")"
echo "ok: without embedded modules and outside a clone, exit 2 saying so"

COZYSTACK_POLICIES_DIST="$root/dist" CARGO_TARGET_DIR="$root/target" \
  cargo install --quiet --locked --path "$root/cli" --root "$scratch/install"
cli=$scratch/install/bin/cozystack-policies

# The example change, with and without deploy/'s settings, a clean tree,
# and a directory, standard input and a git revision diff in every format,
# each finding at the file:line:col the fixture puts it, exit codes by
# --fail-on; the test gives the binary a home and a cache of its own.
(cd "$root" && COZYSTACK_POLICIES_STANDALONE=$cli \
  cargo test --quiet --locked --release --workspace --test standalone -- --nocapture)
