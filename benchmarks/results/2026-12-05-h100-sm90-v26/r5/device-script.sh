#!/bin/bash
# Device call (2026-12-05, eighteenth session): sm90-v26 r5. ncu of a warm launch of HEAD's GEMM (`desc`, 23bd650's
# kernel = 9195099's): the 11th sm90_gemm_nvfp4 launch of the bench (after ten), caches not flushed, at M = 16
# (qkv 16x3x1x1, fc1 16x4x1x1, fc2 16x1x1x1x2) and M = 128 (qkv 128x3x1x2). r1's ncu profiled the first, cold launch.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry/desc ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r5; mkdir -p $R; cp dev9.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results5.tgz -C $OUT r5; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
prof() {  # shape rows
  local tag=m$2-$1
  timeout 150 ncu --clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 --launch-skip 10 -c 1 \
    -f -o /tmp/ncu-$tag $B/desc bench --no-quantizer --rows $2 --shapes $1 --iters 5 --warmup 10 --backend sm90 > $R/ncu-run-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>/dev/null
  ncu --import /tmp/ncu-$tag.ncu-rep --page raw --csv > /tmp/raw.csv 2>/dev/null
  python3 tools/ncu-stalls /tmp/raw.csv /tmp/src.csv >> $R/ncu-$tag.txt 2>&1
  echo "== $tag $(st)"; grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|DRAM Throughput|L1/TEX Hit|Shared Memory|Executed Ipc Active)" $R/ncu-$tag.txt | tr -s ' ' | tr '\n' ';'; echo
  grep -A10 "== stall reasons" $R/ncu-$tag.txt; grep -A12 "== SASS lines" $R/ncu-$tag.txt
  pack
}
prof attn_qkv_proj 16
prof mlp_fc2 16
prof mlp_fc1 16
prof attn_qkv_proj 128
echo "done $(st)"
