#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r2: the loop probe with the new styles (next chunk decoded before the wait; two 64-token chains, one in flight while the other is added)
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 200 build/carry/probe --out $R/loop-probe.json > $R/loop-probe.txt 2>&1; echo "probe exit $?"; cat $R/loop-probe.txt
tar -czf $OUT/results.tgz -C $OUT r
