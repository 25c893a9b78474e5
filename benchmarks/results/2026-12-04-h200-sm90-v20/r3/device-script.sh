#!/usr/bin/env bash
# one-off device call: sm90-v20 r3: the pre-pass with the small blocks' five folds in one warp (new), and with 40 registers (mx), against f60be0c (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
C=build/carry
(cd build/h && timeout 300 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); tail -3 $R/tests.txt; grep -E "FAILED|Failure" $R/tests.txt | head
for M in 1 16 32 128 333; do
  timeout 120 $C/new validate --linear qkv,out,fc1,fc2 --rows $M --candidate sm90,sm90-stream --quiet --out /tmp/v$M > $R/validate-m$M.txt 2>&1; echo "validate M=$M: $(grep -c 'status: PASS' $R/validate-m$M.txt) PASS"
done
# pre-pass GPU time (ncu duration, one launch each)
for c in "16 qkv" "32 qkv" "128 qkv" "4096 qkv" "4096 fc2"; do set -- $c
  for b in base new mx; do
    d=$(timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum -k regex:sm90_prep_a -c 3 $C/$b bench --no-quantizer --rows $1 --shapes $2 --iters 2 --warmup 0 --backend sm90 2>/dev/null | grep gpu__time_duration | awk '{print $NF}' | tr '\n' ' ')
    echo "prepass m$1 $2 $b: $d"
  done
done | tee $R/prepass-ncu.txt
for M in 16 32; do
  for b in base new; do
    $C/$b bench --no-quantizer --rows $M --iters 30 --backend sm90 --commit $b --out $R/b-m$M-$b.json > $R/b-m$M-$b.txt 2>&1
  done
  for b in base new; do echo "== M=$M $b"; grep -E "sm90 " $R/b-m$M-$b.txt | grep -v "pre-pass" | sed 's/  */ /g' | cut -c1-80; done
done
for b in new mx; do
  $C/$b bench --no-quantizer --rows 4096 --iters 10 --backend sm90,sm90-stream --commit $b --out $R/b-m4096-$b.json > $R/b-m4096-$b.txt 2>&1
  echo "== M=4096 $b"; grep -E "sm90" $R/b-m4096-$b.txt | sed 's/  */ /g' | cut -c1-90
done
tar -czf $OUT/results.tgz -C $OUT r
