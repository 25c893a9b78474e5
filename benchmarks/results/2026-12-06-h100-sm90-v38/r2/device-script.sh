#!/bin/bash
# Device call (2026-12-06, thirty-third session): sm90-v38 r2. a3 / a3_tests = the working tree (v37 r5's 3-D A' box the
# default: its SASS equals r1's a3d in all 30 configurations); a3sr = a3 with the stage-warp mend (copy_thread without
# stage_warp; differs from a3 in 32x1x1x1x2 / x3 only); hd = HEAD 861763f's kernel (6faa80e's SASS). Every GPU test,
# validate's default, memcheck and racecheck of the multi-chunk K-split configurations, then hd / a3 on all four shapes at
# M = 16, 32, 8 (two rounds) and a3 / a3sr at M = 32 (out, fc2; three rounds).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry76/a3 ] || tar -xJf build/carry76.tar.xz -C build
B=$PWD/build/carry76; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 240 $B/a3_tests --gtest_filter='Gpu.*' --gtest_output=json:$R/gpu-tests.json > $R/gpu-tests.txt 2>&1; echo "== a3 Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/gpu-tests.txt | head -5; pack
(cd build/h && timeout 60 $B/a3 validate > $R/validate-default.txt 2>&1); echo "== a3 validate (default) rc $? $(grep -oE 'status: [A-Z]+|PASS|FAIL' $R/validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; tail -3 $R/validate-default.txt; pack
for m in 1 16 17 32 33; do timeout 40 $B/a3 validate --rows $m --linear out,fc2,qkv,fc1 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== a3 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
san() { NVFP4_TEST_SM90_CONFIGS=16x1x1x1x2,16x1x1x1x3,16x1x1x1x4,32x1x1x1x2,32x1x1x1x3 timeout 120 compute-sanitizer --tool $1 $B/a3_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/$1.txt 2>&1; echo "== $1 rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/$1.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
san racecheck; san memcheck
tools/sm90-ab $R/ab --bin hd=$B/hd --bin a3=$B/a3 --rows 16,32,8 --rounds 2 --budget 150 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt; pack
tools/sm90-ab $R/absr --bin a3=$B/a3 --bin a3sr=$B/a3sr --rows 32 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 60 > $R/absr.txt 2>&1; echo "== absr rc $? [$(el) s]"
python3 tools/bench-compare $R/absr --base a3 > $R/absr/compare.txt 2>&1; cat $R/absr/compare.txt; pack
echo "done [$(el) s]"
