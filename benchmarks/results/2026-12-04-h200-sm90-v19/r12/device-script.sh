#!/usr/bin/env bash
# one-off device call: sm90-v19 r12: M = 4096, the 128-token configurations again now that trips run on the warp's lanes (d99b0fd)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 250 build/carry/new bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --sm90-config 128x2x1x1,128x3x1x2,128x1x2x1,128x1x1x1 --commit d99b0fd --out $R/m4096-sweep.json > $R/m4096-sweep.txt 2>&1
echo "== m4096 sweep rc $?"; grep -E "sm90@" $R/m4096-sweep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-110
tar -czf $OUT/results.tgz -C $OUT r
