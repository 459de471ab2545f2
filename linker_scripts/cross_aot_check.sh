#!/usr/bin/env bash
# Ahead-of-time kernel image across machines: cross_aot_check.sh ARCH CROSS_BUILD HOST_HCQ
#
# On this (x86_64) host, HOST_HCQ compiles examples/saxpy.uop into a kernel image for ARCH (the cross gcc and ld,
# linker_scripts/cpu_kernel.ld); CROSS_BUILD/hcq, the hcq command built for ARCH, runs it under qemu-user with no
# compiler reachable. Checked:
#  1. `hcq run --image k.img --var n=1000 --out 0=out.bin` (buffers filled from the default seed) gives the same
#     bytes as the host computing the kernel from source (`HOST_HCQ run examples/saxpy.uop`, same fill);
#  2. with --in files written here, out.bin equals y = 2.5 x + y for i < n (y unchanged beyond), computed here in
#     Python (inputs are multiples of 1/64 of small size: exact in float32, fused multiply-add or not).
set -eu
arch=$1 build=$2 host_hcq=$3
case $arch in
  aarch64) triple=aarch64-linux-gnu qemu=qemu-aarch64 ;;
  armhf) triple=arm-linux-gnueabihf qemu=qemu-arm ;;
  *) echo "cross_aot_check: unknown ARCH '$arch'"; exit 2 ;;
esac
tmp=$(mktemp -d /tmp/hcq-cross-aot.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
n=1000
t0=$(date +%s.%N)
"$host_hcq" compile --target c --arch "$arch" -o "$tmp/k.img" examples/saxpy.uop
t1=$(date +%s.%N)
run() { HCQ_CC=/nonexistent "$qemu" -L "/usr/$triple" "$build/hcq" run --image "$tmp/k.img" "$@"; }
run --var n=$n --out 0="$tmp/out.bin"
t2=$(date +%s.%N)
"$host_hcq" run --noopt examples/saxpy.uop --var n=$n --out 0="$tmp/ref.bin" > /dev/null
cmp "$tmp/out.bin" "$tmp/ref.bin" || { echo "cross_aot_check: $arch image output differs from the host's computation"; exit 1; }

python3 - "$tmp" <<'EOF'
import array, sys
d = sys.argv[1]
N = 1048576
y = array.array('f', ((i % 256) / 16 - 8 for i in range(N)))
x = array.array('f', (1 - (i % 128) / 64 for i in range(N)))
open(d + '/y.bin', 'wb').write(y.tobytes())
open(d + '/x.bin', 'wb').write(x.tobytes())
EOF
run --var n=$n --in 0="$tmp/y.bin" --in 1="$tmp/x.bin" --out 0="$tmp/out2.bin"
python3 - "$tmp" $n <<'EOF'
import array, sys
d, n = sys.argv[1], int(sys.argv[2])
y, x, out = (array.array('f') for _ in range(3))
y.frombytes(open(d + '/y.bin', 'rb').read())
x.frombytes(open(d + '/x.bin', 'rb').read())
out.frombytes(open(d + '/out2.bin', 'rb').read())
want = array.array('f', (2.5 * x[i] + y[i] if i < n else y[i] for i in range(len(y))))
bad = [i for i in range(len(y)) if out[i] != want[i]]
if len(out) != len(y) or bad:
    print('cross_aot_check: %d of %d elements differ, first at %s' % (len(bad), len(y), bad[:1]))
    sys.exit(1)
EOF
img_B=$(stat -c %s "$tmp/k.img")
awk -v a="$arch" -v b="$img_B" -v q="$qemu" -v t0="$t0" -v t1="$t1" -v t2="$t2" 'BEGIN {
  printf "cross_aot_check: %s saxpy image (%d bytes) built here in %.2f s, ran under %s in %.2f s: output matches the host and Python\n", a, b, t1 - t0, q, t2 - t1 }'
