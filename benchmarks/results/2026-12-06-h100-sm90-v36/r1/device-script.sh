#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r1 = the prepared v35 r4. va2 = c01ea8f with the K-split's
# verdict lanes loading their tile records two rounds ahead into alternating buffers (-DNVFP4_SM90_VERDICT_AHEAD=2);
# hd = c01ea8f (HEAD's machine code). hd / va2 in alternation on out and fc2 at M = 16, 32 (the launcher's K-splits)
# and at M = 64 forced to 64x1x1x1x2; then the bits of va2 (Gpu.Sm90*).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry65/va2 ] || tar -xJf build/carry65.tar.xz -C build
B=$PWD/build/carry65; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
tools/sm90-ab $R/ab --bin hd=$B/hd --bin va2=$B/va2 --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 40 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; sed 's/ TFLOP.*cuBLAS-bf16;fc2/ ; fc2/; s/ TFLOP.*cuBLAS-bf16;$//' $R/ab.txt; pack
tools/sm90-ab $R/ab64 --bin hd=$B/hd --bin va2=$B/va2 --rows 64 --rounds 2 --shapes attn_out_proj,mlp_fc2 --sm90-config 64x1x1x1x2 --budget 30 > $R/ab64.txt 2>&1; echo "== ab64 rc $? [$(el) s]"; sed 's/ TFLOP.*cuBLAS-bf16;$//' $R/ab64.txt; pack
timeout 60 $B/va2_tests --gtest_filter='Gpu.Sm90*' > $R/va2-tests.txt 2>&1; echo "== va2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/va2-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/va2-tests.txt | head -5; pack
grep -q H200 $R/device.txt || { echo "not an H200: done [$(el) s]"; exit 0; }
# On an H200: the README's H200 table with HEAD's machine code (hd), launcher's picks, two rounds; the comparison
# columns (sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16 and 128 in round 1.
row() { grep -E ' (sm90|sm90@\S+|cublas-bf16) ' $1 | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'; }
for x in 1 2; do
  for m in 16 128 4096 32 64 96; do
    [ $(el) -lt 480 ] || break
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/hd bench --no-quantizer --rows $m --iters $it --backend $be --commit c01ea8f --out $R/h200-m$m-$x.json > $R/h200-m$m-$x.txt 2>&1
    echo "-- M=$m round $x rc $? [$(el) s]"; row $R/h200-m$m-$x.txt; pack
  done
done
echo "done [$(el) s]"
