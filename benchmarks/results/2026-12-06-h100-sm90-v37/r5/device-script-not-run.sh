#!/bin/bash
# Device call (2026-12-06, thirty-second session): sm90-v37 r5. A multi-chunk K-split stage's A' tiles as one 3-D box
# (the A' operand seen as [chunk][token][64]) instead of one 2-D box per chunk: a3d = -DNVFP4_SM90_KS_A3D=1 on the tree
# (HEAD 6faa80e's kernel otherwise), ta3d with -DNVFP4_SM90_TRACE; hd = the tree at its defaults (6faa80e's SASS in all
# 30 configurations). a3d's bits (Gpu.Sm90*, validate of out and fc2 at M = 16, 32), racecheck on 16x1x1x1x3 / 32x1x1x1x3,
# hd / a3d in alternation on out and fc2 at M = 16, 32, 8 (two rounds), a trace of ta3d on 16x1x1x1x3.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry74/a3d ] || tar -xJf build/carry74.tar.xz -C build
B=$PWD/build/carry74; R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results5.tgz -C $OUT r5; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
timeout 50 $B/a3d_tests --gtest_filter='Gpu.Sm90*' > $R/a3d-tests.txt 2>&1; echo "== a3d Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/a3d-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/a3d-tests.txt | head -4; pack
for m in 16 32; do timeout 40 $B/a3d validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/a3d-val-m$m.txt 2>&1; echo "== a3d validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/a3d-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin a3d=$B/a3d --rows 16,32,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt; pack
NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,32x1x1x1x3 timeout 60 compute-sanitizer --tool racecheck $B/a3d_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck.txt 2>&1; echo "== racecheck rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
NVFP4_SM90_TRACE_OUT=$R/trace-ta3d-m16-16x1x1x1x3.txt timeout 30 $B/ta3d bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --sm90-config 16x1x1x1x3 --shapes attn_out_proj --commit ta3d > /dev/null 2>&1
python3 tools/sm90-trace-summary $R/trace-ta3d-m16-16x1x1x1x3.txt > $R/trace-ta3d-m16-16x1x1x1x3-summary.txt 2>&1; grep -E "ns/chunk|e8 -> e0|e0 -> e2" $R/trace-ta3d-m16-16x1x1x1x3-summary.txt | head -12; pack
echo "done [$(el) s]"
