#!/usr/bin/env bash
# The main job (`make run`). Until the CPU device lands, it demonstrates `hcq simplify` on the examples.
set -eu
hcq=${1:-build/hcq}
if [ -f examples/simplify.txt ] && "$hcq" simplify --help >/dev/null 2>&1; then
  echo "== hcq simplify --file examples/simplify.txt"
  "$hcq" simplify --file examples/simplify.txt
else
  "$hcq" version
fi
