#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r5. rwf = r3's committed change; lc4 = rwf with
# -DNVFP4_SM90_LANE_COPIES4=1 (a four-chunk K-split stage's four weight copies and four A' copies each issued by its own
# lane of the two copy warps, as two-chunk stages do since results v21), lc4_tests its tests, tlc4 it traced. r4 had
# neither a third or fourth chunk-sum warpgroup nor two chunks' MMAs in flight change the 16-token K-split's pace
# (~155 ns a chunk), and r3's trace has the copy thread spending ~540 ns per four-chunk stage between reaching it and
# having issued its copies. rwf / lc4 on out and fc2 at M = 16; the 16-token configurations in one process; a trace;
# the bits of lc4.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry69/lc4 ] || tar -xJf build/carry69.tar.xz -C build
B=$PWD/build/carry69; R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results5.tgz -C $OUT r5; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/lc4_tests --gtest_filter='Gpu.Sm90*' > $R/lc4-tests.txt 2>&1; echo "== lc4 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/lc4-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/lc4-tests.txt | head -5; pack
tools/sm90-ab $R/ab --bin rwf=$B/rwf --bin lc4=$B/lc4 --rows 16 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 30 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; pack
for b in rwf lc4; do
  timeout 90 $B/$b bench --no-quantizer --rows 16 --iters 30 --backend sm90 --sm90-config 16x1x1x1x2,16x1x1x1x3,16x1x1x1x4 --shapes attn_out_proj,mlp_fc2 --commit $b --out $R/cfg-$b-m16.json > $R/cfg-$b-m16.txt 2>&1
  echo "-- configs $b M=16 rc $? [$(el) s]"; grep -E "sm90@" $R/cfg-$b-m16.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}' | tr -s ' '
done; pack
NVFP4_SM90_TRACE_OUT=$R/trace-tlc4-m16-16x1x1x1x2.txt timeout 60 $B/tlc4 bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --sm90-config 16x1x1x1x2 --shapes attn_out_proj --commit tlc4 > /dev/null 2>&1
echo "== trace tlc4 rc $?"; python3 tools/sm90-trace-summary $R/trace-tlc4-m16-16x1x1x1x2.txt > $R/trace-tlc4-m16-16x1x1x1x2-summary.txt 2>&1; grep -E "ns/chunk|median" $R/trace-tlc4-m16-16x1x1x1x2-summary.txt | head -14; pack
timeout 60 $B/lc4 validate --rows 16 --linear out,fc2 --candidate sm90 --quiet --out /tmp/v16 > $R/lc4-val-m16.txt 2>&1; echo "== lc4 validate M=16 rc $? $(grep -o 'status: [A-Z]*' $R/lc4-val-m16.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
echo "done [$(el) s]"
