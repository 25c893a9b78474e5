#!/bin/bash
# Device call (2026-12-06, twenty-eighth session): sm90-v34 r1. hd = the tree's build at 05af970 (CLI), hd_tests its
# test binary. r1: every GPU test on HEAD (c6f71b3's operand helper and 89b1f26's tensor-map encoder had not run on a
# GPU); then the launcher's pick against 128x2x1x1 (whose partial last round is split into one-row-block units since
# 747b2bf) where the launcher's round-cost rule would change its pick if a split last round cost ~2/3 of a round:
# qkv at M = 128 (128x3x1x2), qkv 448 / out, fc2 448, 512, 2048 / fc1 384 (96x2x1x1). Both configurations in one
# process, the list order reversed in the second pass.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry6/hd ] || tar -xJf build/carry6.tar.xz -C build
B=$PWD/build/carry6; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 200 $B/hd_tests --gtest_filter='Gpu.*' > $R/tests.txt 2>&1; echo "== tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/tests.txt | head -8
b() {  # name rows shapes configs
  timeout 90 $B/hd bench --no-quantizer --backend sm90 --rows $2 --shapes $3 --sm90-config $4 --iters ${5:-40} \
    --commit 05af970 --out $R/$1.json > $R/$1.txt 2>&1
  echo "-- $1 rc $? [$(el) s]"; grep -F ' sm90 ' $R/$1.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $3 "|" $NF}'
}
for p in 1 2; do
  if [ $p = 1 ]; then A=128x3x1x2,128x2x1x1; C=96x2x1x1,128x2x1x1; else A=128x2x1x1,128x3x1x2; C=128x2x1x1,96x2x1x1; fi
  b qkv128-$p 128 attn_qkv_proj $A 60
  b m448-$p 448 attn_qkv_proj,attn_out_proj,mlp_fc2 $C
  b m512-$p 512 attn_out_proj,mlp_fc2 $C
  b fc1-384-$p 384 mlp_fc1 $C
  b m2048-$p 2048 attn_out_proj,mlp_fc2 $C 15
done
tar -czf $OUT/results.tgz -C $OUT r1
echo "done [$(el) s]"
