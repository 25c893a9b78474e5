#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r7. c324 = tools/sm90-variant of the tree with a new tile
# configuration built, 32x4x1x1 (four consumer warpgroups of 32 tokens, 104 registers each; every other
# configuration's machine code unchanged: tools/sass-sm90 --compare "same"); c324_tests its test binary.
# r7: c324's bits (Gpu.Sm90*, which run every built configuration; validate of fc1 and qkv at M = 32 and 24 with
# NVFP4_SM90_CONFIG=32x4x1x1); 32x2x1x1 (the launcher's pick for mlp_fc1 at M = 17-32: two rounds) against 32x4x1x1
# (one round) and 32x3x1x1 against 32x4x1x1 on qkv, both in one process, reversed in the second pass.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry10/c324 ] || tar -xJf build/carry10.tar.xz -C build
B=$PWD/build/carry10; R=$OUT/r7; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/c324_tests --gtest_filter='Gpu.Sm90*' > $R/c324-tests.txt 2>&1; echo "== tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/c324-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/c324-tests.txt | head -8
for m in 32 24; do NVFP4_SM90_CONFIG=32x4x1x1 timeout 60 $B/c324 validate --rows $m --linear fc1,qkv --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
b() {  # name rows shapes configs iters
  timeout 90 $B/c324 bench --no-quantizer --backend sm90 --rows $2 --shapes $3 --sm90-config $4 --iters ${5:-40} \
    --commit c324 --out $R/$1.json > $R/$1.txt 2>&1
  echo "-- $1 rc $? [$(el) s]"; grep -F ' sm90@' $R/$1.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'
}
for p in 1 2; do
  F=32x2x1x1,32x4x1x1; Q=32x3x1x1,32x4x1x1
  if [ $p = 2 ]; then F=32x4x1x1,32x2x1x1; Q=32x4x1x1,32x3x1x1; fi
  for m in 32 24 17; do b fc1-$m-$p $m mlp_fc1 $F; done
  for m in 32 24; do b qkv-$m-$p $m attn_qkv_proj $Q; done
done
tar -czf $OUT/results.tgz -C $OUT r7
echo "done [$(el) s]"
