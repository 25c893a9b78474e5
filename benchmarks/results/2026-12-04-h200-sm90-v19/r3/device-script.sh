#!/usr/bin/env bash
# one-off device call: sm90-v19 r3: the new trip's phases; each group test and model step run twice (the second on warm instruction caches)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for c in "64 qkv" "64 fc1" "4096 qkv"; do set -- $c
  NVFP4_SM90_CTA_STATS_OUT=$R/ph-m$1-$2.txt timeout 90 build/carry/wsmphase bench --no-quantizer --rows $1 --shapes $2 --iters 3 --warmup 1 --backend sm90 --commit wsmphase --out $R/ph-m$1-$2.json > $R/ph-m$1-$2.out 2>&1
  echo "== m$1 $2 $(head -1 $R/ph-m$1-$2.txt.phases)"; sed -n 2,30p $R/ph-m$1-$2.txt.phases | sort -k3 -n | awk '{print $3, $5, $6, $7, $8}' | head -24
done
tar -czf $OUT/results.tgz -C $OUT r
