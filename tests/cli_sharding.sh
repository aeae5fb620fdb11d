#!/usr/bin/env bash
# `ltx2 inspect --sharding PROFILE --mesh D,F,C,T` on the tiny 2.3 checkpoint: per-rank layout under
# MaxDiffusion's profiles, and clear refusals (exit 2) for unknown profiles and meshes that do not divide.
set -u
LTX2=$1; SRC=$2
CK=$SRC/weights/tiny/ltx2-tiny-2.3.safetensors
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*" >&2; }
expect_rc() {
  local want=$1 what=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, want $want"; echo "$out" | tail -n 20 >&2; fi
}
has() {
  if grep -qE -- "$1" <<<"$out"; then ok; else bad "$2: output lacks /$1/"; echo "$out" | tail -n 20 >&2; fi
}
expect_rc 0 "trillium 2x2" "$LTX2" inspect --sharding trillium --mesh 1,2,2,1 "$CK"
has '^sharding profile trillium, mesh data=1 fsdp=2 context=2 tensor=1 \(4 ranks\)' "header"
has '^rank 3 \(data 0, fsdp 1, context 1, tensor 0\)' "rank lines"
has 'per rank: .*of the model\)' "totals"
expect_rc 0 "ironwood tensor=2" "$LTX2" inspect --sharding ironwood --mesh 1,1,1,2 "$CK"
has 'transformer_blocks\.0\.attn1\.to_q\.weight +bf16 +\[64, 64\] +\[tensor, -\] +\[32, 64\]' "column-parallel q"
expect_rc 2 "unknown profile" "$LTX2" inspect --sharding bogus --mesh 1,1,1,2 "$CK"
has "unknown sharding profile 'bogus'" "profile named"
expect_rc 2 "non-dividing mesh" "$LTX2" inspect --sharding ironwood --mesh 1,1,1,3 "$CK"
has 'does not divide it' "divisibility error"
expect_rc 2 "mesh without profile" "$LTX2" inspect --mesh 1,1,1,2 "$CK"
expect_rc 2 "bad mesh" "$LTX2" inspect --sharding gpu --mesh 1,x,1 "$CK"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
