#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r4: helper CTAs with per-stage flags set by publisher warps, bulk-copy imports by an importer thread that walks every slot group, remote stages rotated over the chunk-sum warpgroups vs 1e08936 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 1 16 32; do
  timeout 25 $B validate --linear out,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vl-$m >$R/smoke-real-m$m.txt 2>&1
  echo "real m$m exit $? $(grep -E '^status' $R/smoke-real-m$m.txt | cut -c1-40)"
done
for cfg in 16x1x1x1x2 16x1x1x1x4 32x1x1x1x3 32x1x1x1x4 32x1x1x1x2 16x1x1x1x3 32x1x1x1x4 16x1x1x1x4 32x1x1x1x4; do
  NVFP4_SM90_CONFIG=$cfg timeout 25 $B validate --linear out,fc2 --rows 16 --candidate sm90 --quiet --out /tmp/vr >$R/smoke-real-$cfg.txt 2>&1; echo "real $cfg exit $? $(grep -E '^status' $R/smoke-real-$cfg.txt | cut -c1-40)"
done
for cfg in 16x1x1x1x3 32x1x1x1x2 64x1x1x1x2; do for m in 16 333; do
  NVFP4_SM90_CONFIG=$cfg timeout 25 $B validate --shapes odd:1000:1088,san:200:1000,k2:200:100,wide:5376:1344 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v-$cfg >$R/smoke-$cfg-m$m.txt 2>&1
  echo "smoke $cfg m$m exit $? $(grep -E '^status' $R/smoke-$cfg-m$m.txt | cut -c1-40)"
done; done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck synccheck; do
  NVFP4_SM90_CONFIG=16x1x1x1x3 timeout 60 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000,odd:1000:1088 --rows 16 --candidate sm90 --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool 16x1x1x1x3 m16: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
for run in base new-off new base2 new2; do
  bin=${run%-off}; bin=${bin%2}; [ $run = new-off ] && export NVFP4_SM90_HELPERS=0 || unset NVFP4_SM90_HELPERS
  build/carry/$bin bench --no-quantizer --rows 16 --iters 30 --backend sm90,sm90-stream --shapes out,fc2 --commit $run --out $R/ks-m16-$run.json >$R/ks-m16-$run.txt 2>&1
  echo "== m16 $run"; grep -E "sm90" $R/ks-m16-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done
unset NVFP4_SM90_HELPERS
for run in base new; do
  build/carry/$run bench --no-quantizer --rows 32 --iters 30 --backend sm90 --shapes out,fc2 --commit $run --out $R/ks-m32-$run.json >$R/ks-m32-$run.txt 2>&1
  echo "== m32 $run"; grep -E "sm90" $R/ks-m32-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done
timeout 200 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -5
tar -czf $OUT/results.tgz -C $OUT r
