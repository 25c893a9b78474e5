#!/bin/bash
# Device call (2026-12-07, fortieth session): sm90-v46 r3. fin2 = the working tree's default build (the weight copies
# with the L2 evict-first policy: r2's e); t = fin2 with -DNVFP4_SM90_TOUCH_RECORDS=1 (each consumer warp loads a word at
# each end of its first tile's thread-group and token records before the pre-pass wait); cspe / cspt = the same with
# -DNVFP4_SM90_CTA_STATS -DNVFP4_SM90_TRIP_PHASES (a trip's phases). Phases of four launches with trips, t's bits
# (Gpu.Sm90*, validate M = 128), fin2 / t alternated at M = 64, 128, 16, 4096, two rounds.
set -u; TOTAL=${1:-240}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry49/t ] || tar -xJf build/carry49.tar.xz -C build
B=$PWD/build/carry49; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for b in cspe cspt; do
  for ms in 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj 4096:attn_qkv_proj; do m=${ms%%:*}; s=${ms#*:}
    NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
    python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1
    echo "== $b M=$m $s: $(sed -n 3,4p $R/st-$b-m$m-$s.summary.txt | tr -s ' ' | tr '\n' ' ') [$(el) s]"; sed -n 2,6p $R/st-$b-m$m-$s.txt.phases | tr '\n' ';'; echo
  done
done; pack
timeout 60 $B/t_tests --gtest_filter='Gpu.Sm90*' > $R/t-tests.txt 2>&1; echo "== t Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/t-tests.txt | head -5
(cd build/h && timeout 40 $B/t validate --rows 128 --candidate sm90,sm90-stream --quiet --out /tmp/vt > $R/t-val-m128.txt 2>&1; echo "== t validate M=128 rc $? $(grep -o 'status: [A-Z]*' $R/t-val-m128.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); pack
left=$(( TOTAL - $(el) - 10 ))
tools/sm90-ab $R/ab --bin fin2=$B/fin2 --bin t=$B/t --rows 64,128,16,4096 --rounds 2 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin2 > $R/ab-compare.txt 2>&1; head -30 $R/ab-compare.txt; pack
echo "done [$(el) s]"
