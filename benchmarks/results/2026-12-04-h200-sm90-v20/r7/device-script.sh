#!/usr/bin/env bash
# one-off device call: sm90-v20 r7: r6's streaming pre-pass with rcp(s) taken inside the shared block function (so that the GPU quantizer's SASS is its old one): GPU suite, sanitizers, validate, sm90-stream against 04a2c01 (prev)
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
  (cd build/h && timeout 150 compute-sanitizer --tool $t ../carry/new_tests --gtest_filter='Gpu.Sm90PrePass*:Gpu.AmaxPartials*:Gpu.Sm90Streaming*' > $R/sanitizer-$t.txt 2>&1); echo "== $t rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $R/sanitizer-$t.txt | head -3 | tr '\n' ' ')"
done
for m in 1 16 128 333; do timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for m in 16 4096; do it=30; [ $m = 4096 ] && it=10
  for b in prev new; do timeout 200 $B/$b bench --no-quantizer --rows $m --iters $it --backend sm90-stream --commit $b --out $R/b-m$m-$b.json > $R/b-m$m-$b.txt 2>&1; done
  for b in prev new; do echo "== m$m $b"; grep -E 'sm90' $R/b-m$m-$b.txt | sed -e 's/ TFLOP.*x cuBLAS/ x/' -e 's/  */ /g' | cut -c1-80; done
done
tar -czf $OUT/results.tgz -C $OUT r
