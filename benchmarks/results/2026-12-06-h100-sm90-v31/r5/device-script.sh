#!/bin/bash
# Device call (2026-12-06, twenty-fifth session): sm90-v31 r5. ncu (full set) of one warm launch of
# attn_qkv_proj at M = 4096 on 128x2x1x1 (two consumer warpgroups of 128 tokens) and 96x3x1x1 (three
# of 96), both from binary t3e (r2), to say what the SM's warpgroups share that three of them do not
# run faster than two.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry2/t3e ] || tar -xJf build/carry2.tar.xz -C build
B=$PWD/build/carry2; R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
prof() {  # config
  local tag=qkv-m4096-$1
  timeout 150 ncu --clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 --launch-skip 6 -c 1 \
    -f -o /tmp/ncu-$tag $B/t3e bench --no-quantizer --rows 4096 --shapes attn_qkv_proj --iters 3 --warmup 5 --backend sm90 --sm90-config $1 > $R/ncu-run-$tag.txt 2>&1
  echo "ncu rc $?"
  ncu --import /tmp/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  ncu --import /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > /tmp/src.csv 2>/dev/null
  ncu --import /tmp/ncu-$tag.ncu-rep --page raw --csv > $R/ncu-raw-$tag.csv 2>/dev/null
  python3 tools/ncu-stalls $R/ncu-raw-$tag.csv /tmp/src.csv >> $R/ncu-$tag.txt 2>&1
  gzip -f $R/ncu-raw-$tag.csv
  echo "== $tag [$(el) s]"; grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|Executed Ipc Active|Compute \(SM\) Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|DRAM Throughput|Achieved Active Warps Per SM)" $R/ncu-$tag.txt | tr -s ' ' | tr '\n' ';'; echo
  grep -A12 "== stall reasons" $R/ncu-$tag.txt | head -14
}
prof 128x2x1x1
[ $(el) -lt 170 ] && prof 96x3x1x1
tar -czf $OUT/results.tgz -C $OUT r5
echo "done [$(el) s]"
