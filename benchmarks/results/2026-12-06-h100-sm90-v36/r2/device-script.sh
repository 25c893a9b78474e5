#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r2. hd = c01ea8f (HEAD's machine code). rw1 = the K-split's
# verdict lanes with their tile records kept as loaded words (decoded in the round that uses them: HEAD took the 16-bit
# fields out right after the loads, so the lane waited for its loads in every round) and the record coordinates stepped
# without divisions; rw1p = rw1 plus an L2 prefetch of the round after's records. hd / rw1 / rw1p in alternation on out
# and fc2 at M = 16, 32 (the launcher's K-splits) and at M = 48, 64 forced to 64x1x1x1x2 (against hd's lone tiles at
# 48, 64); then the bits of rw1 and rw1p (Gpu.Sm90*).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry66/rw1 ] || tar -xJf build/carry66.tar.xz -C build
B=$PWD/build/carry66; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
tools/sm90-ab $R/ab --bin hd=$B/hd --bin rw1=$B/rw1 --bin rw1p=$B/rw1p --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; pack
tools/sm90-ab $R/ab64 --bin hd=$B/hd --bin rw1=$B/rw1 --bin rw1p=$B/rw1p --rows 64,48 --rounds 2 --shapes attn_out_proj,mlp_fc2 --sm90-config 64x1x1x1x2 --budget 60 > $R/ab64.txt 2>&1; echo "== ab64 (64x1x1x1x2) rc $? [$(el) s]"; short $R/ab64.txt; pack
tools/sm90-ab $R/lone --bin hd=$B/hd --rows 64,48 --rounds 1 --shapes attn_out_proj,mlp_fc2 --budget 30 > $R/lone.txt 2>&1; echo "== hd launcher's tiles rc $? [$(el) s]"; short $R/lone.txt; pack
for v in rw1 rw1p; do
  timeout 60 $B/${v}_tests --gtest_filter='Gpu.Sm90*' > $R/$v-tests.txt 2>&1; echo "== $v Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/$v-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/$v-tests.txt | head -5; pack
done
echo "done [$(el) s]"
