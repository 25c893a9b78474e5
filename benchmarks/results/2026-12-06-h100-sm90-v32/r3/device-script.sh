#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r3. Binary fin = 92793ac's build (as r2). What a tile
# costs besides its chunks at M = 4096 (the epilogue, the pipeline's restart): 128x2x1x1 on N = 21504 and 5376 with
# K = 2688, 5376 and 10752 (42, 84 and 168 chunks a tile), two rounds; the GEMM-alone time against K gives the
# per-tile intercept.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for x in 1 2; do for n in 21504 5376; do
  [ $(el) -lt 200 ] || break
  timeout 60 $B/fin bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --sm90-config 128x2x1x1 --shapes k42:$n:2688,k84:$n:5376,k168:$n:10752 --commit fin --out $R/kslope-n$n-$x.json > $R/kslope-n$n-$x.txt 2>&1
  echo "== n=$n round $x rc $? [$(el) s]"; grep -E "sm90" $R/kslope-n$n-$x.txt | cut -c1-150
done; done
tar -czf $OUT/results.tgz -C $OUT r3
echo "done [$(el) s]"
