#!/bin/bash
# Device call (2026-12-06, twenty-ninth session): sm90-v35 r1. Binaries: t96l = f3d3ed7's CLI with 96x3x1x1 built
# (three consumer warpgroups of 96 tokens at 160 registers, the producer at 24) and picked by the launcher at M = 65-96
# where the row blocks take one round of three warpgroups but not of two (attn_qkv_proj); t96l_tests its test binary
# (the every-configuration tests include 96x3x1x1). r1: t96l's bits (Gpu.Sm90*, every sm90 GPU test; validate with the launcher's picks
# at M = 96, 80, 65 on qkv and fc1); qkv at M = 96, 80, 72, 65 and fc1 at 96 on 96x2x1x1 against 96x3x1x1 in one process
# (reversed in the second pass); memcheck and racecheck of the bf16-output test on 48x1x1x1 and 96x3x1x1. On an H200
# also the README's H200 table: t96l with the launcher's picks (f3d3ed7's at these M) at M = 16, 32, 64, 128, 4096, and
# the comparison columns (sm90-stream, ComfyUI's Hopper path, FP8 cuBLASLt) at M = 16 and 128.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry61/t96l ] || tar -xJf build/carry61.tar.xz -C build
B=$PWD/build/carry61; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/t96l_tests --gtest_filter='Gpu.Sm90*' > $R/t96-tests.txt 2>&1; echo "== tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t96-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/t96-tests.txt | head -8
b() {  # name rows shapes configs iters
  timeout 90 $B/t96l bench --no-quantizer --backend sm90 --rows $2 --shapes $3 --sm90-config $4 --iters ${5:-30} \
    --commit t96l --out $R/$1.json > $R/$1.txt 2>&1
  echo "-- $1 rc $? [$(el) s]"; grep -F ' sm90@' $R/$1.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'
}
for p in 1 2; do
  Q=96x2x1x1,96x3x1x1; [ $p = 2 ] && Q=96x3x1x1,96x2x1x1
  for m in 96 80 72 65; do b qkv-$m-$p $m attn_qkv_proj $Q; done
  b fc1-96-$p 96 mlp_fc1 $Q
done
for m in 96 80 65; do timeout 60 $B/t96l validate --rows $m --linear qkv,fc1 --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
for tool in memcheck racecheck; do
  NVFP4_TEST_SM90_CONFIGS=48x1x1x1,96x3x1x1 timeout 150 compute-sanitizer --tool $tool $B/t96l_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/t96-$tool.txt 2>&1; echo "== $tool rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|PASSED|FAILED' $R/t96-$tool.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done
if grep -q H200 $R/device.txt; then
  for m in 16 128 4096 32 64; do
    [ $(el) -lt 400 ] || break
    timeout 60 $B/t96l bench --no-quantizer --backend sm90 --rows $m --iters 30 --commit t96l --out $R/h200-m$m.json > $R/h200-m$m.txt 2>&1
    echo "-- h200 M=$m rc $? [$(el) s]"; grep -F ' sm90@' $R/h200-m$m.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'
  done
  for m in 16 128; do
    [ $(el) -lt 440 ] || break
    timeout 60 $B/t96l bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit t96l --out $R/cols-m$m.json > $R/cols-m$m.txt 2>&1; echo "== cols M=$m rc $? [$(el) s]"
  done
fi
echo "done [$(el) s]"
