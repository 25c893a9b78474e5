#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r1: the two-chain loop (NH = 2) without the fallback inline and with the warpgroup-uniform bound, against a28cc89 (base): bits (GPU suite, validate with every NH = 2 configuration forced), times at M = 4096 and 128 for the NH = 2 configurations and the launcher's
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for cfg in 128x3x1x2 128x2x1x2 256x2x1x2 256x1x1x2; do for m in 128 333; do
NVFP4_SM90_CONFIG=$cfg timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-$cfg-m$m.txt 2>&1; echo "val $cfg m$m exit $? $(grep -E '^status' $R/val-$cfg-m$m.txt | cut -c1-70)"
done; done
for v in base new; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-$v.json >$R/m4096-$v.txt 2>&1
  echo "== m4096 $v"; grep -E "sm90" $R/m4096-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done
timeout 200 build/carry/new bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --sm90-config 128x3x1x2,128x2x1x2,256x2x1x2 --commit new --out $R/m4096-new-nh2.json >$R/m4096-new-nh2.txt 2>&1
echo "== m4096 new nh2"; grep -E "sm90" $R/m4096-new-nh2.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
for rep in 1 2; do for v in base new; do
  timeout 100 build/carry/$v bench --no-quantizer --rows 128 --iters 30 --backend sm90 --commit $v --out $R/m128-$v-$rep.json >$R/m128-$v-$rep.txt 2>&1
  echo "== m128 $v $rep"; grep -E "sm90 " $R/m128-$v-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done
timeout 100 build/carry/new bench --no-quantizer --rows 128 --iters 30 --backend sm90 --sm90-config 128x3x1x2,128x2x1x2,64x1x2x1 --commit new --out $R/m128-new-cfg.json >$R/m128-new-cfg.txt 2>&1
echo "== m128 new cfgs"; grep -E "sm90" $R/m128-new-cfg.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
timeout 240 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -3 $R/tests.txt; grep FAILED $R/tests.txt | head
tar -czf $OUT/results.tgz -C $OUT r
