#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v42 r2. hd = HEAD 04e0474's build (its sm90 GEMM's SASS is
# r1's kp2c's in all 30 configurations): every GPU test, `nvfp4 validate` (default) and at M = 17, 24, 32 on every
# linear, then the H100 table (every linear at M = 16, 32, 64, 128, 4096, two rounds; the baselines at 16 / 128),
# then racecheck of the two-chunk K-split configurations.
set -u; TOTAL=${1:-480}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry98/hd ] || tar -xJf build/carry98.tar.xz -C build
B=$PWD/build/carry98; R=$OUT/r2; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 240 $B/hd_tests --gtest_filter='Gpu.*' --gtest_output=json:$R/gpu-tests.json > $R/gpu-tests.txt 2>&1; echo "== Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/gpu-tests.txt | head -8; pack
(cd build/h && timeout 90 $B/hd validate --out /tmp/vdef > $R/validate-default.txt 2>&1; echo "== validate (default) rc $? $(grep -o 'status: [A-Z]*' $R/validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]")
for m in 17 24 32; do timeout 60 $B/hd validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/validate-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/validate-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
T=$R/table; mkdir -p $T
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2 "|" $NF}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //;s/ x cuBLAS-bf16//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for m in 16 32 64 128 4096; do
    [ $(el) -gt $(( TOTAL - 90 )) ] && break
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/hd bench --no-quantizer --rows $m --iters $it --backend $be --commit 04e0474 --out $T/hd-m$m-$x.json > $T/hd-m$m-$x.txt 2>&1
    echo "hd-m$m-$x rc $?: $(row $T/hd-m$m-$x.txt) [$(el) s]"
  done; pack
done
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 60 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=32x1x1x1x2,32x1x1x1x3 timeout 60 compute-sanitizer --tool $t $B/hd_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/hd-$t.txt 2>&1
  echo "== hd $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/hd-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
echo "done [$(el) s]"
