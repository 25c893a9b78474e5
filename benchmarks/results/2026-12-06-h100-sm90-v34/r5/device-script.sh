#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r5. Binaries: tr = e2a29af's kernel with -DNVFP4_SM90_TRACE
# (tools/sm90-variant); t_tests = the test binary of the tree after e2a29af (Gpu.Sm90LastRoundOfOneRowBlockUnits takes
# NVFP4_TEST_SM90_CONFIGS). r5: compute-sanitizer memcheck and racecheck of the split last round (128x2x1x1, which
# attn_qkv_proj at M = 97-128 now takes); traces of qkv at M = 128 (CTA 0: a tile of two warpgroups, then a unit of one)
# and out at M = 128 (128x1x1x1, a lone warpgroup's pace).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry9/tr ] || tar -xJf build/carry9.tar.xz -C build
B=$PWD/build/carry9; R=$OUT/r5; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
for s in attn_qkv_proj attn_out_proj; do
  NVFP4_SM90_TRACE_OUT=$R/trace-m128-$s.txt timeout 60 $B/tr bench --no-quantizer --rows 128 --iters 3 --warmup 1 --backend sm90 --shapes $s --commit tr > $R/trace-m128-$s.bench.txt 2>&1; echo "== trace $s rc $? [$(el) s]"
  python3 tools/sm90-trace-summary $R/trace-m128-$s.txt.wg 2>&1 | tail -4
done
timeout 60 $B/t_tests --gtest_filter='Gpu.Sm90LastRoundOfOneRowBlockUnits' > $R/t-units.txt 2>&1; echo "== units test rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t-units.txt | tr '\n' ' ') [$(el) s]"
for tool in memcheck racecheck; do
  NVFP4_TEST_SM90_CONFIGS=128x2x1x1 timeout 200 compute-sanitizer --tool $tool $B/t_tests --gtest_filter='Gpu.Sm90LastRoundOfOneRowBlockUnits' > $R/t-$tool.txt 2>&1; echo "== $tool rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $R/t-$tool.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done
tar -czf $OUT/results.tgz -C $OUT r5
echo "done [$(el) s]"
