#!/usr/bin/env bash
# Runs the cross-built tests of BUILD under qemu-user: cross_run_tests.sh ARCH BUILD
#
# There is no binfmt_misc, so each test gets a one-line wrapper that starts it under qemu-aarch64 / qemu-arm with
# the cross sysroot (QEMU_LD_PREFIX = -L), and tools/run_tests.sh runs the wrappers. Kernels must be compiled for
# the emulated architecture: qemu-user only emulates the test process, and an execve of a host program (the shell,
# a compiler) runs it natively, so the tests reach the cross toolchain through PATH shims in BUILD/cross-bin:
# cc/gcc -> TRIPLE-gcc, ld -> TRIPLE-ld, clang-19 -> clang-19 --target=TRIPLE. HCQ_CC_TUNE replaces
# -march/-mcpu=native, which a cross compiler cannot detect (armhf: also -mfpu, or Debian's gcc stays at
# vfpv3-d16, without fused multiply-add). HCQ_QEMU_USER=1 tells tests about qemu-user limits
# (unknown ioctl numbers fail with ENOSYS). HCQ_FUZZ_SECONDS=5 (10 on armhf, where qemu-arm emulates 64-bit
# arithmetic with 32-bit instructions): the symbolic fuzzer needs >100 expressions. HCQ_CPU_GUARD_B=1 MiB: qemu 7.2
# takes ~1 s to map the 32 GiB of guards a 64-bit host puts around each device buffer (cpu/cpu_mem.h); for the same
# reason HCQ_NV_VA_WINDOW_B=1 GiB caps the GPU VA windows the NV driver reserves (1 TiB natively: nv/nv_mem.c).
set -eu
arch=$1 build=$2
case $arch in
  aarch64) triple=aarch64-linux-gnu qemu=qemu-aarch64 tune=-mcpu=cortex-a57 ;;
  armhf) triple=arm-linux-gnueabihf qemu=qemu-arm tune='-mcpu=cortex-a15 -mfpu=neon-vfpv4' fuzz_s=10 ;;
  *) echo "cross_run_tests: unknown ARCH '$arch'"; exit 2 ;;
esac
command -v $qemu >/dev/null || { echo "cross_run_tests: $qemu missing (apt-get install qemu-user)"; exit 1; }
root=$(pwd)
shims=$root/$build/cross-bin wraps=$root/$build/qemu-wrap
mkdir -p "$shims"
printf '#!/bin/sh\nexec %s "$@"\n' "$triple-gcc" > "$shims/cc"
printf '#!/bin/sh\nexec %s "$@"\n' "$triple-gcc" > "$shims/gcc"
printf '#!/bin/sh\nexec %s "$@"\n' "$triple-ld" > "$shims/ld"
if command -v clang-19 >/dev/null; then
  printf '#!/bin/sh\nexec %s --target=%s "$@"\n' "$(command -v clang-19)" "$triple" > "$shims/clang-19"
fi
chmod +x "$shims"/*
tests=()
for t in $(find "$build/tests" -type f -perm -u+x | sort); do
  w=$wraps/${t#$build/tests/}
  mkdir -p "$(dirname "$w")"
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$qemu" "$root/$t" > "$w"
  chmod +x "$w"
  tests+=("$w")
done
echo "== cross tests ($arch, ${#tests[@]} binaries) under $qemu -L /usr/$triple, kernels built with $triple-gcc $tune"
export QEMU_LD_PREFIX=/usr/$triple PATH=$shims:$PATH HCQ_CC=$triple-gcc HCQ_CC_TUNE=$tune HCQ_QEMU_USER=1 HCQ_NV_VA_WINDOW_B=1073741824 HCQ_FUZZ_SECONDS=${fuzz_s:-5} HCQ_CPU_GUARD_B=1048576
export XDG_CACHE_HOME=$root/$build/cache
exec bash tools/run_tests.sh "${tests[@]}"
