#!/bin/bash
# Device call (2026-12-06, twenty-seventh session): sm90-v33 r5. final_tests = the test binary of the tree after
# 37cfc02 (its GPU kernels the commit's; the two bf16-output tests share a helper now). r5: every GPU test.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/final_tests ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/final_tests --gtest_filter='Gpu.*' > $R/final-tests.txt 2>&1; echo "== final tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/final-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/final-tests.txt | head -8; grep -E "Sm90Bf16Output" $R/final-tests.txt
tar -czf $OUT/results.tgz -C $OUT r5
echo "done [$(el) s]"
