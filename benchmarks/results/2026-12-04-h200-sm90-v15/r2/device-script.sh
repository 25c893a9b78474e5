#!/usr/bin/env bash
# one-off device call (not committed): sm90-v15 r2: the pre-pass's tile and thread-group records folded by warp shuffles instead of ten threads walking rows; bits and times against 0aa7405 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 150 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ')"
grep -E "FAILED  \]|Failure|PrePass" $R/gpu-tests.txt | head -6
for m in 16 128; do timeout 90 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m >$R/val-m$m.txt 2>&1; echo "val m$m exit $? $(grep -E '^status' $R/val-m$m.txt | cut -c1-40)"; done
for rep in 1 2; do for v in base new; do for m in 16 128 4096; do
  it=30; [ $m = 4096 ] && it=10
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters $it --backend sm90,sm90-stream --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90" $R/m$m-$v-$rep.txt | sed -e "s/ TFLOP.*x cuBLAS/ x/" -e "s/host enqueue.*//" | cut -c1-120
done; done; done
tar -czf $OUT/results.tgz -C $OUT r
