#!/usr/bin/env bash
# Runs every policy case through `kwctl run` with bats (e2e/kwctl.bats).
#
# The suite runs twice, both passes at once:
#   1. against `cozystack-policies run`, the host with kwctl's flags and
#      output, so the harness itself is always exercised;
#   2. against kwctl, when kwctl is on PATH. Without kwctl every case of this
#      pass is reported as skipped, by name: never a silent pass; under CI
#      (CI=true) a missing kwctl is a failure.
set -euo pipefail
cd "$(dirname "$0")/.."

tools/need bats bats
tools/need jq jq

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

# The two passes run side by side (bats runs one case at a time), each
# into its own log, printed in turn when both have ended.
logs=target/e2e/logs
mkdir -p "$logs"
# Compiled modules are cached, as kwctl caches them, here rather than in the
# user's cache directory.
XDG_CACHE_HOME=$PWD/target/e2e/cache E2E_RUNNER="$cli" E2E_LABEL=host \
  bats "$suite" >"$logs/host.tap" 2>&1 &
host_pass=$!

kwctl_status=0 runner=kwctl
if command -v kwctl >/dev/null; then
  header="kwctl: $(kwctl --version 2>/dev/null | head -1)"
elif [ "${CI:-}" = true ]; then
  header="kwctl is not on PATH, and under CI that is a failure (make setup installs it from ../shared/kubewarden)"
  runner=
  kwctl_status=1
else
  header="kwctl is not on PATH: every case below is SKIPPED (make setup installs it from ../shared/kubewarden)"
  runner=
fi
if [ "$kwctl_status" -eq 0 ]; then
  { echo "$header"; E2E_RUNNER=$runner E2E_LABEL=kwctl bats "$suite"; } >"$logs/kwctl.tap" 2>&1 \
    || kwctl_status=$?
else
  echo "$header" >"$logs/kwctl.tap"
fi
host_status=0
wait "$host_pass" || host_status=$?

echo "== e2e harness against the host (cozystack-policies run)"
cat "$logs/host.tap"
echo "== e2e against kwctl"
cat "$logs/kwctl.tap"
[ "$host_status" -eq 0 ] && [ "$kwctl_status" -eq 0 ]
