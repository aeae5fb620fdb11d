#!/usr/bin/env bash
# `ltx2 compare` on NumPy-written files (tests/data/compare, from gen_compare_data.py): it must flag
# the planted error (tensor b, index [2, 5], |diff| 0.5), pass the benign 1e-7 noise in a, and
# return 0/1/2 exactly as documented; and pair MaxDiffusion's module names and scan-stacked layers
# (maxdiffusion/) with a dump in ours, naming the layer of a planted error.
set -u
LTX2=$1; SRC=$2
D=$SRC/tests/data/compare
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description cmd...
  local want=$1 what=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, want $want"; echo "$out" >&2; fi
}
has() { # pattern description
  if grep -qE -- "$1" <<<"$out"; then ok; else bad "$2: output lacks /$1/"; echo "$out" >&2; fi
}

expect_rc 1 "dirs with planted error" "$LTX2" compare "$D/ref" "$D/out"
has '^  FAIL +b ' "b flagged"
has 'worst at \[2, 5\]: a=1\.59011209 b=2\.09011221' "worst element located"
has '^  ok +a ' "benign noise in a passes"
has '^  ok +h ' "identical f16 passes"
has '^  ok +v ' "identical 3-D passes"
has 'summary: 4 compared, 3 within tolerance, 1 FAIL' "summary line"
has ' 5\.000e-01 ' "max abs error measured"

expect_rc 1 "npz vs npz" "$LTX2" compare "$D/ref.npz" "$D/out.npz"
has '^  FAIL +b ' "b flagged in npz"
expect_rc 1 "dir vs npz" "$LTX2" compare "$D/ref" "$D/out.npz"
expect_rc 0 "same files" "$LTX2" compare "$D/ref" "$D/ref.npz"
expect_rc 0 "--only skips b" "$LTX2" compare --only '^(a|h|v)$' "$D/ref" "$D/out"
has 'summary: 3 compared, 3 within tolerance, 0 FAIL' "--only summary"
expect_rc 0 "looser atol passes b" "$LTX2" compare --atol 0.6 "$D/ref" "$D/out"
expect_rc 1 "tight atol fails the benign noise" "$LTX2" compare --atol 0 --rtol 0 --only '^a$' "$D/ref" "$D/out"
expect_rc 1 "single npy files" "$LTX2" compare "$D/ref/b.npy" "$D/out/b.npy"

expect_rc 1 "json" "$LTX2" compare --json "$D/ref" "$D/out"
has '"name": "b", "pass": false' "json marks b"
has '"worst_index": \[2, 5\]' "json worst index"
has '"max_abs": 0\.500000119' "json max abs"
has '"pass": false\}$' "json overall"

expect_rc 2 "missing file" "$LTX2" compare "$D/ref" "$D/nope"
has 'nope' "missing file named"
expect_rc 2 "bad number" "$LTX2" compare --atol abc "$D/ref" "$D/out"
expect_rc 2 "negative tol" "$LTX2" compare --rtol -1 "$D/ref" "$D/out"
expect_rc 2 "bad regex" "$LTX2" compare --only '(' "$D/ref" "$D/out"
expect_rc 2 "unknown flag" "$LTX2" compare --frobnicate "$D/ref" "$D/out"
expect_rc 2 "one input" "$LTX2" compare "$D/ref"
expect_rc 2 "nothing in common" "$LTX2" compare --only '^zzz$' "$D/ref" "$D/out"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
head -c 70 "$D/ref/b.npy" > "$tmp/b.npy"
expect_rc 2 "truncated npy" "$LTX2" compare "$D/ref/b.npy" "$tmp/b.npy"
has 'b\.npy' "truncated file named"
mkdir "$tmp/shape"; cp "$D/ref/a.npy" "$tmp/shape/b.npy"
expect_rc 1 "shape mismatch" "$LTX2" compare --only '^b$' "$D/ref" "$tmp/shape"
has 'shape mismatch' "shape mismatch reported"
# two lone tensors of different names are the pair (a TPU dump's x.npy against our b.npy)
cp "$D/out/b.npy" "$tmp/x.npy"
expect_rc 1 "lone files, other names" "$LTX2" compare "$D/ref/b.npy" "$tmp/x.npy"
has "one tensor on each side: 'b' \(A\) compared with 'x' \(B\)" "lone files paired"
has 'worst at \[2, 5\]' "lone files compared"
# a per-sample timestep against per-token ones whose tokens share the sample's sigma
expect_rc 0 "per-sample vs per-token" "$LTX2" compare "$D/per_token/sample.npy" "$D/per_token/token.npy"
has 'B is constant over its trailing dims' "per-token side collapsed"
expect_rc 0 "per-token vs per-sample" "$LTX2" compare "$D/per_token/token.npy" "$D/per_token/sample.npy"
expect_rc 1 "tokens that differ are not collapsed" "$LTX2" compare "$D/per_token/sample.npy" "$D/per_token/token_bad.npy"
has 'shape mismatch' "differing tokens: a shape mismatch"
# MaxDiffusion's module names and scan-stacked blocks against a dump in ours (maxdiffusion/)
M=$D/maxdiffusion
expect_rc 0 "our dump vs MaxDiffusion names" "$LTX2" compare "$M/ours" "$M/md.npz"
has '^  ok +patchify_proj\.out .*\(B: proj_in\.out\)' "proj_in mapped"
has '^  ok +adaln_single\.out .*\(B: time_embed\.out\)' "time_embed mapped"
has '^  ok +video_args\.pe\.cos .*\(B: rope\.cos\)' "rope mapped"
has '^  ok +transformer_blocks\.1\.attn1\.out .*\(B: transformer_blocks\.\[1\]\.attn1\.out\)' "stacked layer 1"
has 'summary: 5 compared, 5 within tolerance, 0 FAIL$' "every tensor compared"
expect_rc 1 "planted error in stacked layer 1" "$LTX2" compare "$M/md_bad.npz" "$M/ours"
has '^  FAIL +transformer_blocks\.\[1\]\.attn1\.out .*\(B: transformer_blocks\.1\.attn1\.out\)' "layer 1 flagged"
has '^  ok +transformer_blocks\.\[0\]\.attn1\.out ' "layer 0 passes"
has 'worst at \[0, 2, 1\]: .*\|a-b\|=2\.500e-01' "worst element in the layer"
has 'summary: 5 compared, 4 within tolerance, 1 FAIL$' "one failure"
expect_rc 1 "json mapped names" "$LTX2" compare --json "$M/ours" "$M/md_bad.npz"
has '"name": "patchify_proj\.out", "name_b": "proj_in\.out", "pass": true' "json both names"
has '"name": "transformer_blocks\.1\.attn1\.out", "name_b": "transformer_blocks\.\[1\]\.attn1\.out", "layer": 1, "pass": false' "json layer"
has '"only_in_a": \[\], "only_in_b": \[\]' "json nothing left over"
expect_rc 2 "--names none: nothing in common" "$LTX2" compare --names none "$M/ours" "$M/md.npz"
expect_rc 2 "bad --names" "$LTX2" compare --names diffusers "$M/ours" "$M/md.npz"
mkdir "$tmp/one_layer"; cp "$M/ours/"{patchify_proj.out,transformer_blocks.0.attn1.out}.npy "$tmp/one_layer/"
expect_rc 0 "a stack of 2 is not split over 1 layer" "$LTX2" compare "$tmp/one_layer" "$M/md.npz"
has 'only in A \(1\): transformer_blocks\.0\.attn1\.out' "lone layer left over"
has 'only in B \(3\):.* transformer_blocks\.attn1\.out' "stack left over"
# --json: errors are JSON on stdout too
out=$("$LTX2" compare --json "$D/ref" "$D/nope" 2>/dev/null); rc=$?
[ "$rc" -eq 2 ] && ok || bad "json error: exit $rc, want 2"
has '^\{"a": .*"error": ".*nope.*", "pass": false\}$' "json error object"
expect_rc 0 "help" "$LTX2" compare --help
# --bf16-ulps: a [4] f32 .npy pair, B one bf16 ulp off at [1] (1 -> 1 + 2^-7) and three at [2] (3 -> 3 + 3 * 2^-6 = 3.046875)
npy_f32x4() { # FILE, then the 16 data bytes as \x escapes
  local hdr="{'descr': '<f4', 'fortran_order': False, 'shape': (4,), }"
  while [ $(( (10 + ${#hdr} + 1) % 64 )) -ne 0 ]; do hdr="$hdr "; done
  { printf '\x93NUMPY\x01\x00'; printf "\\x$(printf %02x $(( (${#hdr} + 1) % 256 )))\\x00"; printf '%s\n' "$hdr"
    printf "$2"; } > "$1"
}
npy_f32x4 "$tmp/ulp_a.npy" '\x00\x00\x80\x3f\x00\x00\x80\x3f\x00\x00\x40\x40\x00\x00\x00\xbf'
npy_f32x4 "$tmp/ulp_b.npy" '\x00\x00\x80\x3f\x00\x00\x81\x3f\x00\x00\x43\x40\x00\x00\x00\xbf'
expect_rc 1 "one bf16 ulp allowed, three found" "$LTX2" compare --bf16-ulps 1 "$tmp/ulp_a.npy" "$tmp/ulp_b.npy"
has 'within tolerance: \|a - b\| <= 1 bf16 ulps of max' "ulp rule stated"
has "^  FAIL .* 75\\.0000% +3 +1 " "largest 3 ulps, one value over one ulp"
has 'worst at \[2\]: a=3 b=3\.046875' "the 3-ulp value located"
expect_rc 0 "three bf16 ulps allowed" "$LTX2" compare --bf16-ulps 3 "$tmp/ulp_a.npy" "$tmp/ulp_b.npy"
expect_rc 1 "json bf16 ulps" "$LTX2" compare --json --bf16-ulps 1 "$tmp/ulp_a.npy" "$tmp/ulp_b.npy"
has '"bf16_ulps": 1,' "json names the rule"
has '"max_bf16_ulps": 3, "n_over_bf16_ulp": 1' "json ulp counts"
expect_rc 2 "bf16 ulps must be positive" "$LTX2" compare --bf16-ulps 0 "$tmp/ulp_a.npy" "$tmp/ulp_b.npy"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
