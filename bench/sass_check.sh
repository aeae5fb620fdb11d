#!/usr/bin/env bash
# Static checks of every CUDA kernel, runnable without a GPU: compiles each kernels/*.cu for sm_90a
# and sm_80 with ptxas -v and reports per file the entries, the most registers any entry uses and
# every spill or stack frame (any nonzero is a defect: local memory on the hot path); with
# cuobjdump on PATH (CUDA toolkit, or the nvidia-cuda-cuobjdump wheel) also the tensor-core and
# async-copy instructions in the SASS: HMMA (mma.sync), HGMMA (wgmma), LDSM (ldmatrix), LDGSTS
# (cp.async), UTMALDG (TMA). Exit 1 on a spill, a stack frame or a compile failure.
set -uo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d /tmp/ltx2_sass.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
rc=0
have_objdump=0
command -v cuobjdump >/dev/null && have_objdump=1
printf '%-16s %7s %8s %7s %7s' file entries max_regs spills stack
[ "$have_objdump" = 1 ] && printf '   sm_90a: %5s %5s %5s %6s %7s   sm_80: %5s' HMMA HGMMA LDSM LDGSTS UTMALDG HMMA
printf '\n'
for f in kernels/*.cu; do
  b=$(basename "$f" .cu)
  if ! nvcc -I kernels -I include -I src -O3 --expt-relaxed-constexpr \
      "--generate-code=arch=compute_90a,code=[sm_90a]" "--generate-code=arch=compute_80,code=[sm_80]" \
      -Xptxas -v -c "$f" -o "$tmp/$b.o" > "$tmp/$b.log" 2>&1; then
    echo "$b: compile FAILED"; tail -n 20 "$tmp/$b.log"; rc=1; continue
  fi
  entries=$(grep -c 'Compiling entry' "$tmp/$b.log")
  regs=$(grep -o 'Used [0-9]* registers' "$tmp/$b.log" | awk '{print $2}' | sort -n | tail -n 1)
  spills=$(grep -o '[0-9]* bytes spill' "$tmp/$b.log" | awk '{s += $1} END {print s + 0}')
  stack=$(grep -o '[0-9]* bytes stack frame' "$tmp/$b.log" | awk '{s += $1} END {print s + 0}')
  printf '%-16s %7s %8s %7s %7s' "$b" "$entries" "${regs:-0}" "$spills" "$stack"
  if [ "$have_objdump" = 1 ]; then
    s90=$(cuobjdump -sass -arch sm_90a "$tmp/$b.o" 2>/dev/null)
    s80=$(cuobjdump -sass -arch sm_80 "$tmp/$b.o" 2>/dev/null)
    printf '   sm_90a: %5s %5s %5s %6s %7s   sm_80: %5s' "$(grep -c 'HMMA' <<<"$s90")" "$(grep -c 'HGMMA' <<<"$s90")" \
      "$(grep -c 'LDSM' <<<"$s90")" "$(grep -c 'LDGSTS' <<<"$s90")" "$(grep -c 'UTMALDG' <<<"$s90")" \
      "$(grep -c 'HMMA' <<<"$s80")"
  fi
  printf '\n'
  [ "$spills" -eq 0 ] && [ "$stack" -eq 0 ] || rc=1
done
[ "$have_objdump" = 1 ] || echo "(no cuobjdump on PATH: SASS instruction counts skipped)"
exit $rc
