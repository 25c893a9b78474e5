#!/bin/bash
# Device call (2026-12-05, twenty-second session): sm90-v29 r1. Measurement builds from HEAD ae4fa5a:
# cur = the default kernel; sw = -DNVFP4_SM90_VERDICT_AHEAD=1 -DNVFP4_SM90_PIPE2=1 -DNVFP4_SM90_HALVES=1
# (disjoint tile configurations: PIPE2 16/32/64x1x1x1, HALVES 128x1x1x1, VERDICT_AHEAD the other
# one-chain tiles). sw's bits first (GPU suite, validate), then cur against sw in alternation, then
# out and fc2 forced onto the one-warpgroup tiles at M = 16 / 32, then cur's slow-path tests.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/sw ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r1; mkdir -p $R; cp dev22.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/sw_tests --gtest_filter='Gpu.Sm90*' > $R/sw-tests.txt 2>&1; echo "== sw tests rc $? $(grep -E '^\[  (PASSED|FAILED)|tests ran' $R/sw-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/sw-tests.txt | head -5
for m in 16 64 128 333; do timeout 40 $B/sw validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/sw-val-m$m.txt 2>&1; echo "== sw validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/sw-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
left=$(( 520 - $(el) ))
tools/sm90-ab $R --bin cur=$B/cur --bin sw=$B/sw --rows 64,128,16,32,4096 --rounds 2 --budget $(( left - 70 )) --timeout 60; echo "== ab rc $? [$(el) s]"
mkdir -p $R/forced
for m in 16 32; do
  [ $(el) -gt 500 ] && break
  tools/sm90-ab $R/forced --bin cur=$B/cur --bin sw=$B/sw --rows $m --rounds 1 --shapes attn_out_proj,mlp_fc2 --sm90-config ${m}x1x1x1 --budget 40 --timeout 40; echo "== forced M=$m rc $? [$(el) s]"
done
[ $(el) -lt 530 ] && { timeout 50 $B/cur_tests --gtest_filter='Gpu.Sm90SlowPath*:Gpu.Sm90EveryTile*' > $R/cur-tests.txt 2>&1; echo "== cur tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/cur-tests.txt | tr '\n' ' ') [$(el) s]"; }
tar -czf $OUT/results1.tgz -C $OUT r1
echo "done [$(el) s]"
