#!/usr/bin/env bash
# The standalone CLI end to end (README: "Building the CLI"): the binary
# `cargo install` makes with the modules of dist/ embedded, run from an
# empty directory with nothing but manifests, must judge them as the clone
# does. The install reuses the workspace's target directory, so only the
# CLI itself is compiled again. First, the binary built without modules
# must say so when it finds no clone. Then the installed binary checks a
# directory, standard input and a git revision diff in every format
# (e2e/tests/standalone.rs, which runs it with nothing of this machine's
# user).
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

# A directory, standard input and a git revision diff, in every format,
# each finding at the file:line:col the fixture puts it, exit codes by
# --fail-on; the test gives the binary a home and a cache of its own.
(cd "$root" && COZYSTACK_POLICIES_STANDALONE=$cli \
  cargo test --quiet --locked --release --workspace --test standalone -- --nocapture)

# From here on nothing of this machine's user: no home, no cache.
export HOME=$scratch/home XDG_CACHE_HOME=$scratch/cache
mkdir -p "$HOME" "$XDG_CACHE_HOME"

work=$scratch/work
mkdir "$work"
cp -r "$root/examples/before" "$root/examples/after" "$work/"
cd "$work"

set +e
"$cli" check --json --old before after >"$scratch/change.json" 2>"$scratch/err"
code=$?
set -e
[ "$code" = 1 ] || fail "the example change should exit 1, got $code: $(cat "$scratch/err")"
python3 - "$scratch/change.json" <<'PY'
import json, sys
found = json.load(open(sys.argv[1]))["findings"]
def has(policy, operation, name, field):
    return any(f["policy"] == policy and f["operation"] == operation
               and f["name"] == name and f["field"] == field for f in found)
assert has("no-delete", "DELETE", "cozystack-version",
           'metadata.labels["platform.cozystack.io/no-delete"]'), found
assert all(f["file"].startswith(("before/", "after/")) for f in found), found
PY
echo "ok: the embedded bundle judges the example change from an empty directory (exit 1, no-delete on DELETE)"

# With settings from the repository's deploy/ manifests, as CI would pass them.
cp -r "$root/deploy" "$work/deploy"
set +e
"$cli" check --from-deploy deploy --old before after >"$scratch/text" 2>"$scratch/err"
code=$?
set -e
[ "$code" = 1 ] || fail "--from-deploy: expected exit 1, got $code: $(cat "$scratch/err")"
grep -q "violation(s)" "$scratch/text" || fail "--from-deploy: no summary: $(cat "$scratch/text")"
echo "ok: --from-deploy deploy/ configures the embedded bundle"

# A clean tree passes.
mkdir clean
cat >clean/namespace.yaml <<'YAML'
apiVersion: v1
kind: ConfigMap
metadata:
  name: plain
  namespace: default
data: {}
YAML
"$cli" check clean >"$scratch/clean" || fail "a clean tree should exit 0: $(cat "$scratch/clean")"
echo "ok: a clean tree exits 0"
