#!/usr/bin/env bash
# one-off device call: sm90-v22 r5: the stage cap of six for the tiles of up to 64 tokens and the two-chain tiles (new) against base (75bcaae) at M = 16, 32, 64, 128, 192, 512, two rounds alternated; GPU suite; racecheck with the six-stage ring; validate
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for m in 16 32 64 128 192 512; do
    for v in base new; do
      timeout 90 $B/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/m$m-$v-$x.json > $R/m$m-$v-$x.txt 2>&1; echo "== m$m $v $x: $(row $R/m$m-$v-$x.txt)"
    done
  done
done
tar -czf $OUT/results.tgz -C $OUT r
timeout 200 $B/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/gpu-suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-suite.txt | tr '\n' ' ')"
grep -E 'FAILED|Failure' $R/gpu-suite.txt | head -20
tar -czf $OUT/results.tgz -C $OUT r
for c in 16x3x1x1 64x1x1x1 128x3x1x2; do NVFP4_SM90_CONFIG=$c timeout 90 compute-sanitizer --tool racecheck $B/new validate --shapes san:300:1000 --rows 150 --candidate sm90 --quiet --out /tmp/san > $R/racecheck-$c.txt 2>&1; echo "== racecheck $c rc $? $(grep -E 'hazard|ERROR SUMMARY|status' $R/racecheck-$c.txt | tail -2 | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
for m in 16 64 128; do timeout 90 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
