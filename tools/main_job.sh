#!/usr/bin/env bash
# The main job (`make run`): the device list, the GPU drivers on their mocks (the emulated KFD and RM/UVM, since a
# build machine rarely has the GPUs: one kernel on each, checked against the reference interpreter), then the
# benchmark suite on the CPU device (`hcq bench`, full sizes: a few minutes on 2 cores). Every result is verified;
# the script fails if one is not. HCQ_BENCH_ARGS adds options (e.g. --json, --quick, --repeat 3).
set -eu
hcq=${1:-build/hcq}
echo "== hcq devices"
"$hcq" devices
echo "== HCQ_MOCK=amd,nv hcq devices (the emulated GPUs)"
HCQ_MOCK=amd,nv "$hcq" devices
for dev in amd:0 nv:0; do
  echo "== HCQ_MOCK=amd,nv hcq run --dev $dev --check examples/matmul.uop"
  HCQ_MOCK=amd,nv "$hcq" run --dev "$dev" --check examples/matmul.uop
done
echo "== hcq bench ${HCQ_BENCH_ARGS:-}"
# shellcheck disable=SC2086
"$hcq" bench ${HCQ_BENCH_ARGS:-}
