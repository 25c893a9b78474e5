#!/bin/bash
# Device call (2026-12-06, thirty-third session): sm90-v38 r3. a3 = 07237d8's kernel (r2's a3); a3sw2 = a3 with
# -DNVFP4_SM90_KS_STAGE_WARPS=2 (two warps take every multi-chunk K-split stage in turn, the four-chunk ones of 8-16 tokens
# too: v37 r3 found that 2-4 % slower there when a stage was eight copies, now five), a3sw2_tests its tests; ta3d = r1's
# trace build (the same kernel as a3 with -DNVFP4_SM90_TRACE). On an H200 first: the README's H200 table on a3 (two
# rounds) and the comparison columns at M = 16, 128. Then: a3's K-split configurations at M = 8, 16 in one process each
# (16x1x1x1x2 / x3 / x4, out and fc2); a3 / a3sw2 at M = 16, 8 (two rounds); a3sw2's Gpu.Sm90*; a trace of 32x1x1x1x3.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry77/a3 ] || tar -xJf build/carry77.tar.xz -C build
B=$PWD/build/carry77; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
if grep -q H200 $R/device.txt; then
  tools/sm90-ab $R/tab --bin a3=$B/a3 --rows 16,128,4096,32,64 --rounds 2 --budget 260 --timeout 60 > $R/tab.txt 2>&1; echo "== tab rc $? [$(el) s]"
  python3 tools/bench-compare $R/tab --markdown a3 > $R/tab-markdown.txt 2>&1; cat $R/tab-markdown.txt; pack
  for m in 16 128; do
    timeout 60 $B/a3 bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit 07237d8 --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"; pack
  done
fi
for m in 16 8; do
  timeout 60 $B/a3 bench --no-quantizer --rows $m --iters 30 --backend sm90 --sm90-config 16x1x1x1x2,16x1x1x1x3,16x1x1x1x4 --shapes attn_out_proj,mlp_fc2 --commit 07237d8 --out $R/cfg-m$m.json > $R/cfg-m$m.txt 2>&1; echo "== configs M=$m rc $? [$(el) s]"; grep -E "us \|" $R/cfg-m$m.txt | sed 's/ TFLOP.*GB\/s//' | head -8; pack
done
tools/sm90-ab $R/ab --bin a3=$B/a3 --bin a3sw2=$B/a3sw2 --rows 16,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"
python3 tools/bench-compare $R/ab --base a3 > $R/ab/compare.txt 2>&1; cat $R/ab/compare.txt; pack
timeout 60 $B/a3sw2_tests --gtest_filter='Gpu.Sm90*' > $R/a3sw2-tests.txt 2>&1; echo "== a3sw2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/a3sw2-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/a3sw2-tests.txt | head -4; pack
NVFP4_SM90_TRACE_OUT=$R/trace-m32-32x1x1x1x3.txt timeout 30 $B/ta3d bench --no-quantizer --rows 32 --iters 3 --warmup 1 --backend sm90 --sm90-config 32x1x1x1x3 --shapes attn_out_proj --commit ta3d > $R/trace-m32-32x1x1x1x3.run.txt 2>&1
python3 tools/sm90-trace-summary $R/trace-m32-32x1x1x1x3.txt > $R/trace-m32-32x1x1x1x3-summary.txt 2>&1; grep -E "ns/chunk|->" $R/trace-m32-32x1x1x1x3-summary.txt | head -14; pack
echo "done [$(el) s]"
