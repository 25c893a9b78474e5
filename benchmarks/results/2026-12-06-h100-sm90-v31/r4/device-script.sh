#!/bin/bash
# Device call (2026-12-06, twenty-fifth session): sm90-v31 r6. sv = HEAD + counters-shared + stage-verdict
# (the launcher before); nw2 = sv + 96x2x1x1 built and in the launcher's candidates (weight 10).
# nw2's GPU suite and validate at M = 256 and 512 (96x2x1x1 picked for out and fc2), then sv / nw2 with
# their own picks at M values outside r5's sweep where the picks differ, two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry4/nw2 ] || tar -xJf build/carry4.tar.xz -C build
B=$PWD/build/carry4; mkdir -p $OUT/r6; cp "$0" $OUT/r6/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/r6/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $OUT/r6/device.txt)"
R=$OUT/r6
timeout 90 $B/nw2_tests --gtest_filter='Gpu.Sm90*' > $R/nw2-tests.txt 2>&1; echo "== nw2 tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/nw2-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/nw2-tests.txt | head -5
for m in 256 512; do timeout 40 $B/nw2 validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dnw2$m > $R/nw2-val-m$m.txt 2>&1; echo "== nw2 validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/nw2-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin sv=$B/sv --bin nw2=$B/nw2 --rows 160,224,288,320,416,480,576 --rounds 2 --budget $(( 230 - $(el) )) --timeout 40; echo "== r6 ab rc $? [$(el) s]"
tar -czf $OUT/results.tgz -C $OUT r6
echo "done [$(el) s]"
