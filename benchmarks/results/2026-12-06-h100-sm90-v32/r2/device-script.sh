#!/bin/bash
# Device call (2026-12-06, twenty-sixth session): sm90-v32 r2. Binaries: cur = HEAD 4decad4 (as in r1); fin = the
# commit's build (ninja -C build/h: r1's sdbi made unconditional, the same descriptor arithmetic in the K-split
# chunk-sum loop and the two-chain loop); uw = fin with the warpgroup index warp-uniform in the two-chain tiles too
# (128x3x1x2's hot loop 2413 -> 2346 instructions); stripped, carried as build/carry.tar.xz.
# r2: fin's bits (the GPU suite; validate at M = 16, 128 and 512), cur / fin in alternation at M = 16, 4096, 128, 32,
#     64 (two rounds), uw's bits (Gpu.Sm90*) and fin / uw on 128x3x1x2 at M = 128 and 512, fin's comparison columns at M = 16 and 128, then compute-sanitizer memcheck and racecheck of fin
#     on 16x1x1x1x2 (the K-split), 16x3x1x1, 128x2x1x1 and 128x3x1x2, time permitting.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/fin_tests --gtest_filter='Gpu.*' > $R/fin-tests.txt 2>&1; echo "== fin tests rc $? $(grep -E '^\[  (PASSED|FAILED)|tests? ran|SKIPPED' $R/fin-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/fin-tests.txt | head -5
for m in 16 128 512; do timeout 40 $B/fin validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dfin$m > $R/fin-val-m$m.txt 2>&1; echo "== fin validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/fin-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R --bin cur=$B/cur --bin fin=$B/fin --rows 16,4096,128,32,64 --rounds 2 --budget $(( 330 - $(el) )) --timeout 60; echo "== r2 ab rc $? [$(el) s]"
timeout 70 $B/uw_tests --gtest_filter='Gpu.Sm90*' > $R/uw-tests.txt 2>&1; echo "== uw tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/uw-tests.txt | tr '\n' ' ') [$(el) s]"
timeout 40 $B/uw validate --rows 128 --candidate sm90,sm90-stream --quiet --out /tmp/duw > $R/uw-val-m128.txt 2>&1; echo "== uw validate M=128 rc $? $(grep -o "status: [A-Z]*" $R/uw-val-m128.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
tools/sm90-ab $R/uw --bin fin=$B/fin --bin uw=$B/uw --rows 128,512 --rounds 2 --sm90-config 128x3x1x2 --budget $(( 420 - $(el) )) --timeout 40; echo "== uw ab rc $? [$(el) s]"
for m in 16 128; do
  [ $(el) -lt 440 ] || break
  timeout 60 $B/fin bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit fin --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"
done
for cfg in 16x1x1x1x2:16 16x3x1x1:16 128x2x1x1:300 128x3x1x2:300; do for tool in memcheck racecheck; do
  c=${cfg%%:*}; m=${cfg##*:}
  [ $(el) -lt 530 ] || { echo "== skip $tool $c (time)"; continue; }
  NVFP4_SM90_CONFIG=$c timeout 45 compute-sanitizer --tool $tool $B/fin validate --shapes san:200:1000 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/san$c$tool > $R/fin-$tool-$c.txt 2>&1; echo "== $tool fin $c M=$m rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|status' $R/fin-$tool-$c.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done; done
tar -czf $OUT/results.tgz -C $OUT r2
echo "done [$(el) s]"
