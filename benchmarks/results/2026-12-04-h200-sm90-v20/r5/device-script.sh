#!/usr/bin/env bash
# one-off device call: sm90-v20 r5: the pre-pass with several chunks per CTA for small activations (cpc: at most 16 CTAs, so that the GEMM's CTAs start beside it) against 04a2c01 (prev); the bench's new GEMM-alone time
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
  (cd build/h && timeout 200 compute-sanitizer --tool $t ../carry/new_tests --gtest_filter='Gpu.Sm90PrePass*:Gpu.AmaxPartials*:Gpu.Sm90Streaming*' > $R/sanitizer-$t.txt 2>&1); echo "== $t rc $? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|PASSED|FAILED' $R/sanitizer-$t.txt | head -3 | tr '\n' ' ')"
done
for m in 1 16 32 128 333; do timeout 120 $B/cpc validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for m in 16 32 64 128; do
  rounds="1 2"; [ $m -ge 64 ] && rounds=1
  for k in $rounds; do for b in prev cpc; do timeout 200 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit $b --out $R/b-m$m-$b-$k.json > $R/b-m$m-$b-$k.txt 2>&1; done; done
  for k in $rounds; do for b in prev cpc; do echo "== m$m $b $k"; grep -E 'sm90' $R/b-m$m-$b-$k.txt | sed -e 's/ TFLOP.*x cuBLAS/ x/' -e 's/  */ /g' | cut -c1-100; done; done
done
for b in prev cpc; do timeout 200 $B/$b bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $b --out $R/b-m4096-$b.json > $R/b-m4096-$b.txt 2>&1; echo "== m4096 $b"; grep -E 'sm90' $R/b-m4096-$b.txt | sed -e 's/ TFLOP.*x cuBLAS/ x/' -e 's/  */ /g' | cut -c1-100; done
tar -czf $OUT/results.tgz -C $OUT r
