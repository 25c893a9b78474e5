#!/usr/bin/env bash
# one-off device call (not committed): sm120p-v6 r3: the device entry points without the fp32 scratch (every kernel's raw optional); GPU suite, smoke validation
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 300 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:Contract*' >$R/gpu-tests.txt 2>&1; echo "tests exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ')"
grep -E "FAILED  \]|Failure|DeviceEntry|SplitKContracts" $R/gpu-tests.txt | head -8
timeout 90 build/carry/new validate --linear out,fc2 --rows 128 --candidate sm120p-emulated,sm120-emulated,gpu-model,sm90 --quiet --out /tmp/v >$R/val-m128.txt 2>&1; echo "val m128 exit $? $(grep -E '^status' $R/val-m128.txt | cut -c1-40)"
tar -czf $OUT/results.tgz -C $OUT r
