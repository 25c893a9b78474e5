#!/bin/bash
# Device call (2026-12-07, fortieth session): sm90-v46 r1. fin = f091fdb's build (the kernel's SASS unchanged since
# 66a9c39). Two measurement switches: w = -DNVFP4_SM90_WARM_TRIP=1 (the trip's thread-group test out of line, run once
# by every consumer warp before the pre-pass wait, to have its instructions cached), e = -DNVFP4_SM90_WEIGHT_EVICT_FIRST=1
# (weight copies with the L2 evict-first policy). cs0 / csw / cse: the same with -DNVFP4_SM90_CTA_STATS (per-CTA ends
# and trip durations). CTA statistics of launches with trips (fc2 M = 48, 128; fc1 M = 128; qkv M = 64; out M = 128),
# w's bits (Gpu.Sm90*, validate), then fin / w / e alternated at M = 48, 128, 16, 4096, three rounds.
set -u; TOTAL=${1:-480}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h

[ -x build/carry47/w ] || tar -xJf build/carry47.tar.xz -C build
A=$PWD/build/carry47; B=$PWD/build/carry47; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for b in cs0 csw cse; do
  for ms in 48:mlp_fc2 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj 128:attn_out_proj; do m=${ms%%:*}; s=${ms#*:}
    NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
    python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1
    echo "== $b M=$m $s: $(sed -n 3,4p $R/st-$b-m$m-$s.summary.txt | tr -s ' ' | tr '\n' ' ') [$(el) s]"
  done
done; pack
timeout 150 $B/w_tests --gtest_filter='Gpu.Sm90*' > $R/w-tests.txt 2>&1; echo "== w Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/w-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/w-tests.txt | head -5
for m in 16 64 128 333; do (cd build/h && timeout 40 $B/w validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/w-val-m$m.txt 2>&1; echo "== w validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/w-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); done; pack
left=$(( TOTAL - $(el) - 15 ))
tools/sm90-ab $R/ab --bin fin=$A/fin --bin w=$B/w --bin e=$B/e --rows 48,128,16,4096 --rounds 3 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin > $R/ab-compare.txt 2>&1; head -60 $R/ab-compare.txt; pack
echo "done [$(el) s]"
