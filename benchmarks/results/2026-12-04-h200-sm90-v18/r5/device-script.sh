#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r5: the per-element tests on the registers (only elements that go to the model copy the accumulators to local memory) against 0490f2d (base, r2's kernel): trip durations (CTA stats build), times at M = 64, 128, 4096, 16, 32; bits (validate, GPU suite); memcheck and racecheck of the slow-path adversarial test
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for ms in 4096:qkv 64:qkv 64:fc1; do m=${ms%%:*}; s=${ms##*:}
  NVFP4_SM90_CTA_STATS_OUT=$R/stats-m$m-$s.txt timeout 60 build/carry/newstats bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit newstats --out $R/stats-m$m-$s.json > $R/stats-m$m-$s.out 2>&1
  echo "== stats m$m $s"; python3 tools/sm90-cta-stats $R/stats-m$m-$s.txt | sed -n 3,4p
done
for v in base new; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-outliers-$v.json >$R/m4096-outliers-$v.txt 2>&1
  echo "== m4096 $v"; grep -E "sm90" $R/m4096-outliers-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done
for m in 64 128 16 32; do for v in base new; do
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/m$m-$v.json >$R/m$m-$v.txt 2>&1
  echo "== m$m $v"; grep -E "sm90 " $R/m$m-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done
for m in 1 16 128 333; do
timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-new-m$m.txt 2>&1; echo "val new m$m exit $? $(grep -E '^status' $R/val-new-m$m.txt | cut -c1-70)"
done
timeout 150 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -1 $R/tests.txt; grep FAILED $R/tests.txt | head -5
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
timeout 120 $CS --tool memcheck --error-exitcode 9 build/carry/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/sanitize-memcheck.txt 2>&1
echo "memcheck exit $? $(grep -E 'ERROR SUMMARY' $R/sanitize-memcheck.txt | tail -1) $(grep -E 'PASSED|FAILED' $R/sanitize-memcheck.txt | tail -1)"
tar -czf $OUT/results.tgz -C $OUT r
timeout 230 $CS --tool racecheck --error-exitcode 9 build/carry/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/sanitize-racecheck.txt 2>&1
echo "racecheck exit $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/sanitize-racecheck.txt | tail -1) $(grep -E 'PASSED|FAILED' $R/sanitize-racecheck.txt | tail -1)"
tar -czf $OUT/results.tgz -C $OUT r
