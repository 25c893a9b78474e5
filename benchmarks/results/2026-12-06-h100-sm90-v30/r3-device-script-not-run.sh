#!/bin/bash
# Device call (2026-12-06, twenty-third session): sm90-v30 r3. cs = HEAD f0b3479 + the two-chain tiles'
# path counters in shared memory (128x3x1x2's hot loop without its six local-memory accesses; the
# other configurations' machine code the same up to register names). cs's bits (GPU suite: every
# configuration; validate at M = 128 and 512), then cur / cs at M = 128 (qkv on 128x3x1x2) and
# M = 512 (out and fc2 on 128x3x1x2), two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/cs ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r3; mkdir -p $R; cp dev28.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 60 $B/cs_tests --gtest_filter='Gpu.Sm90*' > $R/cs-tests.txt 2>&1; echo "== cs tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/cs-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/cs-tests.txt | head -5
for m in 128 512; do timeout 40 $B/cs validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dc$m > $R/cs-val-m$m.txt 2>&1; echo "== cs validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/cs-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin cur=$B/cur --bin cs=$B/cs --rows 128,512 --rounds 2 --budget $(( 150 - $(el) )) --timeout 40; echo "== ab rc $? [$(el) s]"
tar -czf $OUT/results3.tgz -C $OUT r3
echo "done [$(el) s]"
