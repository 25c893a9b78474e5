#!/usr/bin/env bash
# one-off device call (not committed): sm120p-v6 r1: the memory-path proxy under split-K contracts (nvfp4 bench --contract), M = 128, every seed shape
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 200 build/h/tests/nvfp4_tests --gtest_filter='Gpu.MemoryPathProxy*:Gpu.PipelinedKernel*:Gpu.*Contract*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ')"
for rep in 1 2; do for c in sequential split_k:2:grain=256:cublas:fp32 split_k:3:grain=256:cublas:fp32 split_k:4:grain=256:cublas:fp32; do
  n=$(echo $c | cut -d: -f1-2 | tr ':' '-')
  timeout 90 build/carry/new bench --no-quantizer --rows 128 --iters 30 --backend sm120p-proxy --contract $c --commit 23a8a75+contract --out $R/proxy-$n-$rep.json >$R/proxy-$n-$rep.txt 2>&1
  echo "== $c ($rep)"; grep -E "weight stream" $R/proxy-$n-$rep.txt | cut -c1-34,52-140
done; done
tar -czf $OUT/results.tgz -C $OUT r
