#!/usr/bin/env bash
# one-off device call: sm90-v19 r11: the launcher taking 128x1x1x1 for the 84-row-block linears at M = 65-128 (new) against 6de0e27 (base, 64x2x1x1): validate, times
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
for m in 65 96 128; do timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for m in 128 96; do for b in base new base new; do timeout 120 $B/$b bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90,sm90-stream --commit $b --out $R/m$m-$b.json > $R/m$m-$b.txt 2>&1; echo "== m$m $b"; grep -E "sm90(-stream)? " $R/m$m-$b.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-110; done; done
tar -czf $OUT/results.tgz -C $OUT r
