#!/bin/bash
# Device call (2026-12-07, fortieth session): sm90-v46 r2. fin = f091fdb's build; e = the weight copies with the L2
# evict-first policy (-DNVFP4_SM90_WEIGHT_EVICT_FIRST=1; r1: 1-4 % faster at M = 16-48); e2 = e and the A' copies with
# the evict-last policy (=2). e's and e2's bits (Gpu.Sm90*, validate at M = 128), then fin / e / e2 alternated at
# M = 16, 32, 64, 128, 256, 1024, 2048, three rounds. First csp = a -DNVFP4_SM90_CTA_STATS -DNVFP4_SM90_TRIP_PHASES build
# (a trip's phases: the bound's recompute, the thread-group test, the element steps) on five launches with trips.
set -u; TOTAL=${1:-450}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry48/e ] || tar -xJf build/carry48.tar.xz -C build
B=$PWD/build/carry48; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for ms in 48:mlp_fc2 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj 4096:attn_qkv_proj; do m=${ms%%:*}; s=${ms#*:}
  NVFP4_SM90_CTA_STATS_OUT=$R/st-csp-m$m-$s.txt timeout 60 $B/csp bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit csp > $R/st-csp-m$m-$s.run.txt 2>&1
  python3 tools/sm90-cta-stats $R/st-csp-m$m-$s.txt > $R/st-csp-m$m-$s.summary.txt 2>&1
  echo "== csp M=$m $s: $(sed -n 3,4p $R/st-csp-m$m-$s.summary.txt | tr -s ' ' | tr '\n' ' ') [$(el) s]"; head -8 $R/st-csp-m$m-$s.txt.phases
done; pack
for b in e e2; do
  timeout 60 $B/${b}_tests --gtest_filter='Gpu.Sm90*' > $R/$b-tests.txt 2>&1; echo "== $b Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/$b-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/$b-tests.txt | head -5
  (cd build/h && timeout 40 $B/$b validate --rows 128 --candidate sm90,sm90-stream --quiet --out /tmp/v$b > $R/$b-val-m128.txt 2>&1; echo "== $b validate M=128 rc $? $(grep -o 'status: [A-Z]*' $R/$b-val-m128.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]")
done; pack
left=$(( TOTAL - $(el) - 15 ))
tools/sm90-ab $R/ab --bin fin=$B/fin --bin e=$B/e --bin e2=$B/e2 --rows 16,256,128,2048,32,1024,64 --rounds 3 --budget $left > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base fin > $R/ab-compare.txt 2>&1; head -60 $R/ab-compare.txt; pack
echo "done [$(el) s]"
