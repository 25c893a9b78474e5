#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v44 r1. fin = b9b6ac2's build; kp4w = b9b6ac2 with
# -DNVFP4_SM90_KS_PIPE4=1: the whole four-chunk K-split stages (M <= 16) keep two chunks' MMAs in flight (chunk k's MMAs
# while k - 1's sums are stored and k + 1 decoded; one slot wait and arrival a stage as in c5f0238; hot loop 374 -> 375).
# v41's kp (the same on HEAD then, 460 -> 773 instructions) was slower at 16 tokens. kp4w's bits, then fin / kp4w at
# M = 16, 8 on out and fc2 (three rounds).
set -u; TOTAL=${1:-300}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry103/kp4w ] || tar -xJf build/carry103.tar.xz -C build
B=$PWD/build/carry103; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/kp4w_tests --gtest_filter='Gpu.Sm90*' > $R/kp4w-tests.txt 2>&1; echo "== kp4w Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/kp4w-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/kp4w-tests.txt | head -5; pack
for m in 1 8 16; do timeout 40 $B/kp4w validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/vk$m > $R/kp4w-val-m$m.txt 2>&1; echo "== kp4w validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/kp4w-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin fin=$B/fin --bin kp4w=$B/kp4w --rows 16,8 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 70 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin > $R/ab-compare.txt 2>&1; head -6 $R/ab-compare.txt; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 100 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,16x1x1x1x4 timeout 100 compute-sanitizer --tool $t $B/kp4w_tests --gtest_filter='Gpu.Sm90KSplitWholeAndPartialStagesAndShortSlotGroups' > $R/kp4w-$t.txt 2>&1
  echo "== kp4w $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/kp4w-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
echo "done [$(el) s]"
