#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r7. trdec = r6's dec (lone-decoder-not-kept.diff) as a trace
# build, its decoder stamping CTA 0's chunks (event 4: the stage's copies landed, 2: the W' tile free, 6: written and
# fenced): where r6's 21-28 % went. out at M = 64 (64x1x1x1), two launches' traces.
set -u
[ -x build/carry113/trdec ] || tar -xJf build/carry113.tar.xz -C build
B=$PWD/build/carry113; R=$OUT/r7; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
echo "== $(tail -1 $R/device.txt)"
for x in 1 2; do
  NVFP4_SM90_TRACE_OUT=$R/trace-trdec-out-m64-$x.txt timeout 30 $B/trdec bench --no-quantizer --rows 64 --iters 3 --warmup 1 --backend sm90 --shapes attn_out_proj --commit trdec > $R/trace-trdec-$x.run.txt 2>&1
  echo "== trace $x rc $?"
  python3 tools/sm90-trace-summary --tile-chunks 112 $R/trace-trdec-out-m64-$x.txt $R/trace-trdec-out-m64-$x.txt.wg > $R/trace-trdec-$x-summary.txt 2>&1
done
cat $R/trace-trdec-1-summary.txt | head -30
tar -czf $OUT/results7.tgz -C $OUT r7
