#!/usr/bin/env bash
# one-off device call: sm90-v22 r4: the ring's stage cap (NVFP4_SM90_MAX_STAGES: 4, 6, 8, 12, default 16) on the kept kernel (base = 75bcaae) with the launcher's configurations at M = 16, 32, 64, 128 and 4096, all four linears, two rounds
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for m in 16 32 64 128; do
    for st in 4 6 8 12 16; do
      NVFP4_SM90_MAX_STAGES=$st timeout 90 $B/base bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit 75bcaae --out $R/m$m-st$st-$x.json > $R/m$m-st$st-$x.txt 2>&1; echo "== m$m st$st $x: $(row $R/m$m-st$st-$x.txt)"
    done
  done
done
tar -czf $OUT/results.tgz -C $OUT r
for st in 6 8 16; do
  NVFP4_SM90_MAX_STAGES=$st timeout 120 $B/base bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit 75bcaae --out $R/m4096-st$st.json > $R/m4096-st$st.txt 2>&1; echo "== m4096 st$st: $(row $R/m4096-st$st.txt)"
done
tar -czf $OUT/results.tgz -C $OUT r
