#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r5: 128x2x1x2 with the pipelined two-chain loop (64-token chains; one in flight while the other's sums are added; next chunk's weight bytes loaded before the wait), against a28cc89 (base) and the launcher's 128x2x1x1: bits (GPU suite, validate forced), times at M = 4096, 128, 16
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 1 128 333; do
NVFP4_SM90_CONFIG=128x2x1x2 timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-128x2x1x2-m$m.txt 2>&1; echo "val 128x2x1x2 m$m exit $? $(grep -E '^status' $R/val-128x2x1x2-m$m.txt | cut -c1-70)"
done
timeout 150 build/carry/base bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit base --out $R/m4096-base.json >$R/m4096-base.txt 2>&1
echo "== m4096 base"; grep -E "sm90" $R/m4096-base.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
timeout 200 build/carry/new bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --sm90-config 128x2x1x1,128x2x1x2 --commit new --out $R/m4096-new.json >$R/m4096-new.txt 2>&1
echo "== m4096 new"; grep -E "sm90" $R/m4096-new.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
timeout 100 build/carry/base bench --no-quantizer --rows 128 --iters 30 --backend sm90 --commit base --out $R/m128-base.json >$R/m128-base.txt 2>&1
echo "== m128 base"; grep -E "sm90" $R/m128-base.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
timeout 100 build/carry/new bench --no-quantizer --rows 128 --iters 30 --backend sm90 --sm90-config 64x1x2x1,128x3x1x2,128x2x1x2 --commit new --out $R/m128-new.json >$R/m128-new.txt 2>&1
echo "== m128 new"; grep -E "sm90" $R/m128-new.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
for v in base new; do
  timeout 100 build/carry/$v bench --no-quantizer --rows 16 --iters 30 --backend sm90 --commit $v --out $R/m16-$v.json >$R/m16-$v.txt 2>&1
  echo "== m16 $v"; grep -E "sm90 " $R/m16-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done
timeout 240 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -3 $R/tests.txt; grep FAILED $R/tests.txt | head
tar -czf $OUT/results.tgz -C $OUT r
