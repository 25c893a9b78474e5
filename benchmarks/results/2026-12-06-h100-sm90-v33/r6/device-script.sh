#!/bin/bash
# Device call (2026-12-06, twenty-seventh session): sm90-v33 r6. Binaries: fin = the tree's build (7cae83b's kernel,
# r3's fin); st = fin with -DNVFP4_SM90_SPLIT_TAIL (where the last round of tiles of two or more row blocks is partial
# and its row blocks fit one round, those tiles are taken as units of one row block, the other warpgroups sitting
# out); st_tests its test binary (a new test whose shape splits the last round on every such configuration).
# r6: st's bits (Gpu.Sm90*), fin / st in alternation at M = 4096 and 2048 (two rounds).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/st ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r6; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/st_tests --gtest_filter='Gpu.Sm90*' > $R/st-tests.txt 2>&1; echo "== st tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/st-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/st-tests.txt | head -8; grep -E "LastRound" $R/st-tests.txt
tools/sm90-ab $R --bin fin=$B/fin --bin st=$B/st --rows 4096,2048 --rounds 2 --budget $(( 240 - $(el) )) --timeout 60; echo "== ab rc $? [$(el) s]"
tools/bench-compare $R --base fin > $R/compare.txt 2>&1; cat $R/compare.txt
tar -czf $OUT/results.tgz -C $OUT r6
echo "done [$(el) s]"
