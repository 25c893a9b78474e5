#!/usr/bin/env bash
# one-off device call (not committed): the K-split applier taking verdicts from the slots
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
B=build/h/bin/nvfp4; O=build/old/nvfp4
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
for cfg in 16x1x1x1x2 16x1x1x1x3 16x1x1x1x4 32x1x1x1x2 32x1x1x1x4 64x1x1x1x2 64x1x1x1x3; do
  NVFP4_SM90_CONFIG=$cfg timeout 30 $B validate --shapes smoke:200:1000 --rows 300 --candidate sm90,sm90-stream --quiet --out /tmp/sm-$cfg >/tmp/sm.txt 2>&1
  echo "smoke $cfg: exit $?" | tee -a $R/smoke.txt
done
timeout 300 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]" $R/gpu-tests.txt | tail -8
for rep in 1 2; do
  for bin in old new; do
    X=$O; [ $bin = new ] && X=$B
    for m in 16 32; do
      $X bench --no-quantizer --rows $m --shapes out,fc2 --iters 50 --backend sm90 --sm90-config ${m}x1x1x1x2,${m}x1x1x1x3,${m}x1x1x1x4,${m}x1x1x1 \
        --commit "$bin" --out $R/bench-m$m-$bin-$rep.json >$R/bench-m$m-$bin-$rep.txt 2>&1
      echo "== m$m $bin rep $rep"; grep "|" $R/bench-m$m-$bin-$rep.txt | cut -c1-140
    done
  done
done
$B bench --no-quantizer --rows 16 --iters 30 --backend sm90,sm90-stream,comfy-hopper,cublas-fp8 --commit new --out $R/bench-m16-launcher.json >$R/bench-m16-launcher.txt 2>&1
echo "== m16 launcher"; grep -E "\|" $R/bench-m16-launcher.txt | cut -c1-150 | head -30
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:16x1x1x1x2 memcheck:16x1x1x1x2 racecheck:32x1x1x1x4; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 150 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000 --rows 40 --candidate sm90,sm90-stream --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
tar -czf $OUT/results.tgz -C $OUT r
