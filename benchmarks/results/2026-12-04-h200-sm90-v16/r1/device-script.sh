#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r1: issue turns between the one-chain consumer warpgroups (turn) against 6a0eb55's kernel (noturn)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 16 128; do
timeout 60 build/carry/turn validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90 --quiet --out /tmp/v >$R/val-turn-m$m.txt 2>&1; echo "val turn m$m exit $? $(grep -E '^status' $R/val-turn-m$m.txt | cut -c1-60)"
done
for rep in 1 2; do for v in noturn turn; do for m in 16 128 4096; do
  it=30; [ $m = 4096 ] && it=10
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90 " $R/m$m-$v-$rep.txt | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done; done
timeout 240 build/carry/turn_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -3 $R/tests.txt
tar -czf $OUT/results.tgz -C $OUT r
