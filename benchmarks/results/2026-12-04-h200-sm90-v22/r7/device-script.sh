#!/usr/bin/env bash
# one-off device call: sm90-v22 r7: the tile configurations around the launcher's picks at M = 16, 32, 64, 128 with the six-stage rings (kept commit 546fb8e), two rounds
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  timeout 90 $B/kept bench --no-quantizer --rows 16 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 16x2x1x1,16x3x1x1,16x4x1x1 --commit 546fb8e --out $R/m16-$x.json > $R/m16-$x.txt 2>&1; echo "== m16 $x: $(row $R/m16-$x.txt)"
  timeout 90 $B/kept bench --no-quantizer --rows 32 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 32x2x1x1,32x3x1x1 --commit 546fb8e --out $R/m32-$x.json > $R/m32-$x.txt 2>&1; echo "== m32 $x: $(row $R/m32-$x.txt)"
  timeout 90 $B/kept bench --no-quantizer --rows 64 --iters 30 --backend sm90 --sm90-config 64x1x1x1,64x2x1x1,64x3x1x1,64x1x2x1 --commit 546fb8e --out $R/m64-$x.json > $R/m64-$x.txt 2>&1; echo "== m64 $x: $(row $R/m64-$x.txt)"
  timeout 120 $B/kept bench --no-quantizer --rows 128 --iters 30 --backend sm90 --sm90-config 128x1x1x1,128x2x1x1,128x3x1x2,64x2x1x1,64x3x1x1,64x1x2x1 --commit 546fb8e --out $R/m128-$x.json > $R/m128-$x.txt 2>&1; echo "== m128 $x: $(row $R/m128-$x.txt)"
done
tar -czf $OUT/results.tgz -C $OUT r
