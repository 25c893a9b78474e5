#!/usr/bin/env bash
# one-off device call: sm90-v20 r1: ncu of the activation pre-pass (sm90_prep_a) at M = 16 and 4096
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry/base
for c in "16 qkv" "128 qkv" "4096 qkv" "4096 fc2"; do set -- $c
  tag=m$1-$2
  timeout 200 ncu --clock-control none --set full --import-source yes -k regex:sm90_prep_a -c 1 -f -o $R/ncu-$tag $B bench --no-quantizer --rows $1 --shapes $2 --iters 1 --warmup 0 --backend sm90 > $R/ncu-run-$tag.txt 2>&1
  ncu --import $R/ncu-$tag.ncu-rep --page details > $R/ncu-$tag.txt 2>&1
  ncu --import $R/ncu-$tag.ncu-rep --page source --csv --print-source sass > $R/src.csv 2>/dev/null
  ncu --import $R/ncu-$tag.ncu-rep --page raw --csv > $R/raw.csv 2>/dev/null
  python3 tools/ncu-stalls $R/raw.csv $R/src.csv >> $R/ncu-$tag.txt
  rm -f $R/src.csv $R/raw.csv $R/ncu-$tag.ncu-rep
  echo "== $tag"; grep -E "^    (Duration|Elapsed Cycles|Memory Throughput|DRAM Throughput|Issue Slots Busy|No Eligible|Registers Per Thread|Achieved Occupancy|Warp Cycles Per Issued|Executed Ipc A|Theoretical Occ)" $R/ncu-$tag.txt | head -14
  grep -A8 "== stall reasons" $R/ncu-$tag.txt
done
for M in 16 128 4096; do
  $B bench --no-quantizer --rows $M --iters 20 --backend sm90 --commit base --out $R/b-m$M.json 2>&1 | grep -E "pre-pass alone|sm90 " | head -8
done
tar -czf $OUT/results.tgz -C $OUT r
