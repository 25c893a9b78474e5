#!/usr/bin/env bash
# one-off device call: sm90-v21 r1: tile-configuration sweep at M = 512 ... 4096 (the launcher takes 128x2x1x1 above 128 tokens; out and fc2 have 84 row blocks, a partial last round)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
S84=128x2x1x1,128x3x1x2,64x2x1x1,64x3x1x1,128x1x1x1,256x1x1x2,128x1x2x1
SBIG=128x2x1x1,128x3x1x2,128x1x1x1,256x1x1x2
for m in 4096 1024 2048 512; do
  it=20; [ $m -ge 2048 ] && it=10
  timeout 150 $B/new bench --no-quantizer --rows $m --shapes out,fc2 --iters $it --backend sm90 --sm90-config $S84 --commit 5a65c34 --out $R/s84-m$m.json > $R/s84-m$m.txt 2>&1; echo "== s84 m$m rc $?"
  timeout 150 $B/new bench --no-quantizer --rows $m --shapes qkv,fc1 --iters $it --backend sm90 --sm90-config $SBIG --commit 5a65c34 --out $R/sbig-m$m.json > $R/sbig-m$m.txt 2>&1; echo "== sbig m$m rc $?"
  grep -E 'sm90 ' $R/s84-m$m.txt $R/sbig-m$m.txt | grep -v 'of which' | sed -e 's/ TFLOP.*x cuBLAS/ x/' -e 's/  */ /g' | cut -c1-120
  tar -czf $OUT/results.tgz -C $OUT r
done
