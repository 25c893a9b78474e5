#!/bin/bash
# Device call (2026-12-06, twenty-fifth session): sm90-v31 r5. nw = the source to be committed:
# HEAD + counters-shared + stage-verdict + 96x2x1x1 built (launcher unchanged). Its GPU suite and
# validate, then a sweep of 128x2x1x1 / 128x3x1x2 / 96x2x1x1 / 64x2x1x1 at M = 192 ... 3072, two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry3/nw ] || tar -xJf build/carry3.tar.xz -C build
B=$PWD/build/carry3; mkdir -p $OUT/r5; cp "$0" $OUT/r5/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/r5/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $OUT/r5/device.txt)"
R=$OUT/r5
timeout 90 $B/nw_tests --gtest_filter='Gpu.*' > $R/nw-tests.txt 2>&1; echo "== nw tests rc $? $(grep -E '^\[  (PASSED|FAILED)|tests ran' $R/nw-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/nw-tests.txt | head -5
for m in 128 512; do timeout 40 $B/nw validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dnw$m > $R/nw-val-m$m.txt 2>&1; echo "== nw validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/nw-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin nw=$B/nw --rows 512,2048,192,256,384,448,640,768,1536,2304,3072 --rounds 2 --sm90-config 128x2x1x1,128x3x1x2,96x2x1x1,64x2x1x1 --budget $(( 300 - $(el) )) --timeout 60; echo "== r5 sweep rc $? [$(el) s]"
tar -czf $OUT/results.tgz -C $OUT r5
echo "done [$(el) s]"
