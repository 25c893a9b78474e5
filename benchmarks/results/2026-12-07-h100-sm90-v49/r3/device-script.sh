#!/bin/bash
# sm90 v51 r1 (2026-12-07): per-CTA statistics and trip phases (-DNVFP4_SM90_CTA_STATS -DNVFP4_SM90_TRIP_PHASES) at
# M = 16 (every linear) and M = 32 (qkv, fc1): csf = 1b88b03's GEMM, cst = results v49's token scale words (ts).
# What the trips cost the one-round launches at small M, and why ts's fc1 at M = 16 was 3 us slower.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry51/csf ] || tar -xJf build/carry51.tar.xz -C build
B=$PWD/build/carry51; R=$OUT/v51; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for ms in 16:mlp_fc1 16:attn_qkv_proj 16:attn_out_proj 16:mlp_fc2 32:mlp_fc1 32:attn_qkv_proj; do m=${ms%%:*}; s=${ms#*:}
  for b in csf cst; do
    NVFP4_SM90_CTA_STATS_OUT=$R/st-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --shapes $s --iters 3 --warmup 1 --backend sm90 --commit $b > $R/st-$b-m$m-$s.run.txt 2>&1
    python3 tools/sm90-cta-stats $R/st-$b-m$m-$s.txt > $R/st-$b-m$m-$s.summary.txt 2>&1
    echo "== $b M=$m $s: $(sed -n 1,6p $R/st-$b-m$m-$s.summary.txt | tr -s ' ' | tr '\n' ' ') [$(el) s]"
  done
done
tar -czf $OUT/v51.tgz -C $OUT v51; echo "done [$(el) s]"
