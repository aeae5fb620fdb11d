#!/usr/bin/env bash
# One full GPU session in one call (device time is scarce): build with CUDA for the local GPU,
# run every test (the op harness compares each CUDA kernel with the CPU reference), then the
# benches, writing raw logs and JSON lines into $1 (default bench/results/<device>-<date>).
# The device tool returns at most 8 files: run it as
#   bash bench/device_run.sh /tmp/res; tar czf "$OUT/res.tgz" -C /tmp res
set -uo pipefail
cd "$(dirname "$0")/.."
dev=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | tr ' ' '_')
out=${1:-bench/results/${dev:-nogpu}-$(date +%Y%m%d)}
mkdir -p "$out"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
arch=${LTX2_CUDA_ARCH:-90a}
cmake -S . -B build-dev -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$arch" \
  -DLTX2_FFMPEG=OFF -DLTX2_PNG=OFF > "$out/configure.log" 2>&1 || { tail -n 30 "$out/configure.log"; exit 1; }
cmake --build build-dev -j"$(nproc)" > "$out/build.log" 2>&1 || { tail -n 40 "$out/build.log"; exit 1; }
ctest --test-dir build-dev --output-on-failure -j4 > "$out/ctest.log" 2>&1; echo "ctest rc=$?"
tail -n 15 "$out/ctest.log"
./build-dev/tests/test_ops -b cuda > "$out/test_ops_cuda.log" 2>&1; echo "test_ops -b cuda rc=$?"
tail -n 25 "$out/test_ops_cuda.log"
./build-dev/bench/bench_gemm --json "$out/bench_gemm.jsonl" > "$out/bench_gemm.txt" 2>&1; echo "bench_gemm rc=$?"
cat "$out/bench_gemm.txt"
./build-dev/bench/bench_ops --json "$out/bench_ops.jsonl" > "$out/bench_ops.txt" 2>&1; echo "bench_ops rc=$?"
cat "$out/bench_ops.txt"
./build-dev/bench/bench_attention --json "$out/bench_attention.jsonl" > "$out/bench_attention.txt" 2>&1; echo "bench_attention rc=$?"
cat "$out/bench_attention.txt"
# cuDNN SDPA baseline through PyTorch (cuDNN's fused attention has no C API we wrap), paired
# with bench_attention's rows by shape name; also the PNG plot the issue asks for.
python3 bench/sdpa_cudnn_torch.py --ours "$out/bench_attention.jsonl" --json "$out/attention_vs_cudnn.jsonl" \
  --plot "$out/attention_vs_cudnn.png" > "$out/attention_vs_cudnn.txt" 2>&1; echo "sdpa_cudnn_torch rc=$?"
cat "$out/attention_vs_cudnn.txt"
./build-dev/bench/bench_conv3d --json "$out/bench_conv3d.jsonl" > "$out/bench_conv3d.txt" 2>&1; echo "bench_conv3d rc=$?"
cat "$out/bench_conv3d.txt"
./build-dev/bench/bench_fused --json "$out/bench_fused.jsonl" > "$out/bench_fused.txt" 2>&1; echo "bench_fused rc=$?"
cat "$out/bench_fused.txt"
./build-dev/tests/test_ops_fused > "$out/test_ops_fused.log" 2>&1; echo "test_ops_fused rc=$?"
tail -n 25 "$out/test_ops_fused.log"
./build-dev/tests/test_dit_cuda > "$out/test_dit_cuda.log" 2>&1; echo "test_dit_cuda rc=$?"
tail -n 10 "$out/test_dit_cuda.log"
