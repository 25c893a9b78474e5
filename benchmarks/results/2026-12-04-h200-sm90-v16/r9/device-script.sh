#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r9: a measurement build of 9fde6d9 whose hot loop ignores the running bound (never leaves the loop for a recompute; bits not guaranteed) against 9fde6d9 (kept): what the bound's recompute trips cost
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
for v in kept nobound; do for m in 128 4096; do
  it=30; sh=out,fc1,fc2; [ $m = 4096 ] && { it=10; sh=qkv,out; }
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters $it --shapes $sh --backend sm90 --commit $v --out $R/m$m-$v.json >$R/m$m-$v.txt 2>&1
  echo "== m$m $v"; grep -E "sm90 " $R/m$m-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done
tar -czf $OUT/results.tgz -C $OUT r
