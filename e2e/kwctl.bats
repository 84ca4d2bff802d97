#!/usr/bin/env bats
# The template e2e/run.sh turns into one test per case file: run.sh appends
# a `@test` for every `policies/*/tests/cases/*.yaml` (bats 1.8, as Debian
# ships it, cannot register tests at load time).

bats_require_minimum_version 1.5.0
load "$E2E_ROOT/e2e/lib.bash"
