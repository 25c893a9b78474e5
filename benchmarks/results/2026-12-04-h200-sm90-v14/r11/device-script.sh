#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r11: the K-split's stage weight copies as one 4-D tensor copy per stage (make_w_map) vs d375988 (head)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 1 16 32; do
  timeout 25 build/carry/new validate --linear out,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vl >$R/real-m$m.txt 2>&1
  echo "real m$m exit $? $(grep -E '^status|error' $R/real-m$m.txt | cut -c1-60)"
done
for cfg in 16x1x1x1x2 16x1x1x1x3 16x1x1x1x4 32x1x1x1x2 32x1x1x1x3; do
  NVFP4_SM90_CONFIG=$cfg timeout 25 build/carry/new validate --shapes odd:1000:1337,k100:200:100,k2:5376:128,wide:5376:1344 --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/vs >$R/smoke-$cfg.txt 2>&1
  echo "smoke $cfg exit $? $(grep -E '^status|error' $R/smoke-$cfg.txt | cut -c1-60)"
done
for run in head new head2 new2; do
  bin=${run%2}
  build/carry/$bin bench --no-quantizer --rows 16 --iters 30 --backend sm90,sm90-stream --shapes out,fc2 --commit $run --out $R/m16-$run.json >$R/m16-$run.txt 2>&1
  echo "== m16 $run"; grep -E "sm90" $R/m16-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
  build/carry/$bin bench --no-quantizer --rows 32 --iters 30 --backend sm90 --shapes out,fc2 --commit $run --out $R/m32-$run.json >$R/m32-$run.txt 2>&1
  echo "== m32 $run"; grep -E "sm90" $R/m32-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  NVFP4_SM90_CONFIG=16x1x1x1x3 timeout 60 $CS --tool $tool --error-exitcode 9 build/carry/new validate --shapes wide:5376:1344,odd:1000:1337 --rows 16 --candidate sm90 --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool 16x1x1x1x3: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
timeout 240 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -6
tar -czf $OUT/results.tgz -C $OUT r
