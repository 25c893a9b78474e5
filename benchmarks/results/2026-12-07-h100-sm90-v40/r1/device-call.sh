#!/bin/bash
# Device call (2026-12-07, thirty-fifth session): on an H200 first the README's table for HEAD's kernel (a3 = 462911f's
# kernel, built at 55c9ec7): every linear at M = 16, 32, 64, 128, 4096, two rounds, every baseline at M = 16 and 128 in
# round 1; then results v39's prepared r3 (dev91.sh = r3/device-script-not-run.sh with this session's carry) in the time left.
set -u; TOTAL=${1:-430}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
[ -x build/carry82/a3 ] || tar -xJf build/carry82.tar.xz -C build
B=build/carry82; T0=$(date +%s)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
if echo "$name" | grep -q H200; then
  R=$OUT/t; mkdir -p $R; cp "$0" $R/device-script.sh
  nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
  row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //' | tr -s ' ' | tr '\n' ';'; }
  el() { echo $(( $(date +%s) - T0 )); }
  for x in 1 2; do
    for m in 16 4096 128 32 64; do
      [ $(el) -gt $(( TOTAL / 3 )) ] && break
      it=30; [ $m = 4096 ] && it=10
      be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
      timeout 60 $B/a3 bench --no-quantizer --rows $m --iters $it --backend $be --commit 55c9ec7 --out $R/a3-m$m-$x.json > $R/a3-m$m-$x.txt 2>&1
      echo "a3-m$m-$x: $(row $R/a3-m$m-$x.txt) [$(el) s]"
    done
    tar -czf $OUT/table.tgz -C $OUT t
  done
  left=$(( TOTAL - $(el) )); [ $left -gt 150 ] && bash dev91.sh $left
else
  bash dev91.sh $(( TOTAL - 60 ))
fi
