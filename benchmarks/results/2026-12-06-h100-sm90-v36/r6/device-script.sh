#!/bin/bash
# Device call (2026-12-06, thirty-first session): sm90-v36 r6. fin = 4f8772d's CLI (the K-split verdict lanes' records
# as loaded words, lane copies for four-chunk stages, 16x1x1x1x3 at M <= 16; its sm90 kernel has the machine code of
# r5's lc4 in all 30 configurations), fin_tests its tests; hd = c01ea8f. Every GPU test; `validate` (its default) and
# out / fc2 at M = 1, 8, 16, 32 (the launcher's K-splits); memcheck and racecheck of the bf16-output test on the three
# K-split configurations the launcher and r3 use; hd / fin on out and fc2 at M = 16, 32, 8; traces of tfin (fin with
# -DNVFP4_SM90_TRACE) on 16x1x1x1x3 and 32x1x1x1x3. On an H200, then the README's H200 table with fin.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry70/fin ] || tar -xJf build/carry70.tar.xz -C build
B=$PWD/build/carry70; R=$OUT/r6; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results6.tgz -C $OUT r6; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
timeout 150 $B/fin_tests --gtest_filter='Gpu.*' > $R/gpu-tests.txt 2>&1; echo "== fin Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/gpu-tests.txt | head -5; pack
timeout 90 $B/fin validate --out /tmp/v > $R/validate.txt 2>&1; echo "== fin validate (default) rc $? $(grep -o 'status: [A-Z]*' $R/validate.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
for m in 1 8 16 32; do timeout 60 $B/fin validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== fin validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
for tool in racecheck memcheck; do
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,32x1x1x1x3,64x1x1x1x2 timeout 150 compute-sanitizer --tool $tool $B/fin_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/$tool.txt 2>&1; echo "== $tool rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/$tool.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
tools/sm90-ab $R/ab --bin hd=$B/hd --bin fin=$B/fin --rows 16,32,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 60 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; pack
for c in 16x1x1x1x3 32x1x1x1x3; do
  m=${c%%x*}; NVFP4_SM90_TRACE_OUT=$R/trace-tfin-m$m-$c.txt timeout 60 $B/tfin bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit tfin > /dev/null 2>&1
  echo "== trace tfin $c rc $?"; python3 tools/sm90-trace-summary $R/trace-tfin-m$m-$c.txt > $R/trace-tfin-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk|median" $R/trace-tfin-m$m-$c-summary.txt | head -14
done; pack
grep -q H200 $R/device.txt || { echo "not an H200: done [$(el) s]"; exit 0; }
row() { grep -E ' (sm90|sm90@\S+|cublas-bf16) ' $1 | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'; }
for x in 1 2; do
  for m in 16 128 4096 32 64 96; do
    [ $(el) -lt 300 ] || break
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/fin bench --no-quantizer --rows $m --iters $it --backend $be --commit 4f8772d --out $R/h200-m$m-$x.json > $R/h200-m$m-$x.txt 2>&1
    echo "-- M=$m round $x rc $? [$(el) s]"; row $R/h200-m$m-$x.txt; pack
  done
done
echo "done [$(el) s]"
