#!/usr/bin/env bash
# expect_error.sh REGEX COMMAND [ARGS...]
# Passes when COMMAND exits non-zero without a crash (no signal), prints
# nothing on stdout, and prints exactly one line on stderr that starts with
# "perfc: error: " and matches the extended REGEX.
set -u
regex="$1"
shift
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
fail() {
  echo "FAIL: $*"
  echo "--- command: $*"
  echo "--- exit code: $rc"
  echo "--- stderr:"
  cat "$err"
  exit 1
}
[ "$rc" -ne 0 ] || fail "exit code 0, expected an error"
[ "$rc" -lt 128 ] || fail "killed by a signal (crash or abort)"
[ ! -s "$out" ] || fail "printed on stdout"
lines=$(wc -l <"$err")
[ "$lines" -eq 1 ] || fail "stderr has $lines lines, expected exactly one"
grep -Eq "^perfc: error: " "$err" || fail "stderr does not start with 'perfc: error: '"
grep -Eq -- "$regex" "$err" || fail "stderr does not match: $regex"
echo "ok: $(cat "$err")"
