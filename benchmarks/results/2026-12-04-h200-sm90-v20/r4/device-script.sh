#!/usr/bin/env bash
# one-off device call: sm90-v20 r4: the kept commit (04a2c01) as a whole: GPU suite, validate, memcheck and racecheck of the pre-pass tests, the full comparison (cuBLAS bf16, sm90, sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16, 128, 4096; sm90 against f60be0c (base) at M = 16, 32, 64, 128, 4096
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
(cd build/h && timeout 240 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
for t in memcheck racecheck; do
  (cd build/h && timeout 200 compute-sanitizer --tool $t ../carry/new_tests --gtest_filter='Gpu.Sm90PrePass*:Gpu.AmaxPartials*' > $R/sanitizer-$t.txt 2>&1); echo "== $t rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $R/sanitizer-$t.txt | head -3 | tr '\n' ' ')"
done
for m in 1 16 32 64 128 333; do timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for m in 16 128 4096; do it=30; [ $m = 4096 ] && it=10
  timeout 300 $B/new bench --no-quantizer --rows $m --iters $it --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 04a2c01 --out $R/full-m$m.json > $R/full-m$m.txt 2>&1; echo "== full m$m rc $?"; grep -E '\|' $R/full-m$m.txt | grep -v 'of which' | sed -e 's/ TFLOP.*x cuBLAS/ x/' | cut -c1-110; done
for m in 16 32 64 128 4096; do it=30; [ $m = 4096 ] && it=10
  for b in base new; do timeout 200 $B/$b bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $b --out $R/ab-m$m-$b.json > $R/ab-m$m-$b.txt 2>&1; done
  for b in base new; do echo "== m$m $b"; grep -E 'sm90 ' $R/ab-m$m-$b.txt | grep -v 'of which' | sed -e 's/ TFLOP.*x cuBLAS/ x/' | cut -c1-100; done
done
tar -czf $OUT/results.tgz -C $OUT r
