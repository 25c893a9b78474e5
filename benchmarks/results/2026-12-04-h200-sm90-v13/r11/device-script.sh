#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r11: review clean-up (the K-split copy thread's dead record code and row-tile generality removed; probes share the tensor-map encoder) against c4cf0ed (kept)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
timeout 400 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -5
for cfg in 16x1x1x1x2 16x1x1x1x3 16x1x1x1x4 32x1x1x1x2 32x1x1x1x3 32x1x1x1x4; do
  NVFP4_SM90_CONFIG=$cfg timeout 100 $B validate --shapes odd:1000:1088,san:200:1000,k2:200:100 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v-$cfg >$R/smoke-$cfg.txt 2>&1
  echo "smoke $cfg exit $? $(tail -2 $R/smoke-$cfg.txt | head -1 | cut -c1-60)"
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:16x1x1x1x3 memcheck:32x1x1x1x2; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000,k2:200:100 --rows 150 --candidate sm90 --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
for m in 16 32; do for bin in kept new; do
  build/carry/$bin bench --no-quantizer --rows $m --iters 30 --backend sm90 --shapes out,fc2 --commit $bin --out $R/ks-m$m-$bin.json >$R/ks-m$m-$bin.txt 2>&1
  echo "== m$m $bin"; grep -E "sm90" $R/ks-m$m-$bin.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done; done
PROBE_ONLY="a=bulk G=4 stages=8 block-major" timeout 60 build/carry/probe 20 > $R/copy-probe.txt 2>&1; echo "probe exit $?"; tail -4 $R/copy-probe.txt
tar -czf $OUT/results.tgz -C $OUT r
