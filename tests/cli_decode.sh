#!/usr/bin/env bash
# `ltx2 decode` on the tiny 2.0 checkpoint and a committed latent (tests/data/decode/latent_tiny.npy,
# [8, 3, 2, 3] -> 17 frames of 64x96): PNG frames appear, untiled and tiled + tile-batched, with the
# parameters in tEXt; bad flags exit 2 without creating anything. Skips (77) without libpng.
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

expect_rc 0 "tiled + batched decode" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/tiled" \
  --tile-size 64 --tile-overlap 32 --tile-frames 16 --tile-frames-overlap 8 --tile-batch 3
grep -q '4 tiles, 2 VAE calls' <<<"$out" && ok || bad "tile/call counts: $out"
[ "$(ls "$T/tiled" | wc -l)" -eq 17 ] && ok || bad "tiled decode frame count"

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
expect_rc 2 "unknown flag" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/uf" --bogus
expect_rc 2 "missing latent" "$LTX2" decode "$T/nope.npy" --checkpoint "$CKPT" --png-dir "$T/nl"
expect_rc 2 "missing checkpoint" "$LTX2" decode "$LAT" --checkpoint "$T/nope.safetensors" --png-dir "$T/nc"
for d in b0 bx t50 ov uf nl nc; do [ ! -e "$T/$d" ] && ok || bad "failed run created $d"; done
touch "$T/file"
expect_rc 2 "png-dir is a file" "$LTX2" decode "$LAT" --checkpoint "$CKPT" --png-dir "$T/file"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
