#!/bin/bash
# Device call (2026-12-06, thirty-second session): sm90-v37 r4. fin2 = the working tree's kernel (two copy warps take
# the 32-token K-split's stages in turn; SASS: r3's sw2 in 32x1x1x1x2 / x3, whose Gpu.Sm90* passed in r3, and 4f8772d's
# in the other 28 configurations), fin2_tests its tests; hd = r3's hd. In order of need, each step guarded by the time
# spent: racecheck of the bf16-output test on 32x1x1x1x2 / x3; validate of out and fc2 at M = 32 and 17 through sm90 and
# sm90-stream; memcheck as racecheck; hd / fin2 in alternation on out and fc2 at M = 32 (two rounds); Gpu.Sm90*.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry73/fin2 ] || tar -xJf build/carry73.tar.xz -C build
B=$PWD/build/carry73; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
san() { NVFP4_TEST_SM90_CONFIGS=32x1x1x1x2,32x1x1x1x3 timeout 90 compute-sanitizer --tool $1 $B/fin2_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/$1.txt 2>&1; echo "== $1 rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/$1.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
san racecheck
for m in 32 17; do timeout 40 $B/fin2 validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== fin2 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
[ $(el) -lt 150 ] && san memcheck
[ $(el) -lt 200 ] && { tools/sm90-ab $R/ab --bin hd=$B/hd --bin fin2=$B/fin2 --rows 32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 40 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; python3 tools/bench-compare $R/ab --base hd > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt; pack; }
[ $(el) -lt 230 ] && { timeout 40 $B/fin2_tests --gtest_filter='Gpu.Sm90*' > $R/sm90-tests.txt 2>&1; echo "== fin2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sm90-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/sm90-tests.txt | head -5; pack; }
echo "done [$(el) s]"
