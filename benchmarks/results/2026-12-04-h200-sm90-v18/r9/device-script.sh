#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r9: the final commit (d2c45a7: r2's kernel, r8's launcher) as a whole: the GPU suite and validate at M = 1, 16, 64, 128, 333
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 150 build/carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1; echo "tests exit $?"; tail -1 $R/tests.txt; grep FAILED $R/tests.txt | head -5
for m in 1 16 64 128 333; do
timeout 60 build/carry/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v >$R/val-m$m.txt 2>&1; echo "val m$m exit $? $(grep -E '^status' $R/val-m$m.txt | cut -c1-70)"
done
tar -czf $OUT/results.tgz -C $OUT r
