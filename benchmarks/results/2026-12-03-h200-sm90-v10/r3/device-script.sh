#!/usr/bin/env bash
# one-off device call (not committed): the streaming pre-pass's amax in pieces, under PDL
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
B=build/h/bin/nvfp4; O=build/old/nvfp4
[ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 300 build/h/tests/nvfp4_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' >$R/gpu-tests.txt 2>&1; echo "tests exit $?"
grep -E "^\[  (PASSED|FAILED)|FAILED  \]|Failure" $R/gpu-tests.txt | tail -8
for rep in 1 2; do
  for bin in old new; do
    X=$O; [ $bin = new ] && X=$B
    for m in 16 4096 128; do [ $rep = 2 ] && [ $m = 128 ] && continue;
      $X bench --no-quantizer --rows $m --iters 30 --backend sm90,sm90-stream --commit "$bin" --out $R/bench-m$m-$bin-$rep.json >$R/bench-m$m-$bin-$rep.txt 2>&1
      echo "== m$m $bin rep $rep"; grep -E "sm90-stream|sm90 " $R/bench-m$m-$bin-$rep.txt | cut -c1-90
    done
  done
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tc in racecheck:64x1x2x1; do
  tool=${tc%%:*}; cfg=${tc#*:}
  NVFP4_SM90_CONFIG=$cfg timeout 150 $CS --tool $tool --error-exitcode 9 $B validate --shapes san:200:1000 --rows 150 --candidate sm90-stream --quiet --out /tmp/san >/tmp/san.txt 2>&1
  echo "$tool $cfg: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/sanitize.txt
done
tar -czf $OUT/results.tgz -C $OUT r
