#!/bin/bash
# Device call (2026-12-07, forty-first session): sm90-v47 r1. fin2 = HEAD's default build (e261078). g = the thread-group
# test's weight side from the rows' multipliers without branches (weight_pair_tile); gp = g with -DNVFP4_SM90_VERDICT_PREFETCH=1
# (the verdict warp fetches a failing tile's records into L2). cspr / cspg / cspgp: fin2 / g / gp with -DNVFP4_SM90_CTA_STATS
# -DNVFP4_SM90_TRIP_PHASES. Trip phases of four launches with trips, g's bits (Gpu.Sm90*, validate), then fin2 / g / gp
# alternated at M = 48, 128, 64, 16, 4096, three rounds.
set -u; TOTAL=${1:-500}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry51/g ] || tar -xJf build/carry51.tar.xz -C build
B=$PWD/build/carry51; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for b in cspr cspg cspgp; do
  for ms in 48:mlp_fc2 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj; do m=${ms%%:*}; s=${ms#*:}
    NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
    python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1
    echo "== $b M=$m $s: $(grep -m1 'trip phases' $R/st-$b-m$m-$s.summary.txt | tr -s ' ') | $(sed -n 4p $R/st-$b-m$m-$s.summary.txt | tr -s ' ') [$(el) s]"
  done
done; pack
timeout 150 $B/g_tests --gtest_filter='Gpu.Sm90*' > $R/g-tests.txt 2>&1; echo "== g Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/g-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/g-tests.txt | head -5
for m in 16 48 64 128 333; do (cd build/h && timeout 40 $B/g validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/g-val-m$m.txt 2>&1; echo "== g validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/g-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); done; pack
left=$(( TOTAL - $(el) - 15 ))
tools/sm90-ab $R/ab --bin fin2=$B/fin2 --bin g=$B/g --bin gp=$B/gp --rows 48,128,64,16,4096 --rounds 3 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin2 > $R/ab-compare.txt 2>&1; head -70 $R/ab-compare.txt; pack
echo "done [$(el) s]"
