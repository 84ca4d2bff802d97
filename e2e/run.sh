#!/usr/bin/env bash
# Runs every policy case through `kwctl run` with bats (e2e/kwctl.bats).
#
# The suite runs twice:
#   1. against `cozystack-policies run`, the host with kwctl's flags and
#      output, so the harness itself is always exercised;
#   2. against kwctl, when kwctl is on PATH. Without kwctl every case of this
#      pass is reported as skipped, by name: never a silent pass.
set -euo pipefail
cd "$(dirname "$0")/.."

need() { # need <command> <debian package>
  command -v "$1" >/dev/null && return
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing $2 for the e2e suite" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null \
      || { apt-get update -qq >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null; }
  else
    echo "e2e: $1 is missing; install the Debian package $2" >&2
    exit 1
  fi
}
need bats bats
need jq jq

cli=$PWD/target/release/cozystack-policies
export E2E_ROOT=$PWD E2E_CLI=$cli

# One @test per case file, appended to the template.
suite=target/e2e/cases.bats
mkdir -p target/e2e
cp e2e/kwctl.bats "$suite"
for case_file in policies/*/tests/cases/*.yaml; do
  policy=$(basename "$(dirname "$(dirname "$(dirname "$case_file")")")")
  printf '\n@test "[$E2E_LABEL] %s/%s" {\n  run_case %s "$E2E_ROOT/%s"\n}\n' \
    "$policy" "$(basename "$case_file" .yaml)" "$policy" "$case_file" >>"$suite"
done

echo "== e2e harness against the host (cozystack-policies run)"
E2E_RUNNER="$cli" E2E_LABEL=host bats "$suite"

echo "== e2e against kwctl"
if command -v kwctl >/dev/null; then
  echo "kwctl: $(kwctl --version 2>/dev/null | head -1)"
  E2E_RUNNER=kwctl E2E_LABEL=kwctl bats "$suite"
else
  echo "kwctl is not on PATH: every case below is SKIPPED (install kwctl to run them)"
  E2E_RUNNER= E2E_LABEL=kwctl bats "$suite"
fi
