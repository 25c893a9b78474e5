#!/bin/bash
# Device call (2026-12-05, twentieth session): sm90-v28 r3, asked for on an H200. `fin` = de0d606 (the one-chain loop's
# next-stage loads before the MMA wait, early release on small tiles and 128x1x1x1), `cur` = e11ace4 (the kernel before
# it), in alternation, every linear at M = 16-4096, two rounds, every baseline with fin at M = 16 and 128 in round 1;
# then ncu of a warm fin launch (qkv at M = 4096 and 16) while time is left.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r3; mkdir -p $R; cp dev19.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
bench() {  # name M iters backends binary commit
  [ $(el) -gt 300 ] && return
  timeout 60 $B/$5 bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit $6 --out $R/$1.json > $R/$1.txt 2>&1; echo "$1: $(row $R/$1.txt) [$(el) s]"
}
for x in 1 2; do
  for m in 16 4096 128 32 64; do
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    bench cur-m$m-$x $m $it sm90 cur e11ace4; bench fin-m$m-$x $m $it $be fin de0d606
  done; pack
done
prof() {  # shape rows
  local tag=m$2-$1
  timeout 100 ncu --clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 --launch-skip 10 -c 1 \
    -f -o /tmp/ncu-$tag $B/fin bench --no-quantizer --rows $2 --shapes $1 --iters 5 --warmup 10 --backend sm90 > $R/ncu-run-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>/dev/null
  ncu --import /tmp/ncu-$tag.ncu-rep --page raw --csv > /tmp/raw.csv 2>/dev/null
  python3 tools/ncu-stalls /tmp/raw.csv /tmp/src.csv >> $R/ncu-$tag.txt 2>&1
  echo "== $tag [$(el) s]"; grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|DRAM Throughput|Executed Ipc Active|Compute \(SM\) Throughput)" $R/ncu-$tag.txt | tr -s ' ' | tr '\n' ';'; echo
  grep -iE "pipe|tensor" $R/ncu-$tag.txt | head -8
  grep -A8 "== stall reasons" $R/ncu-$tag.txt | head -10
  pack
}
if command -v ncu >/dev/null && [ $(el) -lt 320 ]; then prof attn_qkv_proj 4096; fi
if command -v ncu >/dev/null && [ $(el) -lt 380 ]; then prof attn_qkv_proj 16; fi
echo "done [$(el) s]"
