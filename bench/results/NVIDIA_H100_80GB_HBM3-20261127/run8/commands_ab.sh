# One device call: the 4-stage conv3d (tile 128 x 64 wn) checked and timed, then variant B
# (launch bounds 4 / WN: 2 CTAs of 256 threads per SM, 128 registers) timed beside it.
set -uo pipefail
R=/tmp/res8; mkdir -p $R
export PATH=$PATH:/usr/local/cuda/bin
LTX2_DEVICE_DEADLINE_S=200 bash bench/device_run.sh $R build > $R/build_phase.log 2>&1
B=build-dev
step() { local n=$1 l=$2 s=$SECONDS; shift 2; timeout $l "$@" > $R/$n.log 2>&1; echo "$n rc=$? $((SECONDS-s))s" | tee -a $R/summary.txt; }
LTX2_ATTN_IMPL=mma_sync step test_ops_conv3d 60 $B/tests/test_ops -o conv3d -b cuda -v
step test_vae_cuda 90 $B/tests/test_vae_cuda
step test_generate_cuda 90 $B/tests/test_generate_cuda
for t in memcheck racecheck synccheck; do step sanitize_${t}_conv3d 60 compute-sanitizer --tool $t --error-exitcode 1 --print-limit 20 $B/tests/test_ops -o conv3d -b cuda; done
step bench_conv3d_A 100 $B/bench/bench_conv3d --json $R/bench_conv3d_A.jsonl
step bench_step_A 100 $B/bench/bench_step --device cuda --layers 1 --json $R/bench_step_A.jsonl
sed -i 's|WN == 1 ? 4 : 1)|4 / WN)|' kernels/conv3d.cu
grep -n '__launch_bounds__' kernels/conv3d.cu > $R/variant_B.txt
step build_B 150 cmake --build $B -j16 --target bench_conv3d bench_step test_ops
LTX2_ATTN_IMPL=mma_sync step test_ops_conv3d_B 60 $B/tests/test_ops -o conv3d -b cuda
step bench_conv3d_B 100 $B/bench/bench_conv3d --json $R/bench_conv3d_B.jsonl
step bench_step_B 100 $B/bench/bench_step --device cuda --layers 1 --json $R/bench_step_B.jsonl
tar czf "$OUT/res8.tgz" -C /tmp res8
for f in test_ops_conv3d test_vae_cuda test_generate_cuda; do tail -n 1 $R/$f.log; done
grep -h 'dec \|1x1x1' $R/bench_conv3d_A.log $R/bench_conv3d_B.log | cut -c1-110
grep -h '^# VAE\|^# DiT' $R/bench_step_A.log $R/bench_step_B.log
