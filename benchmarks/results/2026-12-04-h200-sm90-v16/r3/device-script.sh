#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r3: a measurement build whose one-chain step keeps the verdict check and the bound recompute but not the fallback's code (nofb; bits not guaranteed) against 6a0eb55 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for rep in 1 2; do for v in base nofb; do for m in 16 128 4096; do
  it=30; sh=out,fc1,fc2; [ $m = 4096 ] && { it=10; sh=qkv,out; }; [ $m = 16 ] && sh=qkv,fc1
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters $it --shapes $sh --backend sm90 --commit $v --out $R/m$m-$v-$rep.json >$R/m$m-$v-$rep.txt 2>&1
  echo "== m$m $v $rep"; grep -E "sm90 " $R/m$m-$v-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done; done
tar -czf $OUT/results.tgz -C $OUT r
