#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r6: the running bound's recompute inside the hot loop (rin: warpgroup-uniform, a named barrier) against r5's loop (r5: the recompute outside the loop with the fallback) and 6a0eb55 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 16 128; do
timeout 60 build/carry/rin validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-rin-m$m.txt 2>&1; echo "val rin m$m exit $? $(grep -E '^status' $R/val-rin-m$m.txt | cut -c1-70)"
done
for rep in 1 2; do for v in base r5 rin; do for m in 32 128; do
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters 30 --shapes qkv,out,fc1,fc2 --backend sm90 --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90 " $R/m$m-$v-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done; done
for v in base r5 rin; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-$v.json >$R/m4096-$v.txt 2>&1
  echo "== m4096 $v"; grep -E "sm90" $R/m4096-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done
timeout 200 build/carry/rin_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' > $R/tests-rin.txt 2>&1; echo "tests rin exit $?"; tail -1 $R/tests-rin.txt
tar -czf $OUT/results.tgz -C $OUT r
