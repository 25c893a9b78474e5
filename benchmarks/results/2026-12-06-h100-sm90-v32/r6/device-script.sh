#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r6. The final tree's test binary (92793ac's kernel, the
# bf16-epilogue test extended with alphas of 2^121 and 2^-140): every GPU test.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/head_tests ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r6; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
timeout 170 $B/head_tests --gtest_filter='Gpu.*' > $R/head-tests.txt 2>&1; echo "== head tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/head-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/head-tests.txt | head -8; grep -E "Sm90Bf16Output" $R/head-tests.txt
tar -czf $OUT/results.tgz -C $OUT r6
