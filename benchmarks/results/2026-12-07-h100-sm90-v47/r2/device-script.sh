#!/bin/bash
# Device call (2026-12-07, forty-first session): sm90-v47 r2. fin2 = HEAD's default build (e261078); g = r1's g (the
# thread-group test's weight side without branches); g2 = g and the per-element tests' weight rows the same way
# (weight_row_chunk). cspr / cspg / cspg2: with -DNVFP4_SM90_CTA_STATS -DNVFP4_SM90_TRIP_PHASES. Trip phases (four
# launches of r1 and qkv at M = 4096), g2's bits (Gpu.Sm90*, validate, memcheck of the adversarial test), then fin2 / g /
# g2 alternated at M = 48, 128, 64, 16, 4096, three rounds.
set -u; TOTAL=${1:-480}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry52/g2 ] || tar -xJf build/carry52.tar.xz -C build
B=$PWD/build/carry52; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
st() { b=$1; m=$2; s=$3; it=${4:-3}
  NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters $it --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
  python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1
  echo "== $b M=$m $s: $(grep -m1 'trip phases' $R/st-$b-m$m-$s.summary.txt | tr -s ' ') | $(sed -n 4p $R/st-$b-m$m-$s.summary.txt | tr -s ' ') [$(el) s]"; }
for ms in 48:mlp_fc2 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj; do st cspg2 ${ms%%:*} ${ms#*:}; done
for b in cspr cspg cspg2; do st $b 4096 attn_qkv_proj 1; done; pack
timeout 150 $B/g2_tests --gtest_filter='Gpu.Sm90*' > $R/g2-tests.txt 2>&1; echo "== g2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/g2-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/g2-tests.txt | head -5
for m in 16 64 128 333; do (cd build/h && timeout 40 $B/g2 validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vs$m > $R/g2-val-m$m.txt 2>&1; echo "== g2 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/g2-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); done; pack
timeout 150 compute-sanitizer --tool memcheck $B/g2_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/g2-memcheck.txt 2>&1; echo "== g2 memcheck adversarial rc $? $(grep -E 'ERROR SUMMARY|^\[  (PASSED|FAILED)' $R/g2-memcheck.txt | tr '\n' ' ') [$(el) s]"; pack
left=$(( TOTAL - $(el) - 15 ))
tools/sm90-ab $R/ab --bin fin2=$B/fin2 --bin g=$B/g --bin g2=$B/g2 --rows 48,128,64,16,4096 --rounds 3 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin2 > $R/ab-compare.txt 2>&1; head -70 $R/ab-compare.txt; pack
echo "done [$(el) s]"
