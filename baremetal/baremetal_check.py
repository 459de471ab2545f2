#!/usr/bin/env python3
"""Boot the bare-metal hcq ELF on qemu-system-aarch64 -M virt and check what it prints on the UART.

Expected values are computed here, independently of the runtime: saxpy with x[i] = i, y[i] = 1000 - i, n = 64
gives y[i] = 2.5*i + 1000 - i for i < n and leaves y[n] = 1000 - n; sum over x[i] = i % 16 of 65536 elements is
7.5 * 65536. All are exact in float32, so the printed bit patterns must match exactly. Exit status: qemu's, which is
the runtime's (semihosting SYS_EXIT), must be 0."""
import os, re, struct, subprocess, sys, time

def f32_bits(v):
    return struct.unpack("<I", struct.pack("<f", v))[0]

def main():
    elf = sys.argv[1]
    # -nodefaults and -nic none: the virt board's default virtio NIC needs efi-virtio.rom, which only a package
    # that --no-install-recommends leaves out ships (ipxe-qemu); the test needs no network and no ROM at all.
    cmd = ["qemu-system-aarch64", "-M", "virt", "-cpu", "cortex-a57", "-m", "128M", "-nographic", "-nodefaults",
           "-nic", "none", "-monitor", "none", "-serial", "stdio", "-semihosting-config", "enable=on,target=native", "-kernel", elf]
    t0 = time.time()
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    except subprocess.TimeoutExpired as e:
        print((e.stdout or b"").decode(errors="replace"))
        print("baremetal-test: FAIL: qemu did not exit within 60 s")
        return 1
    secs = time.time() - t0
    out = p.stdout.decode(errors="replace").replace("\r", "")
    print(out, end="")
    fails = []
    if p.returncode != 0:
        fails.append("qemu exit status %d (the runtime's status), want 0" % p.returncode)
    got = {}
    for m in re.finditer(r"^(\S+)\[(\d+)\] = \S+ \(0x([0-9a-f]{8})\)$", out, re.M):
        got[(m.group(1), int(m.group(2)))] = int(m.group(3), 16)
    n = 64
    want = {("saxpy.y", i): f32_bits(2.5 * i + 1000 - i) for i in list(range(0, n, 9)) + [n - 1]}
    want[("saxpy.y", n)] = f32_bits(1000.0 - n)
    want[("sum.out", 0)] = f32_bits(7.5 * 65536)
    for key, bits in want.items():
        if key not in got:
            fails.append("missing line %s[%d]" % key)
        elif got[key] != bits:
            fails.append("%s[%d] = 0x%08x, want 0x%08x (%r)" % (key + (got[key], bits, struct.unpack("<f", struct.pack("<I", bits))[0])))
    if "queue: 7 commands, signal = 2" not in out:
        fails.append("queue line with signal = 2 missing")
    if "hcq bare-metal: done" not in out:
        fails.append("no 'done' line")
    size = os.path.getsize(elf)
    print("baremetal-test: %d values checked, qemu ran %.2f s, image %s is %d bytes" % (len(want), secs, elf, size))
    if fails:
        for f in fails:
            print("baremetal-test: FAIL: " + f)
        return 1
    print("baremetal-test: PASS")
    return 0

if __name__ == "__main__":
    sys.exit(main())
