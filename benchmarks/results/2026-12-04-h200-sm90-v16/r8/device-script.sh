#!/usr/bin/env bash
# one-off device call (not committed): sm90-v16 r8: compute-sanitizer racecheck of 9fde6d9's one-chain loop, one configuration at a time (validate on small shapes at 128 rows, whose synthetic activations send chunks to the slow step)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for cfg in 64x1x2x1 128x2x1x1 16x3x1x1; do
  NVFP4_SM90_CONFIG=$cfg timeout 70 $CS --tool racecheck --error-exitcode 9 build/carry/new validate --shapes odd:1000:1088 --rows 128 --candidate sm90 --quiet --out /tmp/san >$R/racecheck-$cfg.txt 2>&1
  echo "racecheck $cfg: exit $?, $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/racecheck-$cfg.txt | tail -1) $(grep -E '^status' $R/racecheck-$cfg.txt | cut -c1-60)"
done
tar -czf $OUT/results.tgz -C $OUT r
