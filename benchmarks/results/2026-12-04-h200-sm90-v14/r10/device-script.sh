#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r10: K-split ring slots owned by one chunk-sum warpgroup each (stages a multiple of KS, two per warpgroup at least; 32x1x1x1x4 no longer built): validation, ring-check build, times against 1e08936 (base)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h/tests; cp build/carry/tests build/h/tests/nvfp4_tests
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for bin in new rc; do for m in 1 16 32; do
  timeout 25 build/carry/$bin validate --linear out,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vl >$R/real-$bin-m$m.txt 2>&1
  echo "real $bin m$m exit $? $(grep -E '^status' $R/real-$bin-m$m.txt | cut -c1-30) $(grep -m1 'ring check' $R/real-$bin-m$m.txt)"
done; done
for cfg in 16x1x1x1x2 16x1x1x1x3 16x1x1x1x4 32x1x1x1x2 32x1x1x1x3 64x1x1x1x2 64x1x1x1x3; do for m in 16 32; do
  NVFP4_SM90_CONFIG=$cfg timeout 25 build/carry/rc validate --linear out,fc2 --rows $m --candidate sm90 --quiet --out /tmp/vr >$R/rc-$cfg-m$m.txt 2>&1
  echo "rc $cfg m$m exit $? $(grep -E '^status' $R/rc-$cfg-m$m.txt | cut -c1-30) $(grep -m1 'ring check' $R/rc-$cfg-m$m.txt)"
done; done
for cap in 7 9 11; do for cfg in 16x1x1x1x2 16x1x1x1x3 32x1x1x1x2 32x1x1x1x3; do
  NVFP4_SM90_MAX_STAGES=$cap NVFP4_SM90_CONFIG=$cfg timeout 25 build/carry/rc validate --linear out --rows 16 --candidate sm90 --quiet --out /tmp/vc >$R/cap$cap-$cfg.txt 2>&1
  echo "rc cap $cap $cfg exit $? $(grep -E '^status|error' $R/cap$cap-$cfg.txt | cut -c1-60) $(grep -m1 'ring check' $R/cap$cap-$cfg.txt)"
done; done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for cfg in 16x1x1x1x3 32x1x1x1x3; do for tool in racecheck memcheck; do
  NVFP4_SM90_CONFIG=$cfg timeout 90 $CS --tool $tool --error-exitcode 9 build/carry/new validate --shapes wide:5376:1344,odd:1000:1088 --rows 16 --candidate sm90 --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done; done
for run in base new base2 new2; do
  bin=${run%2}
  build/carry/$bin bench --no-quantizer --rows 16 --iters 30 --backend sm90,sm90-stream --shapes out,fc2 --commit $run --out $R/m16-$run.json >$R/m16-$run.txt 2>&1
  echo "== m16 $run"; grep -E "sm90" $R/m16-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
  build/carry/$bin bench --no-quantizer --rows 32 --iters 30 --backend sm90 --shapes out,fc2 --commit $run --out $R/m32-$run.json >$R/m32-$run.txt 2>&1
  echo "== m32 $run"; grep -E "sm90" $R/m32-$run.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done
timeout 240 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:-Gpu.SplitKContractsBitIdenticalToOracle' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure|EveryKSplit" $R/gpu-tests.txt | tail -8
tar -czf $OUT/results.tgz -C $OUT r
