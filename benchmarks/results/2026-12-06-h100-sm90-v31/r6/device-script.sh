#!/bin/bash
# Device call (2026-12-06, twenty-fifth session): sm90-v31 r6. n96 = the committed source (47d5ce6) +
# 96x1x1x1 built (one warpgroup of 96 tokens, with 128x1x1x1's early ready wait and release).
# Its GPU suite, validate forced to 96x1x1x1, sanitizers, then the M = 65-96 configurations, two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry5/n96 ] || tar -xJf build/carry5.tar.xz -C build
B=$PWD/build/carry5; R=$OUT/r6; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
timeout 60 $B/n96_tests --gtest_filter='Gpu.Sm90*' > $R/n96-tests.txt 2>&1; echo "== n96 tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/n96-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/n96-tests.txt | head -5
NVFP4_SM90_CONFIG=96x1x1x1 timeout 40 $B/n96 validate --rows 96 --candidate sm90,sm90-stream --quiet --out /tmp/dv96 > $R/n96-val-m96.txt 2>&1; echo "== validate 96x1x1x1 M=96 rc $? $(grep -o "status: [A-Z]*" $R/n96-val-m96.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
for tool in memcheck racecheck; do NVFP4_SM90_CONFIG=96x1x1x1 timeout 45 compute-sanitizer --tool $tool $B/n96 validate --shapes san:200:1000 --rows 90 --candidate sm90,sm90-stream --quiet --out /tmp/san96$tool > $R/n96-$tool-96x1x1x1.txt 2>&1; echo "== $tool 96x1x1x1 rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|status' $R/n96-$tool-96x1x1x1.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin n96=$B/n96 --rows 96,80,72 --rounds 2 --sm90-config 128x1x1x1,96x1x1x1,128x2x1x1,96x2x1x1,128x3x1x2,64x2x1x1 --budget $(( 150 - $(el) )) --timeout 40; echo "== r6 ab rc $? [$(el) s]"
tar -czf $OUT/results.tgz -C $OUT r6
echo "done [$(el) s]"
