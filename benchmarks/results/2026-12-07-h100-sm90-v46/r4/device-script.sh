#!/bin/bash
# Device call (2026-12-07, fortieth session): sm90-v46 r4. fin2 = the working tree's default build (the weight copies
# with the L2 evict-first policy); cspr = a -DNVFP4_SM90_CTA_STATS -DNVFP4_SM90_TRIP_PHASES build that also stamps when
# the thread-group record's first 16 bytes have arrived (a load of its own before the test). Phases of three launches
# with trips, then `nvfp4 validate` (default) and the H100 table of fin2: every linear at M = 16, 32, 64, 128, 4096,
# one round, the baselines (sm90-stream, comfy-hopper, cublas-fp8) in round 1 at M = 16 and 128.
set -u; TOTAL=${1:-150}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry50/fin2 ] || tar -xJf build/carry50.tar.xz -C build
B=$PWD/build/carry50; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for ms in 128:mlp_fc2 128:mlp_fc1 64:attn_qkv_proj; do m=${ms%%:*}; s=${ms#*:}
  NVFP4_SM90_CTA_STATS_OUT=$R/st-cspr-m$m-$s.txt timeout 60 $B/cspr bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit cspr > $R/st-cspr-m$m-$s.run.txt 2>&1
  python3 tools/sm90-cta-stats $R/st-cspr-m$m-$s.txt > $R/st-cspr-m$m-$s.summary.txt 2>&1
  echo "== cspr M=$m $s: $(sed -n 4p $R/st-cspr-m$m-$s.summary.txt | tr -s ' ') [$(el) s]"; sed -n 2,6p $R/st-cspr-m$m-$s.txt.phases | tr '\n' ';'; echo
done; pack
(cd build/h && timeout 90 $B/fin2 validate --out /tmp/vdef > $R/validate-default.txt 2>&1; echo "== validate (default) rc $? $(grep -o 'status: [A-Z]*' $R/validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); pack
T=$R/table; mkdir -p $T
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //;s/ x cuBLAS-bf16//' | tr -s ' ' | tr '\n' ';'; }
for x in 1; do
  for m in 16 128 4096 32 64; do
    [ $(el) -gt $(( TOTAL - 40 )) ] && break
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/fin2 bench --no-quantizer --rows $m --iters $it --backend $be --commit fin2 --out $T/fin2-m$m-$x.json > $T/fin2-m$m-$x.txt 2>&1
    echo "fin2-m$m-$x rc $?: $(row $T/fin2-m$m-$x.txt) [$(el) s]"
  done; pack
done
echo "done [$(el) s]"
