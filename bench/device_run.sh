#!/usr/bin/env bash
# A GPU session in as few calls as possible (device time is scarce): build with CUDA for the local
# GPU, run every test (the op harness compares each CUDA kernel with the CPU reference; the VAE,
# DiT-block and NCCL tests run their device halves), then the benches, writing raw logs and JSON
# lines into $1 (default bench/results/<device>-<date>). $2 picks a phase: all (default), tests
# or bench (bench reuses build-dev from a tests call on the same warm machine), for when one call
# would not fit the device tool's 10-minute limit. Every step has its own timeout.
# The device tool returns at most 8 files: run it as
#   bash bench/device_run.sh /tmp/res; tar czf "$OUT/res.tgz" -C /tmp res
set -uo pipefail
cd "$(dirname "$0")/.."
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | tr ' ' '_')
out=${1:-bench/results/${dev:-nogpu}-$(date +%Y%m%d)}
phase=${2:-all}
case "$phase" in all|tests|bench) ;; *) echo "device_run.sh: phase must be all, tests or bench"; exit 2 ;; esac
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1

# cuDNN and NCCL may exist only as PyTorch's pip wheels (nvidia-cudnn-*, nvidia-nccl-*): they ship
# versioned .so files only, which find_library does not match, so point CMake at them.
wheel_lib() { # $1 = library file glob; prints the first match under site-packages/nvidia
  python3 - "$1" <<'PY' 2>/dev/null
import glob, os, site, sys
for root in site.getsitepackages():
    hits = sorted(glob.glob(os.path.join(root, "nvidia", "**", sys.argv[1]), recursive=True))
    if hits:
        print(hits[0])
        break
PY
}

run() { # name timeout_s command...: runs with a timeout, log in $out/name.log, prints rc and the tail
  local name=$1 limit=$2; shift 2
  timeout "$limit" "$@" > "$out/$name.log" 2>&1
  local rc=$?
  echo "== $name rc=$rc"; tail -n 25 "$out/$name.log"
}

if [ "$phase" != bench ] || [ ! -x build-dev/ltx2 ]; then
  extra=()
  for pair in "NCCL:libnccl.so*:nccl.h" "CUDNN:libcudnn.so*:cudnn.h"; do
    IFS=: read -r name glob header <<<"$pair"
    lower=$(tr '[:upper:]' '[:lower:]' <<<"$name")
    ldconfig -p 2>/dev/null | grep -q "lib$lower\.so" && continue # the system's copy wins
    so=$(wheel_lib "$glob")
    inc=${so:+$(dirname "$(dirname "$so")")/include}
    if [ -n "$so" ] && [ -f "$inc/$header" ]; then
      extra+=("-D${name}_LIBRARY=$so" "-D${name}_INCLUDE_DIR=$inc")
      echo "using the $name wheel: $so"
    fi
  done
  cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="${LTX2_CUDA_ARCH:-90a}" \
    -DLTX2_FFMPEG=OFF -DLTX2_PNG=OFF "${extra[@]}" > "$out/configure.log" 2>&1 || { tail -n 30 "$out/configure.log"; exit 1; }
  grep '\[ltx2\]' "$out/configure.log"
  cmake --build build-dev -j"$(nproc)" > "$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
fi

if [ "$phase" != bench ]; then
  # The wgmma attention kernel has never run: keep it out of the ctest pass (a hang there would
  # eat the call's whole time limit) and give it its own bounded run below.
  LTX2_ATTN_IMPL=mma_sync run ctest 240 ctest --test-dir build-dev --output-on-failure -j4
  run test_ops_cuda 120 ./build-dev/tests/test_ops -b cuda
  run test_ops_fused 120 ./build-dev/tests/test_ops_fused
  run test_dit_cuda 120 ./build-dev/tests/test_dit_cuda
  run test_vae_cuda 120 ./build-dev/tests/test_vae_cuda
  NCCL_DEBUG=WARN run test_comm_nccl 180 ./build-dev/tests/test_comm_nccl
  # a hang here means a barrier / TMA byte-count bug in attention_sm90.cu
  LTX2_ATTN_IMPL=wgmma run test_ops_wgmma 300 ./build-dev/tests/test_ops -o attention -b cuda -v
fi

if [ "$phase" != tests ]; then
  for b in gemm ops attention conv3d fused; do
    run "bench_$b" 150 "./build-dev/bench/bench_$b" --json "$out/bench_$b.jsonl"
  done
  # cuDNN SDPA baseline through PyTorch (cuDNN's fused attention has no C API we wrap), paired
  # with bench_attention's rows by shape name; also the PNG plot the issue asks for.
  run attention_vs_cudnn 300 python3 bench/sdpa_cudnn_torch.py --ours "$out/bench_attention.jsonl" \
    --json "$out/attention_vs_cudnn.jsonl" --plot "$out/attention_vs_cudnn.png"
fi
