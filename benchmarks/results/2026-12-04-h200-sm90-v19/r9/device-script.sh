#!/usr/bin/env bash
# one-off device call: sm90-v19 r9: does 64x3x1x1's lost ring stage (15 -> 14 for the scratch) cost qkv at M = 64? 692226e (base) with 15 and 14 stages, 302b94a (new, 14)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
for rep in 1 2; do
for v in "base 0" "base 14" "new 0" "base 13"; do set -- $v
  if [ $2 = 0 ]; then unset NVFP4_SM90_MAX_STAGES; else export NVFP4_SM90_MAX_STAGES=$2; fi
  timeout 60 $B/$1 bench --no-quantizer --rows 64 --shapes qkv --iters 30 --backend sm90 --commit $1-$2 --out $R/m64-qkv-$1-$2-$rep.json > $R/m64-qkv-$1-$2-$rep.txt 2>&1
  echo "== $1 stages-cap $2: $(grep -E 'sm90 ' $R/m64-qkv-$1-$2-$rep.txt | grep -v 'of which' | sed -e 's/ TFLOP.*x cuBLAS/ x/' | cut -c1-100)"
done; done
unset NVFP4_SM90_MAX_STAGES
tar -czf $OUT/results.tgz -C $OUT r
