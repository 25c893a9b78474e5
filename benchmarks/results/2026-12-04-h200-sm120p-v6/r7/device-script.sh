#!/usr/bin/env bash
# one-off device call (not committed): sm120p-v6 r7: review clean-up (the split-K merge inside launch_gemm_kernel, one contract-capability predicate): GPU suite with the contract tests, the Python package with torch, a split-K proxy row
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 200 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:Contract*' >$R/gpu-tests.txt 2>&1; echo "tests exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ')"
grep -E "FAILED  \]|Failure" $R/gpu-tests.txt | head -5
timeout 60 build/carry/new bench --no-quantizer --rows 128 --iters 10 --backend sm120p-proxy,sm120p-emulated --shapes fc2 --contract split_k:3:grain=256:cublas:fp32 >$R/bench-splitk.txt 2>&1; echo "bench exit $?"; grep -E "sm120p|error" $R/bench-splitk.txt | cut -c1-130
export PYTHONPATH=$PWD/.gpu-deps/python_deps:$PWD/.gpu-deps/comfy_kitchen_py
B=/tmp/pyb
( timeout 300 cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=Release -DNVFP4_CUDA_GENCODE=90a -DNVFP4_BUILD_TESTS=OFF -DNVFP4_BUILD_BENCH=OFF -DNVFP4_PYTHON=ON >$R/py-build.txt 2>&1 &&
  timeout 300 cmake --build $B -j16 >>$R/py-build.txt 2>&1 ); echo "py build exit $?"
PYTHONPATH=$B/python:$PYTHONPATH NVFP4_CLI=$B/bin/nvfp4 timeout 200 python3 -m pytest -q -rs -p no:cacheprovider python/tests >$R/pytest.txt 2>&1; echo "pytest exit $?"; tail -3 $R/pytest.txt; grep -E "^FAILED|Error" $R/pytest.txt | head -5
tar -czf $OUT/results.tgz -C $OUT r
