#!/bin/bash
# Device call (2026-12-05, nineteenth session): sm90-v27 r6. HEAD 10e225a (`cur`, the kernel of be5ff20): the Python
# package with torch on the GPU (clear_prepared's CUDA test is new) and comfy-kitchen's sources, against cur's CLI;
# then the ring's stage cap swept (NVFP4_SM90_MAX_STAGES 4, 8, 12 against the configuration's own), M = 16 and 32.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/cur ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r6; mkdir -p $R; cp dev16.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results6.tgz -C $OUT r6; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
PYTHONPATH=$PWD/build/carry/py:$PWD/.gpu-deps/comfy_kitchen_py:$PWD/.gpu-deps/python_deps NVFP4_CLI=$PWD/$B/cur timeout 120 \
  python3 -m pytest -rs -q -p no:cacheprovider --junitxml=$R/python-tests.xml python/tests > $R/python-tests.txt 2>&1
echo "== python rc $? $(tail -1 $R/python-tests.txt) $(st)"; grep -E "FAILED|Error" $R/python-tests.txt | head -10; pack
for m in 16 32; do
  line="m$m"
  for s in def 4 8 12; do
    if [ $s = def ]; then unset NVFP4_SM90_MAX_STAGES; else export NVFP4_SM90_MAX_STAGES=$s; fi
    timeout 60 $B/cur bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit be5ff20 --out $R/s$s-m$m.json > $R/s$s-m$m.txt 2>&1
    line="$line | s$s $(grep -E ' sm90 ' $R/s$s-m$m.txt | grep -v pre-pass | awk -F'|' '{print $2}' | tr -s ' ' | sed 's/ us//g' | tr '\n' ' ')"
  done
  unset NVFP4_SM90_MAX_STAGES
  echo "$line $(st)"; pack
done
echo "done $(st)"
