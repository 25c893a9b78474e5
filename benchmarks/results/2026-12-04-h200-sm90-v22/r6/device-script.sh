#!/usr/bin/env bash
# one-off device call: sm90-v22 r6: the kept commit (546fb8e): the full comparison (sm90, sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt, cuBLAS bf16) at M = 16 and 128; at M = 4096 a cap of eight ring stages for 128x2x1x1 (NVFP4_SM90_MAX_STAGES=8) against its default (ten fit), two rounds alternated
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
for m in 16 128; do
  timeout 150 $B/kept bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 546fb8e --out $R/full-m$m.json > $R/full-m$m.txt 2>&1; echo "== full m$m: $(row $R/full-m$m.txt)"
done
tar -czf $OUT/results.tgz -C $OUT r
for x in 1 2; do
  for st in 8 0; do
    if [ $st = 0 ]; then unset NVFP4_SM90_MAX_STAGES; else export NVFP4_SM90_MAX_STAGES=$st; fi
    timeout 120 $B/kept bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit 546fb8e --out $R/m4096-st$st-$x.json > $R/m4096-st$st-$x.txt 2>&1; echo "== m4096 cap $st $x: $(row $R/m4096-st$st-$x.txt)"
  done
done
unset NVFP4_SM90_MAX_STAGES
tar -czf $OUT/results.tgz -C $OUT r
