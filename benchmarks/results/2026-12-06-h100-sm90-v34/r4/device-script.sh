#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r4. Binaries: old = 05af970's CLI (r1's hd), new = e2a29af's
# (the launcher counts 128x2x1x1's split last round as 3/4 of a round: qkv at M = 97-128 and 385-480, fc1 at 289-384
# and 1025-1056, out and fc2 at 1921-2112 change picks), new_tests its test binary.
# r4: new's bits (every GPU test; validate at M = 128 (qkv), 400 (N = 21504) and 2048 (N = 5376; K = 1024 for the CPU oracle's time), where the new picks run); old / new in alternation at
# M = 16, 128, 4096, 32, 64 (two rounds) and 192, 256, 512, 1024, 2048 (one round); new's comparison columns
# (sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16 and 128.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry8/new ] || tar -xJf build/carry8.tar.xz -C build
B=$PWD/build/carry8; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 170 $B/new_tests --gtest_filter='Gpu.*' > $R/new-tests.txt 2>&1; echo "== new tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/new-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/new-tests.txt | head -8
for a in "128 --linear qkv" "400 --shapes qkv_k1024:21504:1024" "2048 --shapes out_k1024:5376:1024"; do set -- $a; m=$1; shift
  timeout 90 $B/new validate --rows $m "$@" --candidate sm90,sm90-stream --quiet --out /tmp/dnew$m > $R/new-val-m$m.txt 2>&1; echo "== new validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/new-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
tools/sm90-ab $R/ab --bin old=$B/old --bin new=$B/new --rows 16,128,4096,32,64 --rounds 2 --budget $(( 300 - $(el) )) --timeout 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
for m in 16 128; do
  [ $(el) -lt 420 ] || break
  timeout 60 $B/new bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit new --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"
done
tools/sm90-ab $R/ab2 --bin old=$B/old --bin new=$B/new --rows 192,256,512,2048,1024 --rounds 1 --budget $(( 540 - $(el) )) --timeout 60 > $R/ab2.txt 2>&1; echo "== ab2 rc $? [$(el) s]"
for d in ab ab2; do tools/bench-compare $R/$d --base old > $R/$d/compare.txt 2>&1; cat $R/$d/compare.txt; done
tar -czf $OUT/results.tgz -C $OUT r4
echo "done [$(el) s]"
