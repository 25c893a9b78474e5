#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r3. hd = c01ea8f (HEAD's machine code); rwf = the change as
# committed (r2's rw1: the K-split verdict lanes keep their records as loaded words and step their coordinates without
# divisions), rwf_tests its tests; tr / trw = the two with -DNVFP4_SM90_TRACE. hd / rwf on out and fc2 at M = 16, 32
# and forced 64x1x1x1x2 at 64; traces at M = 16 (16x1x1x1x2) and 64 (64x1x1x1x2) of both (what paces the K-split now);
# the bits of rwf: Gpu.Sm90*, validate at M = 16, 32 and forced K-splits at 64, racecheck of two K-split configurations.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry67/rwf ] || tar -xJf build/carry67.tar.xz -C build
B=$PWD/build/carry67; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/rwf_tests --gtest_filter='Gpu.Sm90*' > $R/rwf-tests.txt 2>&1; echo "== rwf Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/rwf-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/rwf-tests.txt | head -5; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin rwf=$B/rwf --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 40 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; pack
tools/sm90-ab $R/ab64 --bin hd=$B/hd --bin rwf=$B/rwf --rows 64 --rounds 2 --shapes attn_out_proj,mlp_fc2 --sm90-config 64x1x1x1x2 --budget 30 > $R/ab64.txt 2>&1; echo "== ab64 rc $? [$(el) s]"; short $R/ab64.txt; pack
for t in tr:16x1x1x1x2 trw:16x1x1x1x2 tr:64x1x1x1x2 trw:64x1x1x1x2; do
  b=${t%%:*}; c=${t#*:}; m=${c%%x*}
  NVFP4_SM90_TRACE_OUT=$R/trace-$b-m$m-$c.txt timeout 60 $B/$b bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit $b > /dev/null 2>&1
  echo "== trace $b $c rc $?"; python3 tools/sm90-trace-summary $R/trace-$b-m$m-$c.txt > $R/trace-$b-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk|median" $R/trace-$b-m$m-$c-summary.txt | head -14
done; pack
for m in 16 32; do timeout 60 $B/rwf validate --rows $m --linear out,fc2 --candidate sm90 --quiet --out /tmp/v$m > $R/rwf-val-m$m.txt 2>&1; echo "== rwf validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/rwf-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
for c in 64x1x1x1x2 64x1x1x1x3; do NVFP4_SM90_CONFIG=$c timeout 60 $B/rwf validate --rows 64 --linear out,fc2 --candidate sm90 --quiet --out /tmp/v64 > $R/rwf-val-m64-$c.txt 2>&1; echo "== rwf validate M=64 $c rc $? $(grep -o 'status: [A-Z]*' $R/rwf-val-m64-$c.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
NVFP4_TEST_SM90_CONFIGS=16x1x1x1x2,32x1x1x1x3,64x1x1x1x3 timeout 150 compute-sanitizer --tool racecheck $B/rwf_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/rwf-racecheck.txt 2>&1; echo "== racecheck rc $? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $R/rwf-racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
echo "done [$(el) s]"; pack
NVFP4_TEST_SM90_CONFIGS=16x1x1x1x2,32x1x1x1x3 timeout 120 compute-sanitizer --tool memcheck $B/rwf_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/rwf-memcheck.txt 2>&1; echo "== memcheck rc $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $R/rwf-memcheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
