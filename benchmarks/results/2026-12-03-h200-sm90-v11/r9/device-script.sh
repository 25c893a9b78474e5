#!/usr/bin/env bash
# one-off device call (not committed): copy threads per configuration (sm90-v11 r9): tests, M = 128 old/new
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new; O=build/carry/old
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
timeout 120 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
for bin in old new; do
  X=$O; [ $bin = new ] && X=$B
  $X bench --no-quantizer --rows 128 --iters 30 --backend sm90 --commit $bin --out $R/bench-m128-$bin.json >$R/bench-m128-$bin.txt 2>&1
  echo "== m128 $bin"; grep -E "sm90" $R/bench-m128-$bin.txt | grep -v "of which" | cut -c1-70
done
tar -czf $OUT/results.tgz -C $OUT r
