#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r6: (a) the one-chain tiles' stages without records (the verdict lanes read the token-block records from global memory one chunk ahead; one copy fewer per stage) against a28cc89 (base): bits and times at M = 4096, 128, 16; (b) the ring-less measurement build from a28cc89 (noringhead) beside r4's from the prefetch loop (noring)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 1 16 128 333; do
timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-new-m$m.txt 2>&1; echo "val new m$m exit $? $(grep -E '^status' $R/val-new-m$m.txt | cut -c1-70)"
done
for cfg in 128x2x1x1 128x3x1x2 256x2x1x2; do
NVFP4_SM90_CONFIG=$cfg timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-$cfg-m333.txt 2>&1; echo "val $cfg m333 exit $? $(grep -E '^status' $R/val-$cfg-m333.txt | cut -c1-70)"
done
for v in base new noringhead noring; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-$v.json >$R/m4096-$v.txt 2>&1
  echo "== m4096 $v"; grep -E "sm90" $R/m4096-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done
for rep in 1 2; do for v in base new; do for m in 16 128; do
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90 " $R/m$m-$v-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done; done
timeout 240 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -3 $R/tests.txt; grep FAILED $R/tests.txt | head
tar -czf $OUT/results.tgz -C $OUT r
