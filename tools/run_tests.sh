#!/usr/bin/env bash
# Runs each test binary given on the command line from the repository root; prints one line per test and a
# summary. A test exiting 77 is SKIPPED (printed loudly, never counted as passed). Any failure fails the run.
set -u
pass=0; fail=0; skip=0; failed=(); skipped=()
timeout_s=${HCQ_TEST_TIMEOUT_S:-600}
for t in "$@"; do
  start=$EPOCHREALTIME
  out=$(timeout "$timeout_s" "$t" 2>&1); rc=$?
  secs=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.2f", b-a}')
  if [ $rc -eq 0 ]; then
    pass=$((pass+1)); printf 'PASS  %-50s %6ss  %s\n' "$t" "$secs" "$(printf '%s\n' "$out" | tail -n 1)"
  elif [ $rc -eq 77 ]; then
    skip=$((skip+1)); skipped+=("$t"); printf 'SKIP  %-50s %s\n' "$t" "$(printf '%s\n' "$out" | grep SKIPPED | head -n 1)"
  else
    fail=$((fail+1)); failed+=("$t"); printf 'FAIL  %-50s rc=%d\n' "$t" $rc; printf '%s\n' "$out" | tail -n 40 | sed 's/^/      /'
  fi
done
echo "tests: $pass passed, $fail failed, $skip skipped"
[ $skip -gt 0 ] && echo "!!! SKIPPED (not passed): ${skipped[*]}"
[ $fail -gt 0 ] && { echo "FAILED: ${failed[*]}"; exit 1; }
exit 0
