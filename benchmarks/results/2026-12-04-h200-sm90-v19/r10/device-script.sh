#!/usr/bin/env bash
# one-off device call: sm90-v19 r10: the 84-row-block linears (out, fc2) at M = 96 and 128 in one-round configurations that use more SMs (32x3x1x1: 112 CTAs) against the launcher's 64x2x1x1 (84 CTAs); HEAD 6de0e27
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 128 96; do for rep in 1 2; do
  timeout 120 build/carry/new bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --sm90-config 64x2x1x1,32x3x1x1,128x1x1x1,64x1x1x1 --commit 6de0e27 --out $R/m$m-sweep-$rep.json > $R/m$m-sweep-$rep.txt 2>&1
  echo "== m$m rep $rep"; grep -E "sm90@" $R/m$m-sweep-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-110
done; done
tar -czf $OUT/results.tgz -C $OUT r
