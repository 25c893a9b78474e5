#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r10. Binaries: old = 05af970's CLI; fin = the tree with
# 32x4x1x1, 48x1x1x1 and 48x4x1x1 built and the launcher's rule for them (M = 17-48), over e2a29af; fin_tests its test
# binary. r10: fin's bits (every GPU test); old / fin in alternation, the launcher's picks, at M = 32, 40, 17, 48, 24
# (two rounds).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry13/fin ] || tar -xJf build/carry13.tar.xz -C build
B=$PWD/build/carry13; R=$OUT/r10; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/fin_tests --gtest_filter='Gpu.*' > $R/fin-tests.txt 2>&1; echo "== fin tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/fin-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/fin-tests.txt | head -8
tools/sm90-ab $R/ab --bin old=$B/old --bin fin=$B/fin --rows 32,40,17,48,24 --rounds 2 --budget $(( 200 - $(el) )) --timeout 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
tools/bench-compare $R/ab --base old > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt
tar -czf $OUT/results.tgz -C $OUT r10
echo "done [$(el) s]"
