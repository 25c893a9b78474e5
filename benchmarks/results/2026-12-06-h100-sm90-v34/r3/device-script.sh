#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r3. Binaries (tools/sm90-variant on the tree after the
# launcher's round-cost change): b34 (no flags), pf16 / pf48 (-DNVFP4_SM90_PREFETCH_W=16 / 48: the weight thread also
# prefetches the weight blocks 16 / 48 chunks ahead into L2 with cp.async.bulk.prefetch.L2), nocopy
# (-DNVFP4_SM90_NO_COPY, measurement only). r3: pf48's bits (Gpu.Sm90*); the four in alternation on attn_out_proj and
# mlp_fc2 at M = 16, 32, 128 (where the copies pace or share the pace: K-split and lone warpgroups on 84 SMs), two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry7/b34 ] || tar -xJf build/carry7.tar.xz -C build
B=$PWD/build/carry7; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/pf48_tests --gtest_filter='Gpu.Sm90*' > $R/pf48-tests.txt 2>&1; echo "== pf48 tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/pf48-tests.txt | tr '\n' ' ') [$(el) s]"
tools/sm90-ab $R/ab --bin b34=$B/b34 --bin pf16=$B/pf16 --bin pf48=$B/pf48 --bin nocopy=$B/nocopy --rows 16,128,32 --rounds 2 \
  --shapes attn_out_proj,mlp_fc2 --iters 40 --budget $(( 400 - $(el) )) --timeout 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
tools/bench-compare $R/ab --base b34 > $R/compare.txt 2>&1; cat $R/compare.txt
tar -czf $OUT/results.tgz -C $OUT r3
echo "done [$(el) s]"
