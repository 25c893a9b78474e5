#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r9. c48b = r8's c48 with two more 48-token configurations
# built, 48x1x1x1 and 48x3x1x1 (no local memory in their hot loops; every other configuration's machine code unchanged);
# c48b_tests its test binary. r9: Gpu.Sm90* (every built configuration); validate at M = 40 with NVFP4_SM90_CONFIG
# 48x3x1x1 (qkv) and 48x1x1x1 (out, fc2); 64x3x1x1 against 48x3x1x1 on qkv and 64x1x1x1 against 48x1x1x1 on out and
# fc2 at M = 33, 40, 48, both in one process, reversed in the second pass.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry12/c48b ] || tar -xJf build/carry12.tar.xz -C build
B=$PWD/build/carry12; R=$OUT/r9; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/c48b_tests --gtest_filter='Gpu.Sm90*' > $R/c48b-tests.txt 2>&1; echo "== tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/c48b-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/c48b-tests.txt | head -8
NVFP4_SM90_CONFIG=48x3x1x1 timeout 60 $B/c48b validate --rows 40 --linear qkv --candidate sm90,sm90-stream --quiet --out /tmp/dq > $R/val-qkv-m40.txt 2>&1; echo "== validate qkv rc $? $(grep -o "status: [A-Z]*" $R/val-qkv-m40.txt | tr '\n' ' ') [$(el) s]"
NVFP4_SM90_CONFIG=48x1x1x1 timeout 60 $B/c48b validate --rows 40 --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/do > $R/val-out-m40.txt 2>&1; echo "== validate out,fc2 rc $? $(grep -o "status: [A-Z]*" $R/val-out-m40.txt | tr '\n' ' ') [$(el) s]"
b() {  # name rows shapes configs iters
  timeout 90 $B/c48b bench --no-quantizer --backend sm90 --rows $2 --shapes $3 --sm90-config $4 --iters ${5:-40} \
    --commit c48b --out $R/$1.json > $R/$1.txt 2>&1
  echo "-- $1 rc $? [$(el) s]"; grep -F ' sm90@' $R/$1.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'
}
for p in 1 2; do
  Q=64x3x1x1,48x3x1x1; O=64x1x1x1,48x1x1x1
  if [ $p = 2 ]; then Q=48x3x1x1,64x3x1x1; O=48x1x1x1,64x1x1x1; fi
  for m in 48 40 33; do b qkv-$m-$p $m attn_qkv_proj $Q; b out-$m-$p $m attn_out_proj,mlp_fc2 $O; done
done
tar -czf $OUT/results.tgz -C $OUT r9
echo "done [$(el) s]"
