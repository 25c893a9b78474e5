#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r9: what a K-split ring of whole rounds per chunk-sum warpgroup (stages a multiple of KS) costs: 1e08936 with NVFP4_SM90_MAX_STAGES
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for rep in 1 2; do
for cap in 16 6; do
  NVFP4_SM90_MAX_STAGES=$cap build/carry/base bench --no-quantizer --rows 16 --iters 30 --backend sm90,sm90-stream --shapes out,fc2 --commit 1e08936-cap$cap --out $R/m16-cap$cap-$rep.json >$R/m16-cap$cap-$rep.txt 2>&1
  echo "== m16 cap $cap ($rep)"; grep -E "sm90" $R/m16-cap$cap-$rep.txt | grep -v "of which" | cut -c1-50,60-75,90-130
  NVFP4_SM90_MAX_STAGES=$cap build/carry/base bench --no-quantizer --rows 32 --iters 30 --backend sm90 --shapes out,fc2 --commit 1e08936-cap$cap --out $R/m32-cap$cap-$rep.json >$R/m32-cap$cap-$rep.txt 2>&1
  echo "== m32 cap $cap ($rep)"; grep -E "sm90" $R/m32-cap$cap-$rep.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done; done
tar -czf $OUT/results.tgz -C $OUT r
