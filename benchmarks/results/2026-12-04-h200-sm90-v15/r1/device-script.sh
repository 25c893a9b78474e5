#!/usr/bin/env bash
# one-off device call (not committed): sm90-v15 r1: the one-chain step's adds kept after the issue (pin), and the next stage's ready wait and weight loads before the wait (ph); bits and times against 23a8a75 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for v in pin ph; do
  cp build/carry/$v-tests build/h/tests/nvfp4_tests
  timeout 120 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests-$v.txt 2>&1; echo "tests $v exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests-$v.txt | tr '\n' ' ')"
  timeout 90 build/carry/$v validate --linear qkv,out,fc1,fc2 --rows 128 --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-$v-m128.txt 2>&1; echo "val $v m128 exit $? $(grep -E '^status' $R/val-$v-m128.txt | cut -c1-30)"
done
for rep in 1 2; do for v in base pin ph; do
  timeout 100 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-$v-$rep.json >$R/m4096-$v-$rep.txt 2>&1
  echo "== m4096 $v $rep"; grep -E "sm90" $R/m4096-$v-$rep.txt | grep -v "of which" | cut -c1-50,60-75,120-150
  timeout 60 build/carry/$v bench --no-quantizer --rows 128 --iters 30 --backend sm90 --commit $v --out $R/m128-$v-$rep.json >$R/m128-$v-$rep.txt 2>&1
  echo "== m128 $v $rep"; grep -E "sm90" $R/m128-$v-$rep.txt | grep -v "of which" | cut -c1-50,60-75,120-150
  timeout 60 build/carry/$v bench --no-quantizer --rows 16 --iters 30 --backend sm90 --shapes qkv,fc1 --commit $v --out $R/m16-$v-$rep.json >$R/m16-$v-$rep.txt 2>&1
  echo "== m16 $v $rep"; grep -E "sm90" $R/m16-$v-$rep.txt | grep -v "of which" | cut -c1-50,60-75,120-150
done; done
tar -czf $OUT/results.tgz -C $OUT r
