#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r8: the launcher's new picks at M = 65-128 (64x2x1x1 where the row blocks fit one round, 128x2x1x1 where neither that nor 128x3x1x2 does) against 0490f2d (base): times at M = 128 and 96, validate at M = 65, 96, 128 (sm90, sm90-stream)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for m in 65 96 128; do
timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-new-m$m.txt 2>&1; echo "val new m$m exit $? $(grep -E '^status' $R/val-new-m$m.txt | cut -c1-70)"
done
for m in 128 96; do for v in base new; do
  timeout 100 build/carry/$v bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit $v --out $R/m$m-$v.json >$R/m$m-$v.txt 2>&1
  echo "== m$m $v"; grep -E "sm90(-stream)? " $R/m$m-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-90
done; done
tar -czf $OUT/results.tgz -C $OUT r
