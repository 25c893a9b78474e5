#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v43 r6. ncu (tools/ncu-one with --source: the source page kept, and
# the SASS lines of the largest stall reasons where it has per-reason columns) of one warm launch of b9b6ac2's kernel in
# three regimes: out at M = 16 (16x1x1x1x3, the K-split), qkv at M = 16 (16x3x1x1), out at M = 128 (128x1x1x1).
set -u; TOTAL=${1:-240}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry102/fin ] || tar -xJf build/carry102.tar.xz -C build
B=$PWD/build/carry102; R=$OUT/r6; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results6.tgz -C $OUT r6; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for c in attn_out_proj:16:16x1x1x1x3 attn_qkv_proj:16:16x3x1x1 attn_out_proj:128:128x1x1x1; do
  [ $(el) -gt $(( TOTAL - 60 )) ] && break
  IFS=: read -r sh m cf <<<"$c"
  tools/ncu-one $R/ncu ${sh#*_}-m$m-$cf --skip 6 --raw --source --timeout 90 -- $B/fin bench --no-quantizer --rows $m --shapes $sh \
    --iters 3 --warmup 5 --backend sm90 --sm90-config $cf --commit b9b6ac2 > $R/ncu-$sh-m$m.out 2>&1
  echo "== ncu $sh M=$m $cf rc $? [$(el) s]"; head -1 $R/ncu-$sh-m$m.out; grep -A4 "SASS lines by '" $R/ncu-$sh-m$m.out | head -20; pack
done
echo "done [$(el) s]"
