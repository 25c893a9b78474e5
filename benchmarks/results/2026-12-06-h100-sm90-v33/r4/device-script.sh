#!/bin/bash
# Device call (2026-12-06, twenty-seventh session): sm90-v33 r4, asked of an H200 (the README's H200 table is results
# v28's). Binaries: cur = HEAD f8f5591's kernel; fin = the commit's build (the bf16 output by stmatrix and tensor copies
# on the one-chain tiles; r3's fin); fin_tests its test binary.
# r4: fin's bits (every GPU test; validate at M = 128), cur / fin in alternation at M = 16, 128, 4096, 32, 64 (two
#     rounds), fin's comparison columns (sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16 and 128.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/fin_tests --gtest_filter='Gpu.*' > $R/fin-tests.txt 2>&1; echo "== fin tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/fin-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/fin-tests.txt | head -8
timeout 40 $B/fin validate --rows 128 --candidate sm90,sm90-stream --quiet --out /tmp/dfin128 > $R/fin-val-m128.txt 2>&1; echo "== fin validate M=128 rc $? $(grep -o "status: [A-Z]*" $R/fin-val-m128.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
tools/sm90-ab $R --bin cur=$B/cur --bin fin=$B/fin --rows 16,128,4096,32,64 --rounds 2 --budget $(( 330 - $(el) )) --timeout 60; echo "== ab rc $? [$(el) s]"
for m in 16 128; do
  [ $(el) -lt 400 ] || break
  timeout 60 $B/fin bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit fin --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"
done
tools/bench-compare $R --base cur > $R/compare.txt 2>&1; cat $R/compare.txt
tar -czf $OUT/results.tgz -C $OUT r4
echo "done [$(el) s]"
