#!/usr/bin/env bash
# one-off device call: sm90-v21 r6: tile-configuration sweep at M = 192, 256, 768 (kept commit 5311906's binary)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
S84=128x2x1x1,64x3x1x1,64x2x1x1,128x1x2x1,128x3x1x2,128x1x1x1
SBIG=128x2x1x1,128x3x1x2,64x3x1x1,64x2x1x1,128x1x1x1
for m in 192 256 768; do
  timeout 120 $B/new bench --no-quantizer --rows $m --shapes out,fc2 --iters 20 --backend sm90 --sm90-config $S84 --commit 5311906 --out $R/s84-m$m.json > $R/s84-m$m.txt 2>&1; echo "== s84 m$m rc $?"
  timeout 120 $B/new bench --no-quantizer --rows $m --shapes qkv,fc1 --iters 20 --backend sm90 --sm90-config $SBIG --commit 5311906 --out $R/sbig-m$m.json > $R/sbig-m$m.txt 2>&1; echo "== sbig m$m rc $?"
  grep -E 'sm90@' $R/s84-m$m.txt $R/sbig-m$m.txt | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed -e 's/  */ /g' -e 's/^.*txt://'
  tar -czf $OUT/results.tgz -C $OUT r
done
