#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r13: the launcher's K-split with three chunk-sum warpgroups at M <= 32 (head: 45ac71f)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 17 24 32; do
  timeout 25 build/carry/new validate --linear out,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vl >$R/real-m$m.txt 2>&1
  echo "real m$m exit $? $(grep -E '^status|error' $R/real-m$m.txt | cut -c1-60)"
done
for run in head new; do
  build/carry/$run bench --no-quantizer --rows 32 --iters 30 --backend sm90,sm90-stream --shapes out,fc2 --commit $run --out $R/m32-$run.json >$R/m32-$run.txt 2>&1
  echo "== m32 $run"; grep -E "sm90" $R/m32-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done
timeout 200 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -6
tar -czf $OUT/results.tgz -C $OUT r
