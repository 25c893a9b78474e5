#!/bin/bash
# Device call (2026-12-06, twenty-seventh session): sm90-v33 r3. Binaries: cur = HEAD f8f5591's kernel (as in r1, r2);
# fin = the tree's build: r2's tma for the one-chain tiles (their machine code equal to tma's but for the output
# map's parameter offset), the two-chain and K-split tiles keeping cur's machine code; fin_tests its test binary;
# pd = fin with -DNVFP4_SM90_PREDECODE (the 128-token one-chain tiles take the next tile's coordinates, ready wait and
# decode before the epilogue); pd_tests its test binary; trpd = pd with -DNVFP4_SM90_TRACE.
# r3: fin's bits (every GPU test; validate at M = 16, 128, 512), compute-sanitizer memcheck and racecheck of the
#     tensor-copy output on 16x3x1x1 and 128x2x1x1 (Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles), pd's bits (Gpu.Sm90*),
#     a trace of pd at M = 4096 (qkv), cur / fin / pd in alternation at M = 4096 and 1024 (two rounds), cur / fin at
#     M = 192, 256, 512, 2048 (one round).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/fin_tests --gtest_filter='Gpu.*' > $R/fin-tests.txt 2>&1; echo "== fin tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/fin-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/fin-tests.txt | head -8
for m in 16 128 512; do timeout 40 $B/fin validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dfin$m > $R/fin-val-m$m.txt 2>&1; echo "== fin validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/fin-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
for tool in memcheck racecheck; do
  NVFP4_TEST_SM90_CONFIGS=16x3x1x1,128x2x1x1 timeout 150 compute-sanitizer --tool $tool $B/fin_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/fin-$tool.txt 2>&1; echo "== $tool rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $R/fin-$tool.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done
timeout 100 $B/pd_tests --gtest_filter='Gpu.Sm90*' > $R/pd-tests.txt 2>&1; echo "== pd tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/pd-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/pd-tests.txt | head -8
NVFP4_SM90_TRACE_OUT=$R/trace-trpd-m4096-qkv.txt timeout 60 $B/trpd bench --no-quantizer --rows 4096 --iters 3 --warmup 1 --backend sm90 --shapes qkv --commit trpd > $R/trace-trpd-m4096-qkv.bench.txt 2>&1; echo "== trace rc $? [$(el) s]"
tools/sm90-ab $R/ab --bin cur=$B/cur --bin fin=$B/fin --bin pd=$B/pd --rows 4096,1024 --rounds 2 --budget $(( 400 - $(el) )) --timeout 60; echo "== ab rc $? [$(el) s]"
tools/sm90-ab $R/ab2 --bin cur=$B/cur --bin fin=$B/fin --rows 192,256,512,2048 --rounds 1 --budget $(( 470 - $(el) )) --timeout 60; echo "== ab2 rc $? [$(el) s]"
for d in ab ab2; do tools/bench-compare $R/$d --base cur > $R/$d/compare.txt 2>&1; cat $R/$d/compare.txt; done
tar -czf $OUT/results.tgz -C $OUT r3
echo "done [$(el) s]"
