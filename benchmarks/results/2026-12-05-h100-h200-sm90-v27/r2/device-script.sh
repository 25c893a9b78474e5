#!/bin/bash
# Device call (2026-12-05, nineteenth session): sm90-v27 r2. `mult` (e838218): compute-sanitizer memcheck and racecheck
# per tile configuration (validate of a 200x1000 linear at M = 300, sm90 and sm90-stream), then the Python package of
# this tree with torch on the GPU and comfy-kitchen's sources, against mult's CLI.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/mult ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r2; mkdir -p $R; cp dev12.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
export PYTHONPATH=$PWD/build/carry/py:$PWD/.gpu-deps/comfy_kitchen_py:$PWD/.gpu-deps/python_deps
NVFP4_CLI=$PWD/build/carry/mult timeout 150 python3 -m pytest -rs -q -p no:cacheprovider --junitxml=$R/python-tests.xml python/tests > $R/python-tests.txt 2>&1; echo "== python rc $? $(tail -1 $R/python-tests.txt) $(st)"
grep -E "FAILED|Error" $R/python-tests.txt | head -10; pack
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  for cfg in 16x3x1x1 16x1x1x1x2 128x2x1x1 128x1x1x1 64x3x1x1 16x4x1x1 128x3x1x2 32x1x1x1x3 256x2x1x2; do
    [ $(( $(date +%s) - t0 )) -lt 540 ] || break
    NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B/mult validate --shapes san:200:1000 --rows 300 \
      --candidate sm90,sm90-stream --out /tmp/dsan-$tool-$cfg > /tmp/san.txt 2>&1
    rc=$?; echo "$tool $cfg: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1), $(grep -o 'status: [A-Z]*' /tmp/san.txt | head -1) $(st)" | tee -a $R/mult-compute-sanitizer.txt
    [ $rc = 0 ] || tail -5 /tmp/san.txt >> $R/mult-compute-sanitizer.txt
  done
  pack
done
echo "done $(st)"
