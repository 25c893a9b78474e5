#!/usr/bin/env bash
# one-off device call: sm90-v22 r9: the K-split's ring depth: 16x1x1x1x3 / 32x1x1x1x3 (six stages, the launcher's) against two chunk-sum warpgroups (x2) with caps of 4, 6 and 8 stages, attn_out_proj and mlp_fc2 at M = 16 and 32, kept commit 546fb8e, two rounds
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for m in 16 32; do
    timeout 60 $B/kept bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --sm90-config ${m}x1x1x1x3 --commit 546fb8e --out $R/m$m-ks3-$x.json > $R/m$m-ks3-$x.txt 2>&1; echo "== m$m ks3 $x: $(row $R/m$m-ks3-$x.txt)"
    for st in 4 6 8; do
      NVFP4_SM90_MAX_STAGES=$st timeout 60 $B/kept bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --sm90-config ${m}x1x1x1x2 --commit 546fb8e --out $R/m$m-ks2-st$st-$x.json > $R/m$m-ks2-st$st-$x.txt 2>&1; echo "== m$m ks2 st$st $x: $(row $R/m$m-ks2-st$st-$x.txt)"
    done
  done
done
tar -czf $OUT/results.tgz -C $OUT r
