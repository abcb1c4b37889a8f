#!/usr/bin/env bash
# expect_ok_or_error.sh COMMAND [ARGS...]
# For inputs that may or may not be valid (bit-flipped models): passes when
# COMMAND either succeeds (exit 0, stderr holding only "perfc: warning: "
# lines) or fails cleanly (exit 1, nothing on stdout, exactly one stderr
# line starting with "perfc: error: "). A signal, any other exit code or a
# messy stderr fails.
set -u
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
"$@" >"$out" 2>"$err"
rc=$?
fail() {
  echo "FAIL: $*"
  echo "--- exit code: $rc"
  echo "--- stderr:"
  cat "$err"
  exit 1
}
[ "$rc" -lt 128 ] || fail "killed by a signal (crash or abort)"
if [ "$rc" -eq 0 ]; then
  if grep -qv "^perfc: warning: " "$err"; then
    fail "exit 0 with a stderr line that is not a warning"
  fi
  echo "ok: succeeded"
  exit 0
fi
[ "$rc" -eq 1 ] || fail "exit code $rc, expected 0 or 1"
[ ! -s "$out" ] || fail "printed on stdout"
lines=$(wc -l <"$err")
[ "$lines" -eq 1 ] || fail "stderr has $lines lines, expected exactly one"
grep -Eq "^perfc: error: " "$err" || fail "stderr does not start with 'perfc: error: '"
echo "ok: $(cat "$err")"
