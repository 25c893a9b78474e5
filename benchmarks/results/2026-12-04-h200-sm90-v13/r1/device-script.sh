#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r1: the copy probe (what one SM's copies stream with small stages), and the K-split with copies removed (NO_COPY build)
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 200 build/carry/probe 30 > $R/copy-probe.txt 2>&1; echo "probe exit $?"; cat $R/copy-probe.txt
for m in 16 32; do
  for bin in new nc; do
    build/carry/$bin bench --no-quantizer --rows $m --iters 30 --backend sm90 --shapes out,fc2,qkv --commit $bin --out $R/bench-m$m-$bin.json >$R/bench-m$m-$bin.txt 2>&1
    echo "== m$m $bin"; grep -E "sm90" $R/bench-m$m-$bin.txt | grep -v "of which" | cut -c1-110
  done
done
tar -czf $OUT/results.tgz -C $OUT r
