# run9: the committed tree (conv3d gather through L1, cp.async.ca) checked and timed, then the
# shared-memory carveout hint on top (carveout.patch) timed beside it.
set -uo pipefail
R=/tmp/res9; mkdir -p $R
export PATH=$PATH:/usr/local/cuda/bin
LTX2_DEVICE_DEADLINE_S=200 bash bench/device_run.sh $R build > $R/build_phase.log 2>&1
B=build-dev
step() { local n=$1 l=$2 s=$SECONDS; shift 2; timeout $l "$@" > $R/$n.log 2>&1; echo "$n rc=$? $((SECONDS-s))s" | tee -a $R/summary.txt; }
LTX2_ATTN_IMPL=mma_sync step test_ops_conv3d 60 $B/tests/test_ops -o conv3d -b cuda -v
step test_vae_cuda 90 $B/tests/test_vae_cuda
step sanitize_racecheck_conv3d 60 compute-sanitizer --tool racecheck --error-exitcode 1 --print-limit 20 $B/tests/test_ops -o conv3d -b cuda
step bench_conv3d_D 100 $B/bench/bench_conv3d --json $R/bench_conv3d_D.jsonl
step bench_step_D 60 $B/bench/bench_step --device cuda --layers 1 --no-profile --json $R/bench_step_D.jsonl
git apply .devtmp/carveout.patch; echo "apply rc=$?" >> $R/summary.txt
step build_E 150 cmake --build $B -j16 --target bench_conv3d bench_step test_ops
LTX2_ATTN_IMPL=mma_sync step test_ops_conv3d_E 60 $B/tests/test_ops -o conv3d -b cuda
step bench_conv3d_E 100 $B/bench/bench_conv3d --json $R/bench_conv3d_E.jsonl
step bench_step_E 60 $B/bench/bench_step --device cuda --layers 1 --no-profile --json $R/bench_step_E.jsonl
tar czf "$OUT/res9.tgz" -C /tmp res9
for f in test_ops_conv3d test_vae_cuda test_ops_conv3d_E; do tail -n 1 $R/$f.log; done
grep -h 'dec \|1x1x1' $R/bench_conv3d_D.log $R/bench_conv3d_E.log | cut -c1-110
grep -h '^# VAE' $R/bench_step_D.log $R/bench_step_E.log
