#!/usr/bin/env bash
# one-off device call: sm90-v22 r2: the K-split applier's registers requested after the chunk-sum branch (ptxas had kept the applier at the launch bound's 96 registers); K-split tiles of several row blocks against the launcher's tiles for qkv and fc1 at M = 16 and 32; the K-split's KB = 1 kernels against base (75bcaae); traces (-DNVFP4_SM90_TRACE) of 16x3x1x1x3 and 16x4x1x1x3
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  timeout 90 $B/new bench --no-quantizer --rows 16 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 16x3x1x1,16x4x1x1,16x2x1x1x3,16x3x1x1x3,16x4x1x1x3 --commit new --out $R/m16-qkvfc1-$x.json > $R/m16-qkvfc1-$x.txt 2>&1; echo "== m16 qkv,fc1 $x: $(row $R/m16-qkvfc1-$x.txt)"
  timeout 90 $B/new bench --no-quantizer --rows 32 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 32x3x1x1,32x2x1x1,32x2x1x1x3,32x3x1x1x3,32x4x1x1x3 --commit new --out $R/m32-qkvfc1-$x.json > $R/m32-qkvfc1-$x.txt 2>&1; echo "== m32 qkv,fc1 $x: $(row $R/m32-qkvfc1-$x.txt)"
  for v in base new; do for m in 16 32; do timeout 60 $B/$v bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --commit $v --out $R/ab-$v-m$m-$x.json > $R/ab-$v-m$m-$x.txt 2>&1; echo "== $v out,fc2 m$m $x: $(row $R/ab-$v-m$m-$x.txt)"; done; done
done
tar -czf $OUT/results.tgz -C $OUT r
for c in 16x3x1x1x3 16x4x1x1x3 16x1x1x1x3; do
  for s in qkv out; do NVFP4_SM90_CONFIG=$c NVFP4_SM90_TRACE_OUT=$R/tr-$c-$s timeout 60 $B/trace bench --no-quantizer --rows 16 --shapes $s --iters 5 --warmup 1 --backend sm90 > $R/tr-$c-$s.txt 2>&1; echo "== trace $c $s rc $?"; done
done
python3 tools/sm90-trace-summary $(ls $R/tr-* | grep -v "\.txt$") > $R/trace-summary.txt 2>&1; cat $R/trace-summary.txt | head -80
tar -czf $OUT/results.tgz -C $OUT r
