#!/bin/bash
# Regenerates the AMD autogen outputs into OUTDIR (autogen/ for `make autogen`, a temp dir for `make autogen-check`):
#   kfd.h kfd_abi_list.h kfd_decode.c kfd_decode.h   from the installed linux/kfd_ioctl.h      (autogen/gen/kfd.spec)
#   amd_pm4.h amd_sdma.h amd_regs_gfx{9,11,942,12}.h amd_nbio.h  from the linux-source-6.1 tarball and the upstream
#   lines autogen/gen/amd.spec carries (autogen/gen/amd.spec)
# Run from the repository root. Needs: cc, tar with xz, dpkg-query, linux-source-6.1, linux-libc-dev.
set -euo pipefail
out=${1:?usage: autogen/gen/gen_amd.sh OUTDIR}
CC=${CC:-cc}
tarball=/usr/src/linux-source-6.1.tar.xz
kfd_hdr=$(awk '$1=="header"{print $2}' autogen/gen/kfd.spec)

die() { echo "autogen(amd): $*" >&2; exit 1; }
[ -f "$tarball" ] || die "$tarball not found: install the Debian package linux-source-6.1 (apt-get install linux-source-6.1)"
[ -n "$kfd_hdr" ] || die "autogen/gen/kfd.spec: no 'header' line"
[ -f "$kfd_hdr" ] || die "$kfd_hdr not found: install the Debian package linux-libc-dev"
command -v dpkg-query >/dev/null || die "dpkg-query not found: the pinned versions can only be checked on Debian"

# Pinned package versions: a different version may change the outputs, so stop and say so.
pins_of() { awk -v f="$1" '$1=="pin"{ if (NF!=3) { print f":"NR": malformed pin line" > "/dev/stderr"; exit 1 } print $2" "$3 }' "$1"; }
check_pins() {
  while read -r pkg ver; do
    have=$(dpkg-query -W -f='${Version}' "$pkg" 2>/dev/null) || die "$1: pinned package $pkg is not installed"
    [ "$have" = "$ver" ] || die "$1: $pkg is $have here but pinned to $ver; update the pin and review the regenerated diff"
  done
}
pins_of autogen/gen/amd.spec | check_pins autogen/gen/amd.spec
pins_of autogen/gen/kfd.spec | check_pins autogen/gen/kfd.spec
kfd_pins=$(pins_of autogen/gen/kfd.spec | paste -sd, -)

mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
GENFLAGS="-std=gnu11 -Wall -Wextra -Werror -O1 -I. -D_GNU_SOURCE"
$CC $GENFLAGS autogen/gen/amdgen.c autogen/gen/macro_table.c base/status.c -o "$tmp/amdgen"
$CC $GENFLAGS autogen/gen/kfdgen.c autogen/gen/macro_table.c base/status.c -o "$tmp/kfdgen"

# One tar pass (~7 s) for every source the spec names.
mapfile -t srcs < <(awk '$1=="source"{print "linux-source-6.1/"$2}' autogen/gen/amd.spec | sort -u)
tar -xJf "$tarball" -C "$tmp" linux-source-6.1/Makefile "${srcs[@]}" \
  || die "extracting ${srcs[*]} from $tarball failed (is a spec 'source' path wrong?)"
"$tmp/amdgen" autogen/gen/amd.spec "$tmp/linux-source-6.1" "$out"

# KFD: parse the header, measure it with a probe compiled against the real header, emit.
"$tmp/kfdgen" probe "$kfd_hdr" > "$tmp/probe.c"
$CC -std=gnu11 -Iautogen/gen/shim -I"$(dirname "$(dirname "$kfd_hdr")")" "$tmp/probe.c" -o "$tmp/probe"
"$tmp/probe" > "$tmp/facts"
"$tmp/kfdgen" emit "$kfd_hdr" "$tmp/facts" "$out" "$kfd_pins"
