#!/usr/bin/env bash
# one-off device call: sm90-v20 r8: review: swizzled_offset in unsigned arithmetic (the pre-pass calls it again; the dequantizer, the GEMM model, the sm90 prepack and the SM120 kernels take it too); the bench's GEMM arguments written once; GPU suite, validate, times against r7's binary (prev)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
(cd build/h && timeout 200 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
for m in 16 128; do timeout 90 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for b in prev new; do timeout 100 $B/$b bench --no-quantizer --rows 4096 --shapes qkv,fc2 --iters 5 --backend sm90,sm90-stream,comfy-hopper --commit $b --out $R/b-$b.json > $R/b-$b.txt 2>&1; echo "== $b"; grep -E 'sm90|comfy' $R/b-$b.txt | sed -e 's/ TFLOP.*x cuBLAS/ x/' -e 's/  */ /g' | cut -c1-90; done
tar -czf $OUT/results.tgz -C $OUT r
