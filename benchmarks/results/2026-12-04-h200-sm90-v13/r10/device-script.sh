#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r10: ncu of the sm90 pre-pass at M = 16 (attn_out_proj): where its 5 us go
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 300 $NCU --set full -k regex:sm90_prep_a --launch-skip 2 --launch-count 1 -o $R/prep build/carry/new bench --no-quantizer --rows 16 --iters 2 --warmup 1 --backend sm90 --shapes out --commit new > $R/ncu-log.txt 2>&1; echo "ncu exit $?"
$NCU --import $R/prep.ncu-rep --page details > $R/prep-details.txt 2>&1
grep -E "Duration|Elapsed Cycles|SM Active Cycles|Achieved Occupancy|Registers Per|Block Size|Grid Size|Memory Throughput|DRAM Throughput|Waves|Stall|Warp Cycles|Issued Ipc|Executed Ipc" $R/prep-details.txt | head -40
$NCU --import $R/prep.ncu-rep --page source --csv --print-source sass 2>/dev/null > $R/prep-sass.csv; echo "sass rows $(wc -l < $R/prep-sass.csv)"
tar -czf $OUT/results.tgz -C $OUT r
