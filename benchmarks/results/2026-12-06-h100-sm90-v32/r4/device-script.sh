#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r4. ncu (full set, source counters) of one warm launch of
# fin (92793ac) on attn_qkv_proj at M = 4096 (128x2x1x1): where the stall samples fall outside the hot loop (the
# epilogue, a tile's restart), since r3 found ~2.2-2.5 us per tile besides its chunks. The per-instruction source
# page is kept (gzip).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
tag=qkv-m4096-128x2x1x1
timeout 200 ncu --clock-control none --cache-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 --launch-skip 6 -c 1 \
  -f -o /tmp/ncu-$tag $B/fin bench --no-quantizer --rows 4096 --shapes attn_qkv_proj --iters 3 --warmup 5 --backend sm90 --sm90-config 128x2x1x1 > $R/ncu-run-$tag.txt 2>&1
echo "ncu rc $? [$(el) s]"
ncu --import /tmp/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
ncu --import /tmp/ncu-$tag.ncu-rep --page source --csv --print-source sass > $R/ncu-source-$tag.csv 2>/dev/null
ncu --import /tmp/ncu-$tag.ncu-rep --page raw --csv > $R/ncu-raw-$tag.csv 2>/dev/null
python3 tools/ncu-stalls $R/ncu-raw-$tag.csv $R/ncu-source-$tag.csv >> $R/ncu-$tag.txt 2>&1
gzip -f $R/ncu-raw-$tag.csv $R/ncu-source-$tag.csv
grep -E "^    (Duration|Issue Slots Busy|Warp Cycles Per Issued|Compute \(SM\) Throughput|L2 Cache Throughput)" $R/ncu-$tag.txt | tr -s ' ' | tr '\n' ';'; echo
tar -czf $OUT/results.tgz -C $OUT r4
echo "done [$(el) s]"
