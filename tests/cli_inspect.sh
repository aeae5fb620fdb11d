#!/usr/bin/env bash
# `ltx2 inspect` on the tiny checkpoints made by ltx-core/diffusers (weights/tiny): it must name the
# layout and the version, list components, and fail cleanly (exit 2, a message) on bad input.
set -u
LTX2=$1; SRC=$2
W=$SRC/weights/tiny
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*" >&2; }
expect_rc() {
  local want=$1 what=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, want $want"; echo "$out" >&2; fi
}
has() {
  if grep -qE -- "$1" <<<"$out"; then ok; else bad "$2: output lacks /$1/"; echo "$out" >&2; fi
}

expect_rc 0 "2.0 single file" "$LTX2" inspect "$W/ltx2-tiny-2.0.safetensors"
has 'Lightricks single-file checkpoint, LTX-2\.0' "2.0 detected"
has '^  transformer ' "transformer component"
has '^  video_vae ' "vae component"
has '^  audio_vae ' "audio vae component"
has '^  vocoder ' "vocoder component"
has '^config\.transformer:' "config summary"
expect_rc 0 "2.3 single file" "$LTX2" inspect --tensors "$W/ltx2-tiny-2.3.safetensors"
has 'LTX-2\.3 \(config: ' "2.3 detected from config"
has 'to_gate_logits' "tensor list"
expect_rc 0 "diffusers transformer (sharded)" "$LTX2" inspect "$W/ltx2-tiny-diffusers-2.3/transformer"
has 'diffusers component, LTX-2\.3' "diffusers 2.3"
expect_rc 0 "diffusers 2.0" "$LTX2" inspect "$W/ltx2-tiny-diffusers-2.0/transformer"
has 'diffusers component, LTX-2\.0' "diffusers 2.0"
idx=$(ls "$W"/ltx2-tiny-diffusers-2.3/transformer/*.index.json | head -n1)
expect_rc 0 "index json" "$LTX2" inspect "$idx"
has 'sharded safetensors \([0-9]+ shards' "shards counted"
expect_rc 0 "upsampler" "$LTX2" inspect "$W/ltx2-tiny-upsampler-spatial-x2-rational.safetensors"
has 'latent upsampler' "upsampler layout"
expect_rc 0 "MaxDiffusion cache" "$LTX2" inspect "$SRC/tests/golden/data/md_weights_2.3_bfloat16_scan1.safetensors"
has 'MaxDiffusion converted-weights cache of an LTX-2 DiT \(2 blocks, stacked' "MaxDiffusion cache, stacked"
expect_rc 0 "MaxDiffusion cache per block" "$LTX2" inspect "$SRC/tests/golden/data/md_weights_2.0_float32_scan0.safetensors"
has '\(2 blocks, one key set per block' "MaxDiffusion cache, per block"
expect_rc 0 "npz" "$LTX2" inspect --tensors "$SRC/tests/data/compare/ref.npz"
has 'f16 x1' "npz dtypes"

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
printf 'not a safetensors file at all' > "$tmp/junk.safetensors"
expect_rc 2 "junk file" "$LTX2" inspect "$tmp/junk.safetensors"
has 'junk\.safetensors' "junk file named in the error"
head -c 5000 "$W/ltx2-tiny-2.0.safetensors" > "$tmp/cut.safetensors"
expect_rc 2 "truncated checkpoint" "$LTX2" inspect "$tmp/cut.safetensors"
has 'cut\.safetensors' "truncated file named"
expect_rc 2 "missing" "$LTX2" inspect "$tmp/missing.safetensors"
expect_rc 2 "no args" "$LTX2" inspect
expect_rc 2 "unknown flag" "$LTX2" inspect --bogus "$W/ltx2-tiny-2.0.safetensors"
expect_rc 0 "help" "$LTX2" inspect --help
expect_rc 0 "top help" "$LTX2" --help
has 'inspect FILE\|DIR' "help lists inspect"
expect_rc 2 "unknown command" "$LTX2" frobnicate

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
