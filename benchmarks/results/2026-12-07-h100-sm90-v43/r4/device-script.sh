#!/bin/bash
# Device call (2026-12-07, thirty-seventh session): sm90-v43 r4. fin = b9b6ac2's build (c5f0238's kernel: one slot wait and
# arrival per four-chunk K-split stage), fin_tests its tests: every GPU test, validate (default; M = 1, 8, 16, 32), racecheck
# and memcheck of the whole-stage test on the four-chunk configurations, then every linear at M = 16 and 8, two rounds
# (the baselines in round 1 at M = 16).
set -u; TOTAL=${1:-420}
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry102/fin ] || tar -xJf build/carry102.tar.xz -C build
B=$PWD/build/carry102; R=$OUT/r4; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 240 $B/fin_tests --gtest_filter='Gpu.*' --gtest_output=json:$R/gpu-tests.json > $R/gpu-tests.txt 2>&1; echo "== Gpu.* rc $? $(grep -E '^\[  (PASSED|FAILED|SKIPPED)' $R/gpu-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED' $R/gpu-tests.txt | head -8; pack
(cd build/h && timeout 90 $B/fin validate --out /tmp/vdef > $R/validate-default.txt 2>&1; echo "== validate (default) rc $? $(grep -o 'status: [A-Z]*' $R/validate-default.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]")
for m in 1 8 16 32; do timeout 60 $B/fin validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/validate-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/validate-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
for t in racecheck memcheck; do
  [ $(el) -gt $(( TOTAL - 200 )) ] && break
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,16x1x1x1x4 timeout 150 compute-sanitizer --tool $t $B/fin_tests --gtest_filter='Gpu.Sm90KSplitWholeAndPartialStagesAndShortSlotGroups' > $R/fin-$t.txt 2>&1
  echo "== fin $t rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/fin-$t.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack
done
T=$R/table; mkdir -p $T
for x in 1 2; do
  for m in 16 8; do
    [ $(el) -gt $(( TOTAL - 30 )) ] && break
    be=sm90; [ $x = 1 ] && [ $m = 16 ] && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    timeout 60 $B/fin bench --no-quantizer --rows $m --iters 30 --backend $be --commit b9b6ac2 --out $T/fin-m$m-$x.json > $T/fin-m$m-$x.txt 2>&1
    echo "fin-m$m-$x rc $?: $(grep -E ' sm90 ' $T/fin-m$m-$x.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2}' | tr -s ' ' | tr '\n' ';') [$(el) s]"
  done; pack
done
echo "done [$(el) s]"
