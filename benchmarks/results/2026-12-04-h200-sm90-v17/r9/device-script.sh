#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r9: the fallback's per-element tests load their tokens' records from global memory eight at a time (they were loaded one per element, each load's latency in turn), against a28cc89 (base): times at M = 4096 (outlier and N(0,1) activations), 128, 16; bits (validate, GPU suite); memcheck of the slow-path adversarial test
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for v in base new; do for act in outliers normal; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --activations $act --commit $v --out $R/m4096-$act-$v.json >$R/m4096-$act-$v.txt 2>&1
  echo "== m4096 $act $v"; grep -E "sm90" $R/m4096-$act-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done
for v in base new; do for m in 16 128; do
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
