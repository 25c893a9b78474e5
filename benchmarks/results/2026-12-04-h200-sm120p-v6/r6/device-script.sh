#!/usr/bin/env bash
# one-off device call (not committed): sm120p-v6 r6: split-K contracts on the device-pointer path (DeviceLinear/DeviceMatmul::contract, Python contract= on CUDA tensors, auto picks a kernel that runs the contract); GPU suite, then the Python package built here with torch
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 150 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ')"
grep -E "FAILED  \]|Failure|SplitKContracts|DeviceEntry" $R/gpu-tests.txt | head -8
export PYTHONPATH=$PWD/.gpu-deps/python_deps:$PWD/.gpu-deps/comfy_kitchen_py
python3 -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__)" | tee $R/python-env.txt
B=/tmp/pyb
( timeout 400 cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVFP4_CUDA_GENCODE=90a -DNVFP4_BUILD_TESTS=OFF -DNVFP4_BUILD_BENCH=OFF -DNVFP4_PYTHON=ON >$R/py-build.txt 2>&1 &&
  timeout 400 cmake --build $B -j16 >>$R/py-build.txt 2>&1 ); echo "py build exit $?"; tail -3 $R/py-build.txt
PYTHONPATH=$B/python:$PYTHONPATH NVFP4_CLI=$B/bin/nvfp4 timeout 240 python3 -m pytest -q -rs -p no:cacheprovider python/tests >$R/pytest.txt 2>&1; echo "pytest exit $?"; tail -6 $R/pytest.txt; grep -E "FAILED|Error" $R/pytest.txt | head -10
tar -czf $OUT/results.tgz -C $OUT r
