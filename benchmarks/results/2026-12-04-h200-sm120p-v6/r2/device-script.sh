#!/usr/bin/env bash
# one-off device call (not committed): sm120p-v6 r2: the split-K merge without the fp32 copy, the shared tensor-map encoder (versioned entry point), and the memory-path proxy under split-K contracts (nvfp4 bench --contract), M = 128
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
timeout 240 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-tests.txt | tr '\n' ' ')"
grep -E "FAILED  \]|Failure" $R/gpu-tests.txt | head -5
timeout 60 build/carry/new validate --linear out,fc2 --rows 16 --candidate sm90,sm90-stream,sm120p-emulated --quiet --out /tmp/v >$R/val-m16.txt 2>&1; echo "val m16 exit $? $(grep -E '^status' $R/val-m16.txt | cut -c1-40)"
timeout 90 build/carry/new validate --linear out,fc2 --rows 128 --candidate sm120p-emulated@split_k:3:grain=256:cublas:fp32,sm120p-emulated@split_k:2:grain=128:cutlass:bf16_serial --quiet --out /tmp/v2 >$R/val-m128-splitk.txt 2>&1; echo "val m128 split-k exit $? $(grep -E '^status' $R/val-m128-splitk.txt | cut -c1-40)"
for rep in 1 2; do for c in sequential split_k:2:grain=256:cublas:fp32 split_k:3:grain=256:cublas:fp32 split_k:4:grain=256:cublas:fp32; do
  n=$(echo $c | cut -d: -f1-2 | tr ':' '-')
  timeout 90 build/carry/new bench --no-quantizer --rows 128 --iters 30 --backend sm120p-proxy --contract $c --commit 23a8a75+r2 --out $R/proxy-$n-$rep.json >$R/proxy-$n-$rep.txt 2>&1
  echo "== $c ($rep)"; grep -E "weight stream|error" $R/proxy-$n-$rep.txt | cut -c1-34,52-140
done; done
tar -czf $OUT/results.tgz -C $OUT r
