#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r9: the final commit (K-split stages of 4/2 chunks, KS = 3 at M <= 16) against 1d40233 (kept): GPU suite, M = 16 and 32 tables
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 400 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
for m in 16 32; do for bin in kept new kept2 new2; do
  X=build/carry/${bin%2}
  $X bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit $bin --out $R/bench-m$m-$bin.json >$R/bench-m$m-$bin.txt 2>&1
  echo "== m$m $bin"; grep -E "sm90" $R/bench-m$m-$bin.txt | grep -v "of which" | cut -c1-50,90-130
done; done
tar -czf $OUT/results.tgz -C $OUT r
