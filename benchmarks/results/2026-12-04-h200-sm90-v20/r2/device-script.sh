#!/usr/bin/env bash
# one-off device call: sm90-v20 r2: the pre-pass with the fp16 decode and the tile record folded from the group partials (new) against f60be0c (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
C=build/carry
(cd build/h && timeout 300 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); tail -3 $R/tests.txt; grep -E "FAILED|Failure" $R/tests.txt | head
for M in 1 16 128 333; do
  timeout 120 $C/new validate --linear qkv,out,fc1,fc2 --rows $M --candidate sm90,sm90-stream --quiet --out /tmp/v$M > $R/validate-m$M.txt 2>&1; echo "validate M=$M: $(grep -c 'status: PASS' $R/validate-m$M.txt) PASS, rc $?"
done
for M in 16 128 4096; do
  it=30; [ $M = 4096 ] && it=10
  for b in base new; do
    $C/$b bench --no-quantizer --rows $M --iters $it --backend sm90,sm90-stream --commit $b --out $R/b-m$M-$b.json > $R/b-m$M-$b.txt 2>&1
  done
  for b in base new; do echo "== M=$M $b"; grep -E "sm90" $R/b-m$M-$b.txt | sed 's/  */ /g' | cut -c1-110; done
done
for c in "16 qkv" "4096 qkv" "4096 fc2"; do set -- $c
  tag=m$1-$2
  timeout 200 ncu --clock-control none --set full -k regex:sm90_prep_a -c 1 -f -o $R/ncu-$tag $C/new bench --no-quantizer --rows $1 --shapes $2 --iters 1 --warmup 0 --backend sm90 > /dev/null 2>&1
  ncu --import $R/ncu-$tag.ncu-rep --page details > $R/ncu-new-$tag.txt 2>&1; rm -f $R/ncu-$tag.ncu-rep
  echo "== ncu new $tag"; grep -E "^    (Duration|Issue Slots Busy|Registers Per Thread|Achieved Occupancy|Executed Instructions  )" $R/ncu-new-$tag.txt | head -6
done
tar -czf $OUT/results.tgz -C $OUT r
