#!/bin/bash
# Device call (2026-12-06, thirty-second session): on an H200 first the README's H200 table with fin (4f8772d's CLI;
# the table is v28's), then sm90-v36 r7 as prepared (benchmarks/results/2026-12-06-h100-sm90-v36/r7/device-script-not-run.sh):
# fin = 4f8772d's CLI; ks2 = 4f8772d's kernel with -DNVFP4_SM90_KS_STAGE_CHUNKS=2; out and fc2 at M = 64 and 48 on the
# launcher's lone 64x1x1x1 / 48x1x1x1 and the forced 64x1x1x1x2 / x3, each binary in one process; 32x1x1x1x2 / x3 with
# fin (r7 had asked for x4, which is not built); the bits of ks2.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry71/ks2 ] || tar -xJf build/carry71.tar.xz -C build
B=$PWD/build/carry71; R=$OUT/r1; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results1.tgz -C $OUT r1; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
row() { grep -E ' (sm90|sm90@\S+|cublas-bf16) ' $1 | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}'; }
if grep -q H200 $R/device.txt; then
  for m in 16 128 4096 32 64 96; do
    it=30; [ $m = 4096 ] && it=10
    be=sm90; { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 90 $B/fin bench --no-quantizer --rows $m --iters $it --backend $be --commit 4f8772d --out $R/h200-m$m-1.json > $R/h200-m$m-1.txt 2>&1
    echo "-- H200 M=$m rc $? [$(el) s]"; row $R/h200-m$m-1.txt; pack
  done
fi
cfgrun() {  # binary M configurations
  timeout 90 $B/$1 bench --no-quantizer --rows $2 --iters 30 --backend sm90 --sm90-config $3 --shapes attn_out_proj,mlp_fc2 --commit $1 --out $R/cfg-$1-m$2.json > $R/cfg-$1-m$2.txt 2>&1
  echo "-- $1 M=$2 rc $? [$(el) s]"; grep -E "sm90@" $R/cfg-$1-m$2.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}' | tr -s ' '
}
for b in fin ks2; do cfgrun $b 64 64x1x1x1,64x1x1x1x2,64x1x1x1x3; cfgrun $b 48 48x1x1x1,64x1x1x1x2,64x1x1x1x3; pack; done
cfgrun fin 32 32x1x1x1x2,32x1x1x1x3; pack
timeout 60 $B/ks2_tests --gtest_filter='Gpu.Sm90*' > $R/ks2-tests.txt 2>&1; echo "== ks2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/ks2-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/ks2-tests.txt | head -5; pack
echo "done [$(el) s]"
