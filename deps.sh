#!/usr/bin/env bash
# Installs what ltx2c needs to build and test on Debian/Ubuntu, only what is missing.
# As root it runs apt-get; otherwise it prints the command to run and fails.
# CUDA (nvcc, cuBLAS, cuDNN, NCCL) is optional and never installed here: see README.md.
set -euo pipefail

pkgs=(cmake make gcc g++ pkg-config zlib1g-dev libpng-dev libsentencepiece-dev
      libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev ffmpeg)
# Extra packages on request, e.g. LTX2_DEPS_EXTRA="clang libclang-rt-14-dev" for fuzzing.
read -r -a extra <<< "${LTX2_DEPS_EXTRA:-}"
pkgs+=("${extra[@]}")

missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# libgomp comes with gcc; the OpenMP check happens in CMake.
if [ ${#missing[@]} -eq 0 ]; then
  echo "deps.sh: all build dependencies present"
  exit 0
fi
echo "deps.sh: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: not root; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "deps.sh: done"
