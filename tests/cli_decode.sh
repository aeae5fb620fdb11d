#!/usr/bin/env bash
# `ltx2 decode` on the tiny 2.0 checkpoint and a committed latent (tests/data/decode/latent_tiny.npy,
# [8, 3, 2, 3] -> 17 frames of 64x96): PNG frames appear, untiled and tiled + tile-batched, with the
# parameters in tEXt; decode noise flags on a timestep-conditioned VAE; bad flags exit 2 without
# creating anything. Skips (77) without libpng.
set -u
LTX2=$1; SRC=$2
LAT=$SRC/tests/data/decode/latent_tiny.npy
CKPT=$SRC/weights/tiny/ltx2-tiny-2.0.safetensors
T=$(mktemp -d /tmp/ltx2_cli_decode.XXXXXX)
trap 'rm -rf "$T"' EXIT
pass=0; fail=0
ok() { pass=$((pass+1)); }
bad() { fail=$((fail+1)); echo "FAIL: $*" >&2; }
expect_rc() { # want_rc description cmd...
  local want=$1 what=$2; shift 2
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, want $want"; echo "$out" >&2; fi
}

out=$("$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/plain" 2>&1); rc=$?
if [ "$rc" -ne 0 ] && grep -q "no libpng" <<<"$out"; then echo "skipped: no libpng"; exit 77; fi
if [ "$rc" -eq 0 ]; then ok; else bad "plain decode: exit $rc"; echo "$out" >&2; fi
n=$(ls "$T/plain" 2>/dev/null | grep -c '^frame_[0-9]\{5\}\.png$')
[ "$n" -eq 17 ] && ok || bad "plain decode wrote $n frames, want 17"
[ -z "$(ls "$T/plain" | grep -v '\.png$')" ] && ok || bad "leftover non-PNG files: $(ls "$T/plain")"
head -c 8 "$T/plain/frame_00016.png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' && ok || bad "not a PNG signature"
grep -aq 'tile_batch=1' "$T/plain/frame_00000.png" && ok || bad "tEXt parameters missing"
# the same directory again: refused while it holds frames, replaced with --overwrite (#16)
expect_rc 2 "non-empty --png-dir" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/plain"
grep -q "is not empty" <<<"$out" && ok || bad "non-empty --png-dir message: $out"
expect_rc 0 "--overwrite" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/plain" --overwrite
[ "$(ls "$T/plain" | grep -c '^frame_[0-9]\{5\}\.png$')" -eq 17 ] && ok || bad "--overwrite frame count"

expect_rc 0 "tiled + batched decode" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/tiled" \
  --tile-size 64 --tile-overlap 32 --tile-frames 16 --tile-frames-overlap 8 --tile-batch 3
grep -q '4 tiles, 2 VAE calls' <<<"$out" && ok || bad "tile/call counts: $out"
[ "$(ls "$T/tiled" | wc -l)" -eq 17 ] && ok || bad "tiled decode frame count"

# a timestep-conditioned, noise-injecting VAE (the tcond golden's tiny decoder): the decode noise
# follows --seed (same seed: same frames), --decode-noise-scale changes the result, the values
# are recorded in tEXt; plain VAEs accept the flags and ignore them
TC=$SRC/tests/golden/data/vae_tcond_tiny.safetensors
for run in "s0:--seed 0" "s0b:--seed 0" "s1:--seed 1" "ns:--seed 0 --decode-noise-scale 0.5 --decode-timestep 0.1"; do
  # shellcheck disable=SC2086
  expect_rc 0 "tcond decode ${run#*:}" "$LTX2" decode "$LAT" --checkpoint "$TC" --png-dir "$T/tc_${run%%:*}" ${run#*:}
done
cmp -s "$T/tc_s0/frame_00005.png" "$T/tc_s0b/frame_00005.png" && ok || bad "same --seed gave different frames"
cmp -s "$T/tc_s0/frame_00005.png" "$T/tc_s1/frame_00005.png" && bad "--seed did not change the decode noise" || ok
cmp -s "$T/tc_s0/frame_00005.png" "$T/tc_ns/frame_00005.png" && bad "--decode-noise-scale had no effect" || ok
grep -aq 'decode_timestep=0.1 decode_noise_scale=0.5 seed=0' "$T/tc_ns/frame_00000.png" && ok || bad "tcond tEXt"
expect_rc 0 "plain VAE with --seed" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/plain_s1" --seed 1
cmp -s "$T/plain/frame_00005.png" "$T/plain_s1/frame_00005.png" && ok || bad "--seed changed a noise-free VAE"

expect_rc 0 "--help" "$LTX2" decode --help
grep -q -- '--tile-batch' <<<"$out" && ok || bad "--help lacks --tile-batch"
expect_rc 0 "top-level help lists decode" "$LTX2" --help
grep -q 'decode LATENT.npy' <<<"$out" && ok || bad "usage lacks decode"

# bad input: exit 2, nothing written
expect_rc 2 "no args" "$LTX2" decode
expect_rc 2 "missing --png-dir" "$LTX2" decode "$LAT" --checkpoint "$CKPT"
expect_rc 2 "batch 0" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/b0" --tile-batch 0
expect_rc 2 "batch not a number" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/bx" --tile-batch x
expect_rc 2 "tile not multiple of 32" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/t50" --tile-size 50
grep -q 'multiples of 32' <<<"$out" && ok || bad "tile-size error unclear: $out"
expect_rc 2 "overlap >= tile" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/ov" --tile-size 64 --tile-overlap 64
expect_rc 2 "noise scale > 1" "$LTX2" decode "$LAT" --checkpoint "$TC" --png-dir "$T/n1" --decode-noise-scale 1.5
expect_rc 2 "negative timestep" "$LTX2" decode "$LAT" --checkpoint "$TC" --png-dir "$T/nt" --decode-timestep -1
expect_rc 2 "seed not a number" "$LTX2" decode "$LAT" --checkpoint "$TC" --png-dir "$T/ns" --seed abc
expect_rc 2 "unknown flag" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/uf" --bogus
expect_rc 2 "missing latent" "$LTX2" decode "$T/nope.npy" --checkpoint "$CKPT" --png-dir "$T/nl"
expect_rc 2 "missing checkpoint" "$LTX2" decode "$LAT" --checkpoint "$T/nope.safetensors" --png-dir "$T/nc"
for d in b0 bx t50 ov n1 nt ns uf nl nc; do [ ! -e "$T/$d" ] && ok || bad "failed run created $d"; done
touch "$T/file"
expect_rc 2 "png-dir is a file" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/file"
expect_rc 2 "tile size past the bound" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/tb" --tile-size 2e9
# a runtime failure (the output directory cannot be made: /proc takes no new entries) is 3, not 2
expect_rc 3 "png-dir cannot be created" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir /proc/ltx2_no/frames

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
