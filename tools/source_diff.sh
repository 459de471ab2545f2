#!/bin/sh
# source_diff.sh BASE_HCQ NEW_HCQ [OUTDIR]: compiles every examples/*.uop on every target with --noopt, the
# heuristic (no opts) and four explicit opt strings, with both binaries, and diffs the outputs byte for byte (an
# error message is compared like a source). A guard for pipeline speed work, which must not change what is
# generated. Run from the repository root. Exit 0 when all are identical.
set -u
base=$1 new=$2 out=${3:-/tmp/source_diff}
rm -rf "$out" && mkdir -p "$out/base" "$out/new"
targets="c c:aarch64 c:armhf llvm-cpu ptx:sm_90 amdgpu:gfx1100"
fail=0 n=0
for f in examples/*.uop; do
  k=$(basename "$f" .uop)
  for t in $targets; do
    tt=$(echo "$t" | tr ':' '_')
    for mode in noopt heur up4 up4lc unr4 up24; do
      case $mode in
        noopt) args="--noopt" ;;
        heur) args="" ;;
        up4) args="--opts UPCAST:0:4" ;;
        up4lc) args="--opts UPCAST:0:4,LOCAL:0:2" ;;
        unr4) args="--opts UNROLL:0:4" ;;
        up24) args="--opts UPCAST:0:2,UPCAST:1:4" ;;
      esac
      o="$k.$tt.$mode"
      # shellcheck disable=SC2086
      "$base" compile --target "$t" $args "$f" >"$out/base/$o" 2>&1; rb=$?
      # shellcheck disable=SC2086
      "$new" compile --target "$t" $args "$f" >"$out/new/$o" 2>&1; rn=$?
      n=$((n + 1))
      if [ $rb != $rn ] || ! cmp -s "$out/base/$o" "$out/new/$o"; then
        echo "DIFF $o (rc $rb vs $rn)"
        fail=1
      fi
    done
  done
done
echo "$n compiles compared, $( [ $fail = 0 ] && echo all identical || echo differences found )"
exit $fail
