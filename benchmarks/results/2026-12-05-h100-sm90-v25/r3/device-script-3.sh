#!/bin/bash
# Device call (2026-12-05, seventeenth session): sm90-v25 r3, the desc binary (the commit's GEMM): its full GPU suite,
# validate, compute-sanitizer per tile configuration, and the 100-run check in two processes.
set -u
B=build/carry; R=$OUT/r; mkdir -p $R; cp dev3.sh $R/device-script-3.sh
pack() { tar -czf $OUT/results3.tgz -C $OUT r; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
timeout 240 $B/desc_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/desc-full-suite.txt 2>&1; echo "== desc full suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/desc-full-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/desc-full-suite.txt | head; pack
timeout 60 $B/desc validate > $R/desc-validate-default.txt 2>&1; echo "== desc validate default rc $? $(tail -1 $R/desc-validate-default.txt) $(st)"
for m in 16 64 128 333; do timeout 60 $B/desc validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/desc-val-m$m.txt 2>&1; echo "== desc validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/desc-val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
rm -f $R/desc-repeat-hashes.txt
for run in 1 2; do NVFP4_REPEAT_HASH_FILE=$R/desc-repeat-hashes.txt timeout 120 $B/desc_tests --gtest_filter=Gpu.EveryBackendGivesIdenticalBitsOnEveryRun:Gpu.Sm90HundredRunsBitIdentical > /tmp/rep.txt 2>&1; echo "== desc repeat $run rc $? $(grep -E '^\[  (PASSED|FAILED)' /tmp/rep.txt)"; done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  for cfg in 128x2x1x1 128x1x1x1 64x3x1x1 16x4x1x1 128x3x1x2 16x1x1x1x2 16x1x1x1x3 32x1x1x1x3 256x2x1x2; do
    NVFP4_SM90_CONFIG=$cfg timeout 120 $CS --tool $tool --error-exitcode 9 $B/desc validate --shapes san:200:1000 --rows 300 \
      --candidate sm90,sm90-stream --out /tmp/dsan-$tool-$cfg > /tmp/san.txt 2>&1
    rc=$?; echo "$tool $cfg: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1), $(grep -o 'status: [A-Z]*' /tmp/san.txt | head -1)" | tee -a $R/desc-compute-sanitizer.txt
    [ $rc = 0 ] || tail -5 /tmp/san.txt >> $R/desc-compute-sanitizer.txt
  done
done
cp /tmp/san.txt $R/desc-last-sanitizer-log.txt; pack
echo "done $(st)"
