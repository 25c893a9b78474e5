#!/bin/bash
# Device call (2026-12-05, nineteenth session): sm90-v27 r5, on the H200 that r4 had (still warm): mult (e838218) and
# uni (bc7fa38) in alternation again, two rounds, every linear at M = 16, 32, 64, 128, 4096; every baseline with uni at
# M = 16 and 128 in round 1. Sent as one command line; this is it, unchanged but for line breaks.
[ -x build/carry/uni ] || tar -xJf build/carry.tar.xz -C build; R=$OUT/r5; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt
for x in 1 2; do for m in 16 32 64 128 4096; do
  it=30; [ $m = 4096 ] && it=10; be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
  timeout 120 build/carry/mult bench --no-quantizer --rows $m --iters $it --backend sm90 --commit e838218 --out $R/mult-m$m-$x.json > $R/mult-m$m-$x.txt 2>&1
  timeout 120 build/carry/uni bench --no-quantizer --rows $m --iters $it --backend $be --commit bc7fa38 --out $R/uni-m$m-$x.json > $R/uni-m$m-$x.txt 2>&1
  echo "m$m-$x $(grep -E ' sm90 ' $R/uni-m$m-$x.txt | grep -v pre-pass | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ';')"
done; done; tar -czf $OUT/results5.tgz -C $OUT r5
