#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r8. c48 = tools/sm90-variant of the tree with two new tile
# configurations, 32x4x1x1 and 48x4x1x1 (four consumer warpgroups at 104 registers; no local memory in their hot loops;
# every other configuration's machine code unchanged); c48_tests its test binary.
# r8: every GPU test (they run every built configuration); validate of fc1 and qkv with NVFP4_SM90_CONFIG=48x4x1x1 at
# M = 48, 40, 33; memcheck and racecheck of the bf16-output buffer test on the two new configurations; 64x2x1x1 (the
# launcher's pick for mlp_fc1 at M = 33-64: two rounds) against 48x4x1x1 (one round) at M = 33, 40, 48, and 64x3x1x1
# against 48x4x1x1 on qkv at 40 and 48, both in one process, reversed in the second pass.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry11/c48 ] || tar -xJf build/carry11.tar.xz -C build
B=$PWD/build/carry11; R=$OUT/r8; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 200 $B/c48_tests --gtest_filter='Gpu.*' > $R/c48-tests.txt 2>&1; echo "== tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/c48-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/c48-tests.txt | head -8
for m in 48 40 33; do NVFP4_SM90_CONFIG=48x4x1x1 timeout 60 $B/c48 validate --rows $m --linear fc1,qkv --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
b() {  # name rows shapes configs iters
  timeout 90 $B/c48 bench --no-quantizer --backend sm90 --rows $2 --shapes $3 --sm90-config $4 --iters ${5:-40} \
    --commit c48 --out $R/$1.json > $R/$1.txt 2>&1
  echo "-- $1 rc $? [$(el) s]"; grep -F ' sm90@' $R/$1.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'
}
for p in 1 2; do
  F=64x2x1x1,48x4x1x1; Q=64x3x1x1,48x4x1x1
  if [ $p = 2 ]; then F=48x4x1x1,64x2x1x1; Q=48x4x1x1,64x3x1x1; fi
  for m in 48 40 33; do b fc1-$m-$p $m mlp_fc1 $F; done
  for m in 48 40; do b qkv-$m-$p $m attn_qkv_proj $Q; done
done
for tool in memcheck racecheck; do
  NVFP4_TEST_SM90_CONFIGS=32x4x1x1,48x4x1x1 timeout 200 compute-sanitizer --tool $tool $B/c48_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/c48-$tool.txt 2>&1; echo "== $tool rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $R/c48-$tool.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done
tar -czf $OUT/results.tgz -C $OUT r8
echo "done [$(el) s]"
