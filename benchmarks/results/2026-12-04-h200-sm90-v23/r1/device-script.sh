#!/usr/bin/env bash
# one-off device call: sm90-v23 r1: the bf16 epilogue with one 8-byte store per lane and four rows (epi) against the kept kernel (546fb8e) at M = 16, 32, 64, 128, 4096, two rounds alternated; GPU suite with the new no-raw test; memcheck of the new test; validate
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
timeout 240 $B/epi_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/gpu-suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-suite.txt | tr '\n' ' ')"
grep -E 'FAILED|Failure' $R/gpu-suite.txt | head -20
tar -czf $OUT/results.tgz -C $OUT r
for x in 1 2; do
  for m in 16 32 64 128 4096; do
    it=30; [ $m = 4096 ] && it=10
    for v in kept epi; do
      timeout 120 $B/$v bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $v --out $R/m$m-$v-$x.json > $R/m$m-$v-$x.txt 2>&1; echo "== m$m $v $x: $(row $R/m$m-$v-$x.txt)"
    done
  done
  tar -czf $OUT/results.tgz -C $OUT r
done
timeout 240 compute-sanitizer --tool memcheck $B/epi_tests --gtest_filter='Gpu.Sm90Bf16Output*' > $R/memcheck-new-test.txt 2>&1; echo "== memcheck rc $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $R/memcheck-new-test.txt | tail -3 | tr '\n' ' ')"
tar -czf $OUT/results.tgz -C $OUT r
for m in 16 128; do timeout 90 $B/epi validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
