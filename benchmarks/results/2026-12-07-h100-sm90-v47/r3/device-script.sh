#!/bin/bash
# Device call (2026-12-07, forty-first session): sm90-v47 r3. final = c64e535's build (the kept code of v47: g2's SASS in
# all 30 configurations). Its bits (Gpu.Sm90*, validate default), then the table: every linear at M = 16, 128, 4096,
# 32, 64, the baselines (sm90-stream, comfy-hopper, cublas-fp8) at M = 16 and 128, rounds while time is left.
set -u; TOTAL=${1:-300}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry53/final ] || tar -xJf build/carry53.tar.xz -C build
B=$PWD/build/carry53; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/final_tests --gtest_filter='Gpu.Sm90*' > $R/final-tests.txt 2>&1; echo "== final Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/final-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/final-tests.txt | head -5
(cd build/h && timeout 90 $B/final validate --out /tmp/vdef > $R/validate-default.txt 2>&1; echo "== validate (default) rc $? $(grep -o 'status: [A-Z]*' $R/validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"); pack
T=$R/table; mkdir -p $T
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //;s/ x cuBLAS-bf16//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2 3; do
  for m in 16 128 4096 32 64; do
    [ $(el) -gt $(( TOTAL - 40 )) ] && break 2
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/final bench --no-quantizer --rows $m --iters $it --backend $be --commit c64e535 --out $T/final-m$m-$x.json > $T/final-m$m-$x.txt 2>&1
    echo "final-m$m-$x rc $?: $(row $T/final-m$m-$x.txt) [$(el) s]"
  done; pack
done
pack; echo "done [$(el) s]"
