#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r4. rwf = r3's committed change (the K-split verdict lanes'
# records as loaded words); kp = rwf with -DNVFP4_SM90_KS_PIPE=1 (a chunk-sum warpgroup keeps two chunks' MMAs in
# flight across a whole stage: chunk k's run while k - 1's sums are stored and k + 1 is decoded), kp_tests its tests;
# trw / tkp the two traced. r3's traces had the chunk-sum warpgroups pacing the K-split at 16 tokens (~250 ns a chunk
# each: issue, decode, wait for the MMAs, store). rwf / kp on out and fc2 at M = 16, 32 (launcher's picks), then each
# configuration of the K-split at 16 and 32 tokens in one process; bits of kp; traces at M = 16.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry68/kp ] || tar -xJf build/carry68.tar.xz -C build
B=$PWD/build/carry68; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/kp_tests --gtest_filter='Gpu.Sm90*' > $R/kp-tests.txt 2>&1; echo "== kp Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/kp-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/kp-tests.txt | head -5; pack
tools/sm90-ab $R/ab --bin rwf=$B/rwf --bin kp=$B/kp --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 40 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; pack
for m in 16 32; do
  cf=16x1x1x1x2,16x1x1x1x3,16x1x1x1x4; [ $m = 32 ] && cf=32x1x1x1x2,32x1x1x1x3
  for b in rwf kp; do
    timeout 90 $B/$b bench --no-quantizer --rows $m --iters 30 --backend sm90 --sm90-config $cf --shapes attn_out_proj,mlp_fc2 --commit $b --out $R/cfg-$b-m$m.json > $R/cfg-$b-m$m.txt 2>&1
    echo "-- configs $b M=$m rc $? [$(el) s]"; grep -E "sm90@" $R/cfg-$b-m$m.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}' | tr -s ' '
  done
done; pack
for t in trw:16x1x1x1x2 tkp:16x1x1x1x2; do
  b=${t%%:*}; c=${t#*:}; m=${c%%x*}
  NVFP4_SM90_TRACE_OUT=$R/trace-$b-m$m-$c.txt timeout 60 $B/$b bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit $b > /dev/null 2>&1
  echo "== trace $b $c rc $?"; python3 tools/sm90-trace-summary $R/trace-$b-m$m-$c.txt > $R/trace-$b-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk|median" $R/trace-$b-m$m-$c-summary.txt | head -14
done; pack
for m in 16 32; do timeout 60 $B/kp validate --rows $m --linear out,fc2 --candidate sm90 --quiet --out /tmp/v$m > $R/kp-val-m$m.txt 2>&1; echo "== kp validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/kp-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
NVFP4_TEST_SM90_CONFIGS=16x1x1x1x2,16x1x1x1x4,32x1x1x1x3 timeout 150 compute-sanitizer --tool racecheck $B/kp_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/kp-racecheck.txt 2>&1; echo "== racecheck rc $? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $R/kp-racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
echo "done [$(el) s]"
