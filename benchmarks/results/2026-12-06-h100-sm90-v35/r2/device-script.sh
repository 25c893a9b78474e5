#!/bin/bash
# Device call (2026-12-06, thirtieth session): sm90-v35 r2, asked of an H200. hd = c01ea8f's CLI (96x3x1x1 picked for
# attn_qkv_proj at M = 65-96), hd_tests its test binary. The sm90 GPU tests; the README's H200 table with the launcher's
# picks at M = 16, 128, 4096, 32, 64, 96 (30 runs, 10 at 4096), two rounds, the comparison columns (sm90-stream,
# ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16 and 128 in round 1; then every GPU test and `validate` while time is left.
# First, on any machine: tr = c01ea8f's kernel with -DNVFP4_SM90_TRACE: traces of attn_out_proj at M = 64 on the lone
# 64x1x1x1 and the K-splits 64x1x1x1x2 / x3 (what paces a K-split at 64 tokens: its chunk-sum warpgroups or its applier).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry63/hd ] || tar -xJf build/carry63.tar.xz -C build
B=$PWD/build/carry63; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/hd_tests --gtest_filter='Gpu.Sm90*' > $R/sm90-tests.txt 2>&1; echo "== Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/sm90-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/sm90-tests.txt | head -8; pack
for c in 64x1x1x1 64x1x1x1x2 64x1x1x1x3; do
  NVFP4_SM90_TRACE_OUT=$R/trace-m64-$c.txt timeout 60 $B/tr bench --no-quantizer --rows 64 --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit tr > $R/trace-m64-$c.run.txt 2>&1
  echo "== trace $c rc $?"; python3 tools/sm90-trace-summary $R/trace-m64-$c.txt $( [ -f $R/trace-m64-$c.txt.wg ] && echo $R/trace-m64-$c.txt.wg ) > $R/trace-m64-$c-summary.txt 2>&1; head -24 $R/trace-m64-$c-summary.txt
done; pack
if ! grep -q H200 $R/device.txt; then
  timeout 150 $B/hd_tests --gtest_filter='Gpu.*' > $R/gpu-tests.txt 2>&1; echo "== Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; pack
  timeout 90 $B/hd validate --out /tmp/v > $R/validate.txt 2>&1; echo "== validate rc $? $(grep -o 'status: [A-Z]*' $R/validate.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
  echo "not an H200: done [$(el) s]"; exit 0
fi
row() { grep -E ' (sm90|sm90@\S+|cublas-bf16) ' $1 | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'; }
for x in 1 2; do
  for m in 16 128 4096 32 64 96; do
    [ $(el) -lt 420 ] || break
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/hd bench --no-quantizer --rows $m --iters $it --backend $be --commit c01ea8f --out $R/h200-m$m-$x.json > $R/h200-m$m-$x.txt 2>&1
    echo "-- M=$m round $x rc $? [$(el) s]"; row $R/h200-m$m-$x.txt; pack
  done
done
if [ $(el) -lt 440 ]; then
  timeout 100 $B/hd_tests --gtest_filter='Gpu.*' > $R/gpu-tests.txt 2>&1; echo "== Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; pack
fi
if [ $(el) -lt 480 ]; then
  timeout 60 $B/hd validate --out /tmp/v > $R/validate.txt 2>&1; echo "== validate rc $? $(grep -o 'status: [A-Z]*' $R/validate.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
fi
echo "done [$(el) s]"; pack
