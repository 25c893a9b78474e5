#!/bin/bash
# Device call (2026-12-05, twentieth session): sm90-v28 r4. HEAD de0d606's kernel (`fin`): the Python package with torch
# on the GPU and comfy-kitchen's sources, against fin's CLI.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r4; mkdir -p $R; cp dev20.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
PYTHONPATH=$PWD/build/carry/py:$PWD/.gpu-deps/comfy_kitchen_py:$PWD/.gpu-deps/python_deps NVFP4_CLI=$PWD/$B/fin timeout 120 \
  python3 -m pytest -rs -q -p no:cacheprovider --junitxml=$R/python-tests.xml python/tests > $R/python-tests.txt 2>&1
echo "== python rc $? $(tail -1 $R/python-tests.txt) [$(el) s]"; grep -E "FAILED|Error" $R/python-tests.txt | head -10; pack
echo "done [$(el) s]"
