#!/usr/bin/env bash
# one-off device call (not committed): sm90-v15 r4: what the one-chain step's bound recompute costs (a measurement build that never recomputes the running accumulator bound; its bits are not guaranteed) against 464f40c (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 90 build/carry/nobound validate --linear qkv,out,fc1,fc2 --rows 128 --candidate sm90 --quiet --out /tmp/v >$R/val-nobound-m128.txt 2>&1; echo "val nobound m128 exit $? $(grep -E '^status' $R/val-nobound-m128.txt | cut -c1-60)"
for rep in 1 2; do for v in base nobound; do for m in 128 4096; do
  it=30; [ $m = 4096 ] && it=10
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90 " $R/m$m-$v-$rep.txt | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done; done
tar -czf $OUT/results.tgz -C $OUT r
