#!/usr/bin/env bash
# one-off device call (not committed): sm90-v12 r3: the kept kernel (8c8e195, new) against ef8db09 (old): checks and benchmarks
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new; O=build/carry/old
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 300 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
timeout 150 build/h/tests/nvfp4_tests --gtest_filter='Gpu.Sm90EveryTile*:Gpu.Sm90SlowPath*:Gpu.Sm90BitIdentical*' --gtest_repeat=3 >$R/gpu-tests-repeat.txt 2>&1; echo "repeat exit $?"
grep -cE "^\[  PASSED" $R/gpu-tests-repeat.txt; grep -E "FAILED  \]|Failure" $R/gpu-tests-repeat.txt | head -5
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:16x1x1x1x4 racecheck:32x1x1x1x2 racecheck:64x1x1x1x3 memcheck:16x1x1x1x4 memcheck:32x1x1x1x2; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000 --rows 150 --candidate sm90,sm90-stream --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
for m in 16 32 128 4096; do for bin in old new; do
  X=$O; [ $bin = new ] && X=$B; it=30; be=sm90,sm90-stream; [ $m = 4096 ] && { it=10; be=sm90; }
  $X bench --no-quantizer --rows $m --iters $it --backend $be --commit $bin --out $R/bench-m$m-$bin.json >$R/bench-m$m-$bin.txt 2>&1
  echo "== m$m $bin"; grep -E "sm90" $R/bench-m$m-$bin.txt | grep -v "of which" | cut -c1-100
done; done
tar -czf $OUT/results.tgz -C $OUT r
