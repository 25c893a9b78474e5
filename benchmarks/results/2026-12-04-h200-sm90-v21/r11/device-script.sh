#!/usr/bin/env bash
# one-off device call: sm90-v21 r11: the kept commit b41e866 (128x1x1x1's early ready wait): GPU suite, validate at M = 65, 100, 128, the full comparison at M = 128
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
(cd build/h && timeout 150 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
for m in 65 100 128; do timeout 40 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
timeout 60 $B/new bench --no-quantizer --rows 128 --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit b41e866 --out $R/full-m128.json > $R/full-m128.txt 2>&1; echo "== full m128 rc $?"; grep -v pre-pass $R/full-m128.txt | sed -e 's/ TFLOP.*| */ | /' -e 's/  */ /g' | cut -c1-100
tar -czf $OUT/results.tgz -C $OUT r
