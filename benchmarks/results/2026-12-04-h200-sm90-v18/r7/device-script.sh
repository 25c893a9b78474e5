#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r7: the kept kernel (0490f2d) at M = 128 in every configuration that fits it, against the launcher's pick: the partial last round (fc1: 448 row blocks, four rounds of 64x1x2x1) against fewer, larger tiles (128x2x1x1: 224 tiles, two rounds)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 128 96; do
timeout 200 build/carry/base bench --no-quantizer --rows $m --iters 30 --backend sm90 --sm90-config 64x1x2x1,128x2x1x1,128x1x1x1,128x1x2x1,128x3x1x2,64x2x1x1 --commit 0490f2d --out $R/m$m-sweep.json > $R/m$m-sweep.txt 2>&1
echo "== m$m sweep"; grep -E "sm90@" $R/m$m-sweep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-110
done
tar -czf $OUT/results.tgz -C $OUT r
