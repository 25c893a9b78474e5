#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r7: K-split stages of 4/2 chunks with the one-warpgroup tiles' SASS unchanged (new) vs 1d40233 (kept): bits, sanitizers, the table
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 400 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
timeout 200 build/h/tests/nvfp4_tests --gtest_filter='Gpu.Sm90EveryTile*:Gpu.Sm90SlowPath*' --gtest_repeat=2 >$R/gpu-tests-repeat.txt 2>&1; echo "repeat exit $?"; grep -cE "^\[  PASSED" $R/gpu-tests-repeat.txt
for cfg in 16x1x1x1x4 16x1x1x1x3 16x1x1x1x2 32x1x1x1x2 32x1x1x1x3 32x1x1x1x4 64x1x1x1x2 64x1x1x1x3 16x3x1x1 64x1x2x1; do
  NVFP4_SM90_CONFIG=$cfg timeout 100 $B validate --shapes odd:1000:1088,san:200:1000,k2:200:100 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v-$cfg >$R/smoke-$cfg.txt 2>&1
  echo "smoke $cfg exit $? $(tail -2 $R/smoke-$cfg.txt | head -1 | cut -c1-60)"
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:16x1x1x1x4 racecheck:32x1x1x1x2 racecheck:16x1x1x1x3 racecheck:64x1x1x1x2 memcheck:16x1x1x1x4 memcheck:32x1x1x1x2; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000,k2:200:100 --rows 150 --candidate sm90,sm90-stream --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
for m in 16 32; do for bin in kept new kept2 new2 nc; do
  X=build/carry/${bin%2}
  $X bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --shapes out,fc2 --commit $bin --out $R/ks-m$m-$bin.json >$R/ks-m$m-$bin.txt 2>&1
  echo "== ks m$m $bin"; grep -E "sm90" $R/ks-m$m-$bin.txt | grep -v "of which" | cut -c1-50,90-130
done; done
for m in 16 32 128; do
  $B bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit new --out $R/bench-m$m.json >$R/bench-m$m.txt 2>&1
  echo "== m$m"; grep -E "sm90" $R/bench-m$m.txt | grep -v "of which" | cut -c1-50,90-130
done
$B bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit new --out $R/bench-m4096.json >$R/bench-m4096.txt 2>&1
echo "== m4096"; grep -E "sm90" $R/bench-m4096.txt | grep -v "of which" | cut -c1-50,90-130
for sc in out:16x1x1x1x4 fc2:16x1x1x1x4 out:32x1x1x1x2; do
  sh=${sc%%:*}; cfg=${sc#*:}; m=${cfg%%x*}
  NVFP4_SM90_TRACE_OUT=$R/trace-m$m-$sh-$cfg.txt build/carry/trace bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $cfg --shapes $sh --commit trace >/dev/null 2>&1; echo "trace $sh $cfg exit $?"
done
tar -czf $OUT/results.tgz -C $OUT r
