#!/bin/bash
# Device call (2026-12-06, twenty-seventh session): sm90-v33 r1. Binaries: cur = HEAD f8f5591's kernel (the tree's
# build; its GEMM machine code equals f8f5591's); head_tests = its test binary (f8f5591's bf16-epilogue test, not run
# on a GPU yet); tr = cur with -DNVFP4_SM90_TRACE (per-warpgroup stamps; a tile's last chunk's event 2 = its epilogue's
# end); noep = cur with -DNVFP4_SM90_NO_EPILOGUE (measurement: no epilogue); trnoep = both flags.
# r1: every GPU test; traces of qkv, out, fc1, fc2 at M = 4096 and qkv at M = 1024 (tr), qkv at M = 4096 (trnoep);
#     cur / noep in alternation at M = 4096, 1024, 128, two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/cur ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/head_tests --gtest_filter='Gpu.*' > $R/head-tests.txt 2>&1; echo "== head tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/head-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/head-tests.txt | head -8; grep -E "Sm90Bf16Output" $R/head-tests.txt
for job in tr:4096:qkv tr:4096:out tr:4096:fc1 tr:4096:fc2 tr:1024:qkv trnoep:4096:qkv; do
  IFS=: read b m s <<<"$job"
  NVFP4_SM90_TRACE_OUT=$R/trace-$b-m$m-$s.txt timeout 60 $B/$b bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --shapes $s --commit $b > $R/trace-$b-m$m-$s.bench.txt 2>&1; echo "== trace $b M=$m $s rc $? [$(el) s]"
done
tools/sm90-ab $R/ab --bin cur=$B/cur --bin noep=$B/noep --rows 4096,1024,128 --rounds 2 --budget $(( 400 - $(el) )) --timeout 60; echo "== ab rc $? [$(el) s]"
tools/bench-compare $R/ab --base cur > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt | head -40
tar -czf $OUT/results.tgz -C $OUT r1
echo "done [$(el) s]"
