#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r2: what the one-chain step's settle (verdict, bound, fallback branch) and the ring's copies cost: measurement builds without settle (bits not guaranteed), without copies after the first ring round (output meaningless), and without both, against 6a0eb55 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 60 build/carry/nosettle validate --linear qkv,out,fc1,fc2 --rows 128 --candidate sm90 --quiet --out /tmp/v >$R/val-nosettle-m128.txt 2>&1; echo "val nosettle m128 exit $? $(grep -E '^status' $R/val-nosettle-m128.txt | cut -c1-60)"
for rep in 1 2; do for v in base nosettle nocopy nosettle_nocopy; do for m in 16 128 4096; do
  it=30; sh=qkv,out,fc1,fc2; [ $m = 4096 ] && { it=10; sh=qkv,out; }; [ $m = 16 ] && sh=qkv,fc1
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters $it --shapes $sh --backend sm90 --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90 " $R/m$m-$v-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done; done
tar -czf $OUT/results.tgz -C $OUT r
