#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r7. fin = 4f8772d's CLI; ks2 = 4f8772d's kernel with
# -DNVFP4_SM90_KS_STAGE_CHUNKS=2 (every K-split stage two chunks, so the 64-token K-splits get stages of two chunks and
# lane copies, as 32 tokens have), ks2_tests its tests. Whether the K-split now pays at 33-64 tokens: out and fc2 at
# M = 64 and 48 on the lone 64x1x1x1 / 48x1x1x1 (the launcher's) and the forced 64x1x1x1x2 / x3, each binary in one
# process; the 32-token configurations x3 / x4 with fin; the bits of ks2.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry71/ks2 ] || tar -xJf build/carry71.tar.xz -C build
B=$PWD/build/carry71; R=$OUT/r7; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results7.tgz -C $OUT r7; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
cfgrun() {  # binary M configurations
  timeout 90 $B/$1 bench --no-quantizer --rows $2 --iters 30 --backend sm90 --sm90-config $3 --shapes attn_out_proj,mlp_fc2 --commit $1 --out $R/cfg-$1-m$2.json > $R/cfg-$1-m$2.txt 2>&1
  echo "-- $1 M=$2 rc $? [$(el) s]"; grep -E "sm90@" $R/cfg-$1-m$2.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}' | tr -s ' '
}
for b in fin ks2; do cfgrun $b 64 64x1x1x1,64x1x1x1x2,64x1x1x1x3; cfgrun $b 48 48x1x1x1,64x1x1x1x2,64x1x1x1x3; pack; done
cfgrun fin 32 32x1x1x1x3,32x1x1x1x4; pack
timeout 60 $B/ks2_tests --gtest_filter='Gpu.Sm90*' > $R/ks2-tests.txt 2>&1; echo "== ks2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/ks2-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/ks2-tests.txt | head -5; pack
echo "done [$(el) s]"
