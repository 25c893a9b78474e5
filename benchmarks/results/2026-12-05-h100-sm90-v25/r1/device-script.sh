#!/bin/bash
# Device call (2026-12-05, seventeenth session): sm90-v25 r1. Binaries built on the CPU machine, stripped, carried:
#   kept = be435dc (HEAD: the epilogue's bf16 pairs and 16x1x1x1x2 with four stages, never run together before);
#   desc = kept + the wgmma descriptor advanced by a 32-bit add (the commit after this results folder).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r; mkdir -p $R; cp dev.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results.tgz -C $OUT r; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(cat $R/device.txt | tail -1)"
timeout 240 $B/kept_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/kept-suite.txt 2>&1; echo "== kept suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/kept-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/kept-suite.txt | head -20; pack
timeout 60 $B/kept validate > $R/validate-default.txt 2>&1; echo "== validate default rc $? $(tail -2 $R/validate-default.txt | tr '\n' ' ') $(st)"
timeout 60 $B/kept validate --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/v16 > $R/val-m16.txt 2>&1; echo "== validate M=16 rc $? $(grep -o "status: [A-Z]*" $R/val-m16.txt | sort | uniq -c | tr '\n' ' ') $(st)"
timeout 90 $B/desc_tests --gtest_filter='Gpu.Sm90*:Gpu.Linear*' > $R/desc-suite.txt 2>&1; echo "== desc suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/desc-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/desc-suite.txt | head -20; pack
export PYTHONPATH=$PWD/build/carry/py:$PWD/.gpu-deps/comfy_kitchen_py
NVFP4_CLI=$PWD/$B/kept timeout 150 python3 -m pytest -rs -q -p no:cacheprovider --junitxml=$R/python-tests.xml python/tests > $R/python-tests.txt 2>&1; echo "== python rc $? $(tail -1 $R/python-tests.txt) $(st)"
grep -E "FAILED|Error" $R/python-tests.txt | head -10; pack
bench() {  # name binary M iters [extra args]
  local n=$1 b=$2 m=$3 it=$4; shift 4
  timeout 100 $B/$b bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $n "$@" --out $R/$n.json > $R/$n.txt 2>&1; echo "== $n: $(row $R/$n.txt) $(st)"
}
round() {
  local x=$1
  for m in 16 128; do for v in kept desc; do bench m$m-$v-$x $v $m 30; done; done
  for v in kept desc; do bench m4096-$v-$x $v 4096 10; done
  pack
}
round 1
[ $(( $(date +%s) - t0 )) -lt 420 ] && round 2
[ $(( $(date +%s) - t0 )) -lt 470 ] && { timeout 100 $B/kept bench --no-quantizer --rows 16 --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --out $R/m16-all.json > $R/m16-all.txt 2>&1; echo "== m16 all $(st)"; pack; }
echo "done $(st)"
