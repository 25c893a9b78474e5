#!/usr/bin/env bash
# one-off device call (not committed): sm120p-v5 r1: the memory-path proxy at M = 128 with the GB10's 99 KB ring (new; 1 and 2 CTAs per SM) and with a 227 KB ring (s227: -DNVFP4_SM120P_SMEM_LIMIT=232448, one CTA per SM), both tile widths
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
run() {  # name binary env...
  local name=$1 bin=$2; shift 2
  env "$@" build/carry/$bin bench --no-quantizer --rows 128 --iters 30 --backend sm120p-proxy --commit $name --out $R/proxy-$name.json > $R/proxy-$name.txt 2>&1
  echo "== $name"; grep -E "proxy" $R/proxy-$name.txt | cut -c1-160
}
run new-2cta new
run new-1cta new NVFP4_SM120P_CTAS_PER_SM=1
run s227 s227
run s227-n64 s227 NVFP4_SM120P_TILE_N=64
run s227-n128 s227 NVFP4_SM120P_TILE_N=128
run new-1cta-n64 new NVFP4_SM120P_CTAS_PER_SM=1 NVFP4_SM120P_TILE_N=64
run new-1cta-n128 new NVFP4_SM120P_CTAS_PER_SM=1 NVFP4_SM120P_TILE_N=128
tar -czf $OUT/results.tgz -C $OUT r
