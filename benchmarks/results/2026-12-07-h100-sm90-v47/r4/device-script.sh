#!/bin/bash
# Device call (2026-12-07, forty-first session): sm90-v47 r4. final = cb44d82's build (g2's SASS); gl1 = final with
# -DNVFP4_SM90_VERDICT_PREFETCH_L1 (the verdict warp prefetches a failing tile's four thread-group records into the SM's
# L1, two lines); csgl1 / cspg2 = gl1 / g2 with -DNVFP4_SM90_CTA_STATS -DNVFP4_SM90_TRIP_PHASES. Trip phases of four
# launches, gl1's bits (validate M = 64, 128), then final / gl1 alternated at M = 16, 48, 64, 128, rounds while time is left.
set -u; TOTAL=${1:-300}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry54/gl1 ] || tar -xJf build/carry54.tar.xz -C build
B=$PWD/build/carry54; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
st() { b=$1; m=$2; s=$3
  NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
  python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1
  echo "== $b M=$m $s: $(grep -m1 'trip phases' $R/st-$b-m$m-$s.summary.txt | tr -s ' ') | $(sed -n 4p $R/st-$b-m$m-$s.summary.txt | tr -s ' ') [$(el) s]"; }
for b in cspg2 csgl1; do for ms in 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj; do st $b ${ms%%:*} ${ms#*:}; done; done; pack
for m in 64 128; do (cd build/h && timeout 40 $B/gl1 validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/gl1-val-m$m.txt 2>&1; echo "== gl1 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/gl1-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); done; pack
left=$(( TOTAL - $(el) - 15 ))
tools/sm90-ab $R/ab --bin final=$B/final --bin gl1=$B/gl1 --rows 16,48,64,128 --rounds 4 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base final > $R/ab-compare.txt 2>&1; head -40 $R/ab-compare.txt; pack
echo "done [$(el) s]"
