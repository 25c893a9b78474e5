#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r12: chunk-sum warpgroups per K-split tile again, with stages of several chunks and the ring of d375988 (45ac71f's binary)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for rep in 1 2; do
  build/carry/head bench --no-quantizer --rows 32 --iters 30 --backend sm90 --shapes out,fc2 --sm90-config 32x1x1x1x2,32x1x1x1x3 --commit 45ac71f --out $R/m32-$rep.json >$R/m32-$rep.txt 2>&1
  echo "== m32 ($rep)"; grep -E "sm90" $R/m32-$rep.txt | grep -v "of which" | cut -c1-130
  build/carry/head bench --no-quantizer --rows 16 --iters 30 --backend sm90 --shapes out,fc2 --sm90-config 16x1x1x1x2,16x1x1x1x3,16x1x1x1x4 --commit 45ac71f --out $R/m16-$rep.json >$R/m16-$rep.txt 2>&1
  echo "== m16 ($rep)"; grep -E "sm90" $R/m16-$rep.txt | grep -v "of which" | cut -c1-130
done
tar -czf $OUT/results.tgz -C $OUT r
