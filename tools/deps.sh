#!/usr/bin/env bash
# Installs the Debian packages a goal needs when they are missing (as root), or prints the exact apt-get line
# and fails (not root). Goals: test (the whole suite), run (the main job).
set -eu
goal=${1:-test}
# run: the compiler for kernels, and OpenBLAS for the matmul baseline (hcq bench dlopens libopenblas.so.0).
pkgs_run="gcc make libc6-dev libopenblas0"
pkgs_test="$pkgs_run python3 libdrm-dev linux-source-6.1 xz-utils llvm-19 clang-19 lld-19 \
  gcc-aarch64-linux-gnu gcc-arm-linux-gnueabihf libc6-dev-arm64-cross libc6-dev-armhf-cross qemu-user qemu-system-arm \
  libopenblas-dev"
case "$goal" in
  run) want=$pkgs_run ;;
  test) want=$pkgs_test ;;
  *) echo "deps.sh: unknown goal '$goal' (expected run or test)" >&2; exit 2 ;;
esac
missing=()
for p in $want; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
line="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "hcq: missing Debian packages for 'make $goal'. Run as root:" >&2
  echo "  apt-get update && $line" >&2
  exit 1
fi
echo "hcq: installing missing packages: ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
