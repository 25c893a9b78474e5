#!/usr/bin/env bash
# one-off device call: sm90-v19 r13: review refactor (the model's block pieces and the token record's RowChunk written once; every kernel's SASS moved) against 60858cf (base): GPU suite, validate, times
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
(cd build/h && timeout 150 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
timeout 60 $B/new validate --linear qkv,out,fc1,fc2 --rows 128 --candidate sm90,sm90-stream --quiet --out /tmp/v > $R/val-m128.txt 2>&1; echo "== validate m128 $(grep -o 'status: [A-Z]*' $R/val-m128.txt)"
for m in 16 64 128; do for b in base new base new; do timeout 60 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $b --out $R/m$m-$b.json > $R/m$m-$b.txt 2>&1; echo "== m$m $b $(grep -E 'sm90 ' $R/m$m-$b.txt | grep -v 'of which' | awk -F'|' '{printf "%s ", $2}')"; done; done
for b in base new; do timeout 60 $B/$b bench --no-quantizer --rows 4096 --shapes qkv,out --iters 10 --backend sm90 --commit $b --out $R/m4096-$b.json > $R/m4096-$b.txt 2>&1; echo "== m4096 $b $(grep -E 'sm90 ' $R/m4096-$b.txt | grep -v 'of which' | awk -F'|' '{printf "%s ", $2}')"; done
tar -czf $OUT/results.tgz -C $OUT r
