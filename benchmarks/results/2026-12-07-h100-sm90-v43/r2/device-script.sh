#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v43 r2. hd = HEAD 04e0474's build; sb3 = r1's sb with the
# two-chunk stages (M = 17-32) back on a slot wait and an arrival per chunk (r1: one per stage ran them 2.7-3.3 %
# slower), the four-chunk stages (M <= 16) keeping one per stage; sb3_tests its tests. Gpu.Sm90*, validate at
# M = 16 and 32, hd / sb3 at M = 16, 8, 32, 24 on out and fc2 (three rounds), racecheck and memcheck.
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry100/sb3 ] || tar -xJf build/carry100.tar.xz -C build
B=$PWD/build/carry100; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 90 $B/sb3_tests --gtest_filter='Gpu.Sm90*' > $R/sb-tests.txt 2>&1; echo "== sb Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sb-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/sb-tests.txt | head -5; pack
for m in 16 32; do timeout 40 $B/sb3 validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/sb-val-m$m.txt 2>&1; echo "== sb validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/sb-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin sb3=$B/sb3 --rows 16,8,32,24 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 110 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; head -12 $R/ab-compare.txt; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 120 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,16x1x1x1x2,32x1x1x1x3 timeout 100 compute-sanitizer --tool $t $B/sb3_tests --gtest_filter='Gpu.Sm90KSplitWholeAndPartialStagesAndShortSlotGroups:Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/sb-$t.txt 2>&1
  echo "== sb $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/sb-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
echo "done [$(el) s]"
