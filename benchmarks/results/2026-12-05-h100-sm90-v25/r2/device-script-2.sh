#!/bin/bash
# Device call (2026-12-05, seventeenth session): sm90-v25 r2, the checks tools/gpu-check makes beside the tests, on
# the carried binary of be435dc (kept): 100 runs of every GPU backend in two processes, compute-sanitizer over the
# sm90 kernels (validate on an odd shape per tile configuration) and over the GPU tests gpu-check sanitizes.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/kept ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r; mkdir -p $R; cp dev2.sh $R/device-script-2.sh
pack() { tar -czf $OUT/results2.tgz -C $OUT r; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
rm -f $R/repeat-hashes.txt
for run in 1 2; do
  NVFP4_REPEAT_HASH_FILE=$R/repeat-hashes.txt timeout 120 $B/kept_tests --gtest_filter=Gpu.EveryBackendGivesIdenticalBitsOnEveryRun:Gpu.Sm90HundredRunsBitIdentical > $R/repeat-$run.txt 2>&1
  echo "== repeat $run rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/repeat-$run.txt | tr '\n' ' ') $(st)"
done
wc -l $R/repeat-hashes.txt; pack
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
san() {  # tool config [env]
  local tool=$1 cfg=$2; shift 2
  env NVFP4_SM90_CONFIG=$cfg "$@" timeout 120 $CS --tool $tool --error-exitcode 9 $B/kept validate --shapes san:200:1000 --rows 300 \
    --candidate sm90,sm90-stream --quiet --out /tmp/san-$tool-$cfg > /tmp/san.txt 2>&1
  local rc=$?
  echo "$tool $cfg $*: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1)" | tee -a $R/compute-sanitizer-sm90.txt
  [ $rc = 0 ] || tail -5 /tmp/san.txt >> $R/compute-sanitizer-sm90.txt
}
for tool in memcheck racecheck; do
  for cfg in 128x2x1x1 128x1x1x1 64x3x1x1 16x4x1x1 128x3x1x2; do san $tool $cfg; done
  san $tool 16x1x1x1x2 NVFP4_SM90_MAX_STAGES=4
  echo "[$tool $(st)]"; pack
done
for tool in memcheck racecheck synccheck; do
  timeout 150 $CS --tool $tool --error-exitcode 9 $B/kept_tests \
    --gtest_filter='Gpu.GemmKernelsFuseBiasAfterAlpha:Gpu.StreamingAProducerEqualsQuantizeThenGemm:Gpu.GemmKernelsOnTheGoldenChains:Gpu.LinearReadsItsStaticInputScaleFromDeviceMemory' > $R/cs-tests-$tool.txt 2>&1
  echo "== $tool tests rc $? $(grep -c '^\[       OK \]' $R/cs-tests-$tool.txt) ok, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/cs-tests-$tool.txt | tail -1) $(st)"
  pack
done
echo "done $(st)"
