#!/bin/bash
# Device call (2026-12-06, thirty-second session): sm90-v37 r2. HEAD's kernel alone (fin = 4f8772d's CLI, from carry70;
# HEAD 6b19e88 has the same kernel): the README's table anew in one call (M = 16, 128, 4096, 32, 64, two rounds), the
# comparison columns (sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16 and 128; then traces of CTA 0
# (tfin = fin with -DNVFP4_SM90_TRACE) on the forced 64-token K-splits 64x1x1x1x2 / x3 at M = 64 (attn_out_proj).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry70/tfin ] || tar -xJf build/carry70.tar.xz -C build
B=$PWD/build/carry70; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
tools/sm90-ab $R/tab --bin fin=$B/fin --rows 16,128,4096,32,64 --rounds 2 --budget 280 --timeout 60 > $R/tab.txt 2>&1; echo "== tab rc $? [$(el) s]"
python3 tools/bench-compare $R/tab --markdown fin > $R/tab-markdown.txt 2>&1; cat $R/tab-markdown.txt; pack
for m in 16 128; do
  [ $(el) -lt 400 ] || break
  timeout 60 $B/fin bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 4f8772d --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"; pack
done
for c in 64x1x1x1x2 64x1x1x1x3; do
  [ $(el) -lt 480 ] || break
  m=${c%%x*}
  NVFP4_SM90_TRACE_OUT=$R/trace-m$m-$c.txt timeout 40 $B/tfin bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit tfin > $R/trace-m$m-$c.run.txt 2>&1
  echo "== trace $c rc $? [$(el) s]"; python3 tools/sm90-trace-summary $R/trace-m$m-$c.txt > $R/trace-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk|median" $R/trace-m$m-$c-summary.txt | head -16; pack
done
echo "done [$(el) s]"
