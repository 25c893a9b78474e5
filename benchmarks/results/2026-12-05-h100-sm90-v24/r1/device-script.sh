#!/bin/bash
# Device call (2026-12-05, sixteenth session): sm90-v24 r1. Binaries built on the CPU machine, stripped, carried:
#   kept = 888328d (ef199f3 + the device input scale of linear; the GEMM's code unchanged); epi2 = kept + epi2-bf16-pairs-not-run.diff (v23).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r; mkdir -p $R; cp dev.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results.tgz -C $OUT r; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
timeout 200 $B/epi2_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/epi2-suite.txt 2>&1; echo "== epi2 suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/epi2-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure|Bf16Pair' $R/epi2-suite.txt | head -20; pack
timeout 150 $B/kept_tests --gtest_filter='Gpu.*:DeviceApi.*' > $R/kept-suite.txt 2>&1; echo "== kept suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/kept-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/kept-suite.txt | head -20
timeout 60 compute-sanitizer --tool memcheck --error-exitcode 9 $B/kept_tests --gtest_filter='Gpu.LinearReadsItsStaticInputScaleFromDeviceMemory' > $R/memcheck-linear-scale.txt 2>&1; echo "== memcheck rc $? $(grep 'ERROR SUMMARY' $R/memcheck-linear-scale.txt) $(st)"; pack
bench() {  # name binary M iters [extra args]
  local n=$1 b=$2 m=$3 it=$4; shift 4
  timeout 100 $B/$b bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $n "$@" --out $R/$n.json > $R/$n.txt 2>&1; echo "== $n: $(row $R/$n.txt) $(st)"
}
round() {
  local x=$1
  for v in kept epi2; do bench m16-$v-$x $v 16 30; done
  NVFP4_SM90_MAX_STAGES=4 bench m16-ks2s4-$x kept 16 30 --shapes out,fc2 --sm90-config 16x1x1x1x2
  for v in kept epi2; do bench m64-$v-$x $v 64 30; done
  for v in kept epi2; do bench m128-$v-$x $v 128 30; done
  for v in kept epi2; do bench m4096-$v-$x $v 4096 10; done
  pack
}
export PYTHONPATH=$PWD/build/carry/py:$PWD/.gpu-deps/comfy_kitchen_py
NVFP4_CLI=$PWD/$B/kept timeout 200 python3 -m pytest -rs -q -p no:cacheprovider --junitxml=$R/python-tests.xml python/tests > $R/python-tests.txt 2>&1; echo "== python rc $? $(tail -1 $R/python-tests.txt) $(st)"
grep -E "FAILED|Error" $R/python-tests.txt | head -10; pack
NVFP4_SM90_CONFIG=16x1x1x1x2 NVFP4_SM90_MAX_STAGES=4 timeout 60 $B/kept validate --linear out,fc2 --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/vks > $R/val-ks2s4.txt 2>&1; echo "== validate ks2s4 rc $? $(grep -o "status: [A-Z]*" $R/val-ks2s4.txt | sort | uniq -c | tr '\n' ' ') $(st)"
NVFP4_SM90_CONFIG=16x1x1x1x2 NVFP4_SM90_MAX_STAGES=4 timeout 120 compute-sanitizer --tool racecheck --error-exitcode 9 $B/kept validate --shapes ks:1000:7168 --rows 16 --candidate sm90 --quiet --out /tmp/vkr > $R/racecheck-ks2s4.txt 2>&1; echo "== racecheck ks2s4 rc $? $(grep -E 'RACECHECK SUMMARY' $R/racecheck-ks2s4.txt) $(st)"
pack
round 1
[ $(( $(date +%s) - t0 )) -lt 330 ] && round 2
echo "done $(st)"
