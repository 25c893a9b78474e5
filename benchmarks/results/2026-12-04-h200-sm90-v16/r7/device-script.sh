#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r7: the kept commit 9fde6d9 (new): GPU suite, compute-sanitizer racecheck and memcheck of the sm90 tests that run every configuration (the slow path on > 10 % of the steps in one), validate, and times against 6a0eb55 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 200 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -1 $R/tests.txt; grep FAILED $R/tests.txt | head -5
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck memcheck; do
  timeout 150 $CS --tool $tool --error-exitcode 9 build/carry/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*:Gpu.Sm90EveryTileConfiguration*' > $R/sanitize-$tool.txt 2>&1
  echo "$tool exit $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/sanitize-$tool.txt | tail -1) $(grep -E 'PASSED|FAILED' $R/sanitize-$tool.txt | tail -1)"
done
for m in 16 128; do
timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-new-m$m.txt 2>&1; echo "val new m$m exit $? $(grep -E '^status' $R/val-new-m$m.txt | cut -c1-70)"
done
for v in base new; do for m in 16 128 4096; do
  it=30; [ $m = 4096 ] && it=10
  timeout 150 build/carry/$v bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $v --out $R/m$m-$v.json >$R/m$m-$v.txt 2>&1
  echo "== m$m $v"; grep -E "sm90 " $R/m$m-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done
tar -czf $OUT/results.tgz -C $OUT r
