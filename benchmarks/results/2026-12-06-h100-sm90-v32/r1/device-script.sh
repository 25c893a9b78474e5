#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r1. Binaries: cur = HEAD 4decad4 (tools/sm90-variant
# build/h base0); sd = + NVFP4_SM90_STAGE_DESC=1 (a one-chain stage's wgmma descriptor as stage 0's plus the stage's
# offset: 7-10 fewer instructions per chunk in every one-chain hot loop); sdbi = sd + NVFP4_SM90_BAR_INTERLEAVE=1 (a
# one-chain tile's three stage barriers side by side: 2-3 fewer). Built on the CPU machine with tools/sm90-variant,
# stripped, carried as build/carry.tar.xz.
# r1: sdbi's bits (GPU suite, every configuration; validate at M = 128 and 512), then cur / sd / sdbi in alternation
#     at M = 16, 4096, 128, 64, two rounds (budget permitting).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/sdbi ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
bits() {
  local v=$1 m
  timeout 70 $B/${v}_tests --gtest_filter='Gpu.Sm90*' > $R/$v-tests.txt 2>&1; echo "== $v tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/$v-tests.txt | tr '\n' ' ') [$(el) s]"
  grep -E '^\[  FAILED' $R/$v-tests.txt | head -5
  for m in 128 512; do timeout 40 $B/$v validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/d$v$m > $R/$v-val-m$m.txt 2>&1; echo "== $v validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/$v-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
}
bits sdbi
tools/sm90-ab $R --bin cur=$B/cur --bin sd=$B/sd --bin sdbi=$B/sdbi --rows 16,4096,128,64 --rounds 2 --budget $(( 540 - $(el) )) --timeout 60; echo "== r1 ab rc $? [$(el) s]"
tar -czf $OUT/results.tgz -C $OUT r1
echo "done [$(el) s]"
