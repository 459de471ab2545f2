#!/bin/bash
# Checks the header lines autogen/gen/amd.spec carries for sources newer than the pinned tarball (`upstream PATH TAG`
# blocks, `line TEXT` each) against a linux tree of that tag: every line must be a line of TREE/PATH, whitespace
# squeezed. Not run by `make autogen-check` (it needs the newer tree); run it when adding or changing such lines, e.g.
#   apt-get download linux-source-6.12 && dpkg-deb --fsys-tarfile linux-source-6.12_*.deb | tar -x
#   tar -xJf usr/src/linux-source-6.12.tar.xz && autogen/gen/check_upstream.sh linux-source-6.12
set -euo pipefail
tree=${1:?usage: autogen/gen/check_upstream.sh LINUX_TREE}
spec=${SPEC:-autogen/gen/amd.spec}
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
bad=0 n=0 path=
while IFS= read -r l; do
  case "$l" in
    "upstream "*)
      path=$(awk '{print $2}' <<<"$l")
      if [ -f "$tree/$path" ]; then tr -s ' \t' ' ' <"$tree/$path" >"$tmp"; else echo "$tree/$path: missing" >&2; : >"$tmp"; bad=1; fi ;;
    "source "*|"output "*) path= ;;
    "line "*)
      [ -n "$path" ] || { echo "$spec: line outside an upstream block: $l" >&2; bad=1; continue; }
      want=$(tr -s ' \t' ' ' <<<"${l#line }")
      if ! grep -qxF -- "$want" "$tmp"; then echo "$path: no line '$want'" >&2; bad=1; fi
      n=$((n + 1)) ;;
  esac
done <"$spec"
[ $bad -eq 0 ] || { echo "check_upstream: the spec's upstream lines differ from $tree" >&2; exit 1; }
echo "check_upstream: all $n upstream lines found in $tree"
