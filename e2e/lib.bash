# Helpers for e2e/kwctl.bats.

# run_case POLICY CASE_FILE: splits the case into kwctl's input files, runs
# the policy module once, and checks the verdict against `expect`.
run_case() {
  local policy=$1 case_file=$2
  if [ -z "${E2E_RUNNER:-}" ]; then
    skip "kwctl is not on PATH"
  fi
  local dir="$BATS_TEST_TMPDIR/case"
  "$E2E_CLI" case-files --runner "$E2E_LABEL" "$case_file" "$dir"
  local args=(run --request-path "$dir/request.json" --settings-path "$dir/settings.json")
  if [ -f "$dir/session.yml" ]; then
    args+=(--allow-context-aware --replay-host-capabilities-interactions "$dir/session.yml")
  fi
  # kwctl would wait for Sigstore's trust root on the network otherwise.
  if [ "$E2E_LABEL" = kwctl ] && [ -n "${SIGSTORE_TRUST_CONFIG:-}" ]; then
    args+=(--sigstore-trust-config "$SIGSTORE_TRUST_CONFIG")
  fi
  args+=("$E2E_ROOT/dist/$policy.wasm")
  # shellcheck disable=SC2086 # E2E_RUNNER may be "command subcommand"
  run --separate-stderr $E2E_RUNNER "${args[@]}"

  # The expectation and the answer, read by one jq: its start-up is most of
  # what a case costs, and there are about a thousand runs.
  local response result expected_code expected_warnings allowed message warnings code
  local message_fragments=() warning_fragments=()
  response=$(grep '^{' <<<"$output" | tail -n 1)
  eval "$(jq -r --arg response "$response" '
    (try ($response | fromjson) catch {}) as $answer
    | @sh "result=\(.result)",
      @sh "expected_code=\(.code // "")",
      @sh "expected_warnings=\(.warnings // [] | length)",
      "message_fragments=(\(.message // [] | @sh))",
      "warning_fragments=(\(.warnings // [] | @sh))",
      @sh "allowed=\($answer.allowed | tostring)",
      @sh "message=\($answer.status.message // "")",
      @sh "warnings=\($answer.warnings // [] | join("\n"))",
      @sh "code=\($answer.status.code // "")"' "$dir/expect.json")"
  # A jq that failed leaves every variable empty: no case may pass on that.
  case $result in
    pass | skip | warn | fail | invalid-settings) ;;
    *) fail "no expected result read from $dir/expect.json: '$result'" ;;
  esac

  if [ "$result" = invalid-settings ]; then
    [ "$status" -ne 0 ] || fail "settings were accepted: $output"
    expect_fragments message "$output$stderr" "${message_fragments[@]}"
    return
  fi
  [ "$status" -eq 0 ] || fail "exit $status: $stderr"
  [ -n "$response" ] || fail "no AdmissionResponse in: $output"
  expect_tags "$warnings"
  [ "$allowed" = true ] || expect_tags "$message"
  case $result in
    pass)
      [ "$allowed" = true ] || fail "expected allowed, got: $response"
      [ -z "$warnings" ] || fail "expected no warnings, got: $response" ;;
    skip)
      # The webhook never sends it, but audit-scanner calls the policy
      # directly, and the policy may warn.
      [ "$allowed" = true ] || fail "expected allowed, got: $response"
      if [ "$expected_warnings" -gt 0 ]; then
        expect_fragments warnings "$warnings" "${warning_fragments[@]}"
      else
        [ -z "$warnings" ] || fail "expected no warnings, got: $response"
      fi ;;
    warn)
      [ "$allowed" = true ] || fail "expected allowed, got: $response"
      expect_fragments warnings "$warnings" "${warning_fragments[@]}" ;;
    fail)
      [ "$allowed" = false ] || fail "expected a rejection, got: $response"
      expect_fragments message "$message" "${message_fragments[@]}" ;;
  esac
  if [ -n "$expected_code" ] && [ "$code" != "$expected_code" ]; then
    fail "expected code $expected_code, got: $response"
  fi
}

# expect_tags TEXT: every line of TEXT starts with the tag of a rule the
# policy's README lists (`[<policy>/<rule>] `, `<a id="rule-<rule>"></a>`).
expect_tags() {
  local text=$1 line id tag="^\\[$policy/([a-z0-9-]+)\\] "
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    [[ "$line" =~ $tag ]] || { fail "no [$policy/<rule>] tag: $line"; return 1; }
    id=${BASH_REMATCH[1]}
    grep -qF "<a id=\"rule-$id\"></a>" "$E2E_ROOT/policies/$policy/README.md" || {
      fail "rule $id is not in the Rules table of policies/$policy/README.md: $line"
      return 1
    }
  done <<<"$text"
}

# expect_fragments WHAT TEXT FRAGMENT...: every fragment occurs in TEXT.
expect_fragments() {
  local what=$1 text=$2 fragment
  shift 2
  for fragment in "$@"; do
    [[ "$text" == *"$fragment"* ]] || fail "missing $what fragment: $fragment
in: $text"
  done
}

fail() {
  echo "$1" >&2
  return 1
}
