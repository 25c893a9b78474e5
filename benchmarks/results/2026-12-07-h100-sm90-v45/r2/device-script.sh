#!/bin/bash
# Device call (2026-12-07, thirty-ninth session): sm90-v45 r2. Traces (-DNVFP4_SM90_TRACE, CTA 0) of trfin (HEAD's
# kernel, 29539ac, whose switch is off) and trpd (the same with -DNVFP4_SM90_PREDECODE_BM=16, r1's pd): attn_out_proj at
# M = 128 (128x1x1x1, a lone warpgroup) and attn_qkv_proj at M = 128 (128x2x1x1): where pd's chunk loses its time.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry116/trpd ] || tar -xJf build/carry116.tar.xz -C build
B=$PWD/build/carry116; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for s in attn_out_proj:112 attn_qkv_proj:84; do
  shape=${s%%:*}; tc=${s##*:}
  for b in trfin trpd; do
    NVFP4_SM90_TRACE_OUT=$R/trace-$b-$shape-m128.txt timeout 30 $B/$b bench --no-quantizer --rows 128 --iters 3 --warmup 1 --backend sm90 --shapes $shape --commit $b > $R/trace-$b-$shape.run.txt 2>&1
    echo "== trace $b $shape rc $? [$(el) s]"
    python3 tools/sm90-trace-summary --tile-chunks $tc $R/trace-$b-$shape-m128.txt $R/trace-$b-$shape-m128.txt.wg > $R/trace-$b-$shape-summary.txt 2>&1
    grep -A12 'warpgroup 0' $R/trace-$b-$shape-summary.txt | head -14
  done; pack
done
echo "done [$(el) s]"
