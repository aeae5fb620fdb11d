#!/usr/bin/env bash
# The device tool sends the checkout's tracked and untracked files, at most 64 MiB; the tree is
# larger (the CPU tests' goldens and tiny checkpoint copies). `device_slim.sh on` takes out of the
# index and the work tree what no device test, bench or device_run.sh step reads (kept: the tiny
# 2.0 / 2.3 checkpoints, upsamplers, LoRAs, Gemma, prompt embeddings, and the goldens the *_cuda
# tests and the op harness open), parking it under $LTX2_SLIM_STASH (default /tmp/ltx2_slim);
# `device_slim.sh off` puts every file back and resets the index to HEAD. Commit nothing between
# the two, and run device_run.sh with LTX2_DEVICE_CTEST=0 (the CPU tests would miss their data).
set -euo pipefail
cd "$(dirname "$0")/.."
stash=${LTX2_SLIM_STASH:-/tmp/ltx2_slim}
# golden files the device tests read (tests/*device_check.h, tests/*_check.h, tests/test_*cuda*.c)
keep='a2vid_input\.wav|gemma_tiny|dit_blocks_2|vae_2\.[03]\.|vae_tcond|audio_2\.|audio_enc_2|upsampler\.safetensors|ops\.safetensors'
case "${1:-}" in
on)
  [ -e "$stash/list" ] && { echo "device_slim.sh: $stash/list exists: run 'off' first"; exit 2; }
  [ -z "$(git status --porcelain --untracked-files=no)" ] || { echo "device_slim.sh: commit or stash your changes first"; exit 2; }
  mkdir -p "$stash"
  { ls -d weights/tiny/ltx2-tiny-diffusers-2.0 weights/tiny/ltx2-tiny-diffusers-2.3 weights/tiny/split-2.3
    ls tests/golden/data/* | grep -Ev "$keep"; } > "$stash/list"
  while read -r p; do
    git rm -r -q --cached "$p"
    mkdir -p "$stash/$(dirname "$p")"
    mv "$p" "$stash/$p"
  done < "$stash/list"
  ;;
off)
  [ -e "$stash/list" ] || { echo "device_slim.sh: nothing parked in $stash"; exit 2; }
  while read -r p; do mv "$stash/$p" "$p"; done < "$stash/list"
  git reset -q
  rm -rf "$stash"
  ;;
*) echo "usage: bench/device_slim.sh on|off"; exit 2 ;;
esac
echo "tracked bytes now: $(git ls-files -z | xargs -0 du -cb 2>/dev/null | tail -n 1 | cut -f1)"
