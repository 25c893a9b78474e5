#!/bin/bash
# Device call (2026-12-06, twenty-seventh session): sm90-v33 r2. Binaries: cur = HEAD f8f5591's kernel (as in r1);
# tma = the tree's build: the bf16 output through a shared-memory buffer per warpgroup (stmatrix) and one tensor copy
# per tile where no fp32 copy is asked for, 8 | n and the output 16-byte aligned; tma_tests its test binary (a test
# with more tiles than SMs, the old 8-byte-store path kept under test by n = 996); trtma = tma with -DNVFP4_SM90_TRACE.
# r2: tma's bits (every GPU test; validate at M = 16, 128, 512), traces at M = 4096 (qkv, out) and 1024 (qkv),
#     cur / tma in alternation at M = 4096, 128, 16, 1024, 32, 64 (two rounds), compute-sanitizer memcheck and racecheck
#     of the tensor-copy output (Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles, every configuration).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/tma ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/tma_tests --gtest_filter='Gpu.*' > $R/tma-tests.txt 2>&1; echo "== tma tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/tma-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/tma-tests.txt | head -8; grep -E "Sm90Bf16Output" $R/tma-tests.txt
for m in 16 128 512; do timeout 40 $B/tma validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dtma$m > $R/tma-val-m$m.txt 2>&1; echo "== tma validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/tma-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
for job in 4096:qkv 4096:out 1024:qkv; do
  IFS=: read m s <<<"$job"
  NVFP4_SM90_TRACE_OUT=$R/trace-trtma-m$m-$s.txt timeout 60 $B/trtma bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --shapes $s --commit trtma > $R/trace-trtma-m$m-$s.bench.txt 2>&1; echo "== trace M=$m $s rc $? [$(el) s]"
done
tools/sm90-ab $R/ab --bin cur=$B/cur --bin tma=$B/tma --rows 4096,128,16,1024,32,64 --rounds 2 --budget $(( 420 - $(el) )) --timeout 60; echo "== ab rc $? [$(el) s]"
tools/bench-compare $R/ab --base cur > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt
for tool in memcheck racecheck; do
  [ $(el) -lt 500 ] || { echo "== skip $tool (time)"; continue; }
  timeout 90 compute-sanitizer --tool $tool $B/tma_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/tma-$tool.txt 2>&1; echo "== $tool rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $R/tma-$tool.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done
tar -czf $OUT/results.tgz -C $OUT r2
echo "done [$(el) s]"
