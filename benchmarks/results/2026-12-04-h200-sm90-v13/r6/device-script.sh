#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r6: K-split stages of 4/2 chunks, chunk-major weight (new) vs 1d40233 (kept) vs new + one 3-D A' box per stage (a3): bits, sanitizers, M = 16, 32, 128, 4096
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 300 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
for bc in new:16x1x1x1x4 new:16x1x1x1x2 new:32x1x1x1x2 new:32x1x1x1x4 new:64x1x1x1x3 new:16x3x1x1 new:64x1x2x1 new:128x2x1x1 new:128x3x1x2 a3:16x1x1x1x4 a3:32x1x1x1x2 a3:16x1x1x1x3; do
  bin=${bc%%:*}; cfg=${bc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 100 build/carry/$bin validate --shapes odd:1000:1088,san:200:1000 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v-$cfg >$R/smoke-$bin-$cfg.txt 2>&1
  echo "smoke $bin $cfg exit $? $(tail -2 $R/smoke-$bin-$cfg.txt | head -1 | cut -c1-60)"
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:16x1x1x1x4 racecheck:32x1x1x1x2 memcheck:16x1x1x1x4 memcheck:32x1x1x1x2 memcheck:64x1x2x1; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000 --rows 150 --candidate sm90,sm90-stream --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
for m in 16 32; do for bin in kept new a3 kept2 new2 a32; do
  X=build/carry/${bin%2}
  $X bench --no-quantizer --rows $m --iters 30 --backend sm90 --shapes out,fc2 --commit $bin --out $R/ks-m$m-$bin.json >$R/ks-m$m-$bin.txt 2>&1
  echo "== ks m$m $bin"; grep -E "sm90" $R/ks-m$m-$bin.txt | grep -v "of which" | cut -c1-50,90-130
done; done
for m in 16 32 128; do for bin in kept new; do
  build/carry/$bin bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit $bin --out $R/bench-m$m-$bin.json >$R/bench-m$m-$bin.txt 2>&1
  echo "== m$m $bin"; grep -E "sm90" $R/bench-m$m-$bin.txt | grep -v "of which" | cut -c1-50,90-130
done; done
for bin in kept new; do
  build/carry/$bin bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $bin --out $R/bench-m4096-$bin.json >$R/bench-m4096-$bin.txt 2>&1
  echo "== m4096 $bin"; grep -E "sm90" $R/bench-m4096-$bin.txt | grep -v "of which" | cut -c1-50,90-130
done
NVFP4_SM90_TRACE_OUT=$R/trace-new-m16-out.txt build/carry/trace bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --sm90-config 16x1x1x1x4 --shapes out --commit trace >/dev/null 2>&1; echo "trace exit $?"
tar -czf $OUT/results.tgz -C $OUT r
