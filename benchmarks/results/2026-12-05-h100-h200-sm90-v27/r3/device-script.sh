#!/bin/bash
# Device call (2026-12-05, nineteenth session): sm90-v27 r3, asked for as an H200. `mult` (e838218, the weight blocks
# with stored scale multipliers) and `head` (4f53f54) timed in alternation, every linear at M = 16, 32, 64, 128, 4096,
# two rounds, every baseline with mult at M = 16 and 128 in round 1; validate (default, M = 16); then ncu of a warm
# launch of mult (the 11th GEMM launch of the bench, caches not flushed) at M = 16: qkv (16x3x1x1) and fc1 (16x4x1x1).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/mult ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r3; mkdir -p $R; cp dev13.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/mult validate > $R/mult-validate-default.txt 2>&1; echo "== validate default rc $? $(tail -1 $R/mult-validate-default.txt) $(st)"
timeout 60 $B/mult validate --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/dv16 > $R/mult-val-m16.txt 2>&1; echo "== validate M=16 rc $? $(grep -o "status: [A-Z]*" $R/mult-val-m16.txt | sort | uniq -c | tr '\n' ' ')"
bench() {  # name M iters backends binary commit
  timeout 120 $B/$5 bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit $6 --out $R/$1.json > $R/$1.txt 2>&1; echo "== $1: $(row $R/$1.txt) $(st)"
}
for x in 1 2; do
  for m in 16 32 64 128 4096; do
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    bench head-m$m-$x $m $it sm90 head 4f53f54; bench mult-m$m-$x $m $it $be mult e838218
  done
  pack
done
prof() {  # shape rows
  local tag=m$2-$1
  timeout 150 ncu --clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 --launch-skip 10 -c 1 \
    -f -o /tmp/ncu-$tag $B/mult bench --no-quantizer --rows $2 --shapes $1 --iters 5 --warmup 10 --backend sm90 > $R/ncu-run-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>/dev/null
  ncu --import /tmp/ncu-$tag.ncu-rep --page raw --csv > /tmp/raw.csv 2>/dev/null
  python3 tools/ncu-stalls /tmp/raw.csv /tmp/src.csv >> $R/ncu-$tag.txt 2>&1
  echo "== $tag $(st)"; grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|DRAM Throughput|Executed Ipc Active)" $R/ncu-$tag.txt | tr -s ' ' | tr '\n' ';'; echo
  grep -A10 "== stall reasons" $R/ncu-$tag.txt | head -12
  pack
}
if command -v ncu >/dev/null && [ $(( $(date +%s) - t0 )) -lt 420 ]; then prof attn_qkv_proj 16; prof mlp_fc1 16; fi
echo "done $(st)"
