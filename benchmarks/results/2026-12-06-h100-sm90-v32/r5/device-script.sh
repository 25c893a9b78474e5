#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r5. Binaries: fin = 92793ac (as r2-r4); ep = fin + the
# bf16 epilogue (no fp32 copy) with one multiply by alpha * 2^7 where |alpha| < 2^120, one NaN vote per tile instead
# of one per 8 tokens (a warp with a NaN stores its tile again with bf16_rn), and a running store address; its
# GPU test of that epilogue also runs alphas of 2^121 and 2^-140.
# r5: ep's bits (every GPU test; validate at M = 16, 128, 512), fin / ep at M = 4096, 1024, 128, 512, 16 (two rounds),
#     memcheck and racecheck of ep on 128x2x1x1 and 16x1x1x1x2.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/ep ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/ep_tests --gtest_filter='Gpu.*' > $R/ep-tests.txt 2>&1; echo "== ep tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/ep-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure|bad' $R/ep-tests.txt | head -8
for m in 16 128 512; do timeout 40 $B/ep validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dep$m > $R/ep-val-m$m.txt 2>&1; echo "== ep validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/ep-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin fin=$B/fin --bin ep=$B/ep --rows 4096,1024,128,512,16 --rounds 2 --budget $(( 400 - $(el) )) --timeout 60; echo "== r5 ab rc $? [$(el) s]"
for cfg in 128x2x1x1:300 16x1x1x1x2:16; do for tool in memcheck racecheck; do
  c=${cfg%%:*}; m=${cfg##*:}
  [ $(el) -lt 440 ] || { echo "== skip $tool $c (time)"; continue; }
  NVFP4_SM90_CONFIG=$c timeout 45 compute-sanitizer --tool $tool $B/ep validate --shapes san:200:1000 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/san$c$tool > $R/ep-$tool-$c.txt 2>&1; echo "== $tool ep $c M=$m rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|status' $R/ep-$tool-$c.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done; done
tar -czf $OUT/results.tgz -C $OUT r5
echo "done [$(el) s]"
