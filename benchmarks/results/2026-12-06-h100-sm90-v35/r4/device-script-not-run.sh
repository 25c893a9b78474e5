#!/bin/bash
# Device call (2026-12-06, thirtieth session): sm90-v35 r4. va2 = c01ea8f with the K-split's verdict lanes loading their
# tile records two rounds ahead into alternating buffers (-DNVFP4_SM90_VERDICT_AHEAD=2); hd = c01ea8f. Bits of va2
# (Gpu.Sm90*), then hd / va2 in alternation on out and fc2 at M = 16, 32 (the launcher's K-splits) and at M = 64 forced
# to 64x1x1x1x2. The device time left was ~170 s: the shortest call that answers it.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry65/va2 ] || tar -xJf build/carry65.tar.xz -C build
B=$PWD/build/carry65; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
tools/sm90-ab $R/ab --bin hd=$B/hd --bin va2=$B/va2 --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 30 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; sed 's/ TFLOP.*cuBLAS-bf16;fc2/ ; fc2/; s/ TFLOP.*cuBLAS-bf16;$//' $R/ab.txt; pack
tools/sm90-ab $R/ab64 --bin hd=$B/hd --bin va2=$B/va2 --rows 64 --rounds 1 --shapes attn_out_proj --sm90-config 64x1x1x1x2 --budget 20 > $R/ab64.txt 2>&1; echo "== ab64 rc $? [$(el) s]"; sed 's/ TFLOP.*cuBLAS-bf16;$//' $R/ab64.txt; pack
timeout 40 $B/va2_tests --gtest_filter='Gpu.Sm90*' > $R/va2-tests.txt 2>&1; echo "== va2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/va2-tests.txt | tr '\n' ' ') [$(el) s]"; pack
echo "done [$(el) s]"
