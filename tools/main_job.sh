#!/usr/bin/env bash
# The main job (`make run`): the device list, then the benchmark suite on the CPU device (`hcq bench`, full sizes:
# about 15-60 s on 2 cores). Every result is verified; the script fails if one is not. HCQ_BENCH_ARGS adds options
# (e.g. --json, --quick).
set -eu
hcq=${1:-build/hcq}
echo "== hcq devices"
"$hcq" devices
echo "== hcq bench ${HCQ_BENCH_ARGS:-}"
# shellcheck disable=SC2086
"$hcq" bench ${HCQ_BENCH_ARGS:-}
