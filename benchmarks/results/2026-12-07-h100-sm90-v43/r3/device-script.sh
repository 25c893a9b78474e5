#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v43 r3. hd = HEAD 04e0474's build (before v43); sb3 = c5f0238
# (r2's sb3: one slot wait and arrival per four-chunk stage); sb5 = c5f0238 plus, in the four-chunk stages' whole-stage loop,
# the stage's tile and position carried from stage to stage instead of divided out (KS <= stages per tile) and the ring
# advanced by KS at once (16x1x1x1x3 hot loop 374 -> 353 instructions a stage); sb5_tests its tests (the whole-stage test
# now also on CTAs of two and three tiles). Gpu.Sm90*, validate M = 1, 8, 16, hd / sb3 / sb5 at M = 16, 8 on out and fc2
# (three rounds), racecheck and memcheck of the whole-stage test on 16x1x1x1x3, ncu of sb5's 16x1x1x1x3.
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry101/sb5 ] || tar -xJf build/carry101.tar.xz -C build
B=$PWD/build/carry101; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/sb5_tests --gtest_filter='Gpu.Sm90*' > $R/sb5-tests.txt 2>&1; echo "== sb5 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sb5-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/sb5-tests.txt | head -5; pack
for m in 1 8 16; do timeout 40 $B/sb5 validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/sb5-val-m$m.txt 2>&1; echo "== sb5 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/sb5-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin sb3=$B/sb3 --bin sb5=$B/sb5 --rows 16,8 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 110 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; head -8 $R/ab-compare.txt; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 150 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3 timeout 150 compute-sanitizer --tool $t $B/sb5_tests --gtest_filter='Gpu.Sm90KSplitWholeAndPartialStagesAndShortSlotGroups' > $R/sb5-$t.txt 2>&1
  echo "== sb5 $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/sb5-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
[ $(el) -lt $(( TOTAL - 60 )) ] && { tools/ncu-one $R/ncu sb5-out-m16-16x1x1x1x3 --skip 6 --raw --timeout 60 -- $B/sb5 bench --no-quantizer --rows 16 --shapes attn_out_proj \
    --iters 3 --warmup 5 --backend sm90 --sm90-config 16x1x1x1x3 --commit sb5 2>&1 | head -3; echo "== ncu [$(el) s]"; pack; }
echo "done [$(el) s]"
