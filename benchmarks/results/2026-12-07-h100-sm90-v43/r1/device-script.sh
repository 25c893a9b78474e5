#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v43 r1. hd = HEAD 04e0474's build; sb = its working tree with one
# slot wait and one sum_full arrival per K-split stage where the chunks per tile are a multiple of the stage's (the
# 16-token hot loop 460 -> 374 instructions a stage, 32x1x1x1x3 396 -> 233), sb_tests its tests (a new one covers whole and
# partial stages and short slot groups). Its bits (Gpu.Sm90*, validate, racecheck, memcheck), then hd / sb at
# M = 16, 8, 32, 24 on out and fc2, three rounds, then ncu of sb's 16x1x1x1x3.
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry99/sb ] || tar -xJf build/carry99.tar.xz -C build
B=$PWD/build/carry99; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 90 $B/sb_tests --gtest_filter='Gpu.Sm90*' > $R/sb-tests.txt 2>&1; echo "== sb Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sb-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/sb-tests.txt | head -5; pack
for m in 1 8 16 17 32; do timeout 40 $B/sb validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/sb-val-m$m.txt 2>&1; echo "== sb validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/sb-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin sb=$B/sb --rows 16,8,32,24 --rounds 3 --shapes attn_out_proj,mlp_fc2 --budget 110 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base hd > $R/ab-compare.txt 2>&1; head -12 $R/ab-compare.txt; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 120 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,16x1x1x1x2,32x1x1x1x3 timeout 100 compute-sanitizer --tool $t $B/sb_tests --gtest_filter='Gpu.Sm90KSplitWholeAndPartialStagesAndShortSlotGroups:Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/sb-$t.txt 2>&1
  echo "== sb $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/sb-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
[ $(el) -lt $(( TOTAL - 60 )) ] && { tools/ncu-one $R/ncu sb-out-m16-16x1x1x1x3 --skip 6 --raw --timeout 60 -- $B/sb bench --no-quantizer --rows 16 --shapes attn_out_proj \
    --iters 3 --warmup 5 --backend sm90 --sm90-config 16x1x1x1x3 --commit sb 2>&1 | head -14; echo "== ncu [$(el) s]"; pack; }
echo "done [$(el) s]"
