#!/usr/bin/env bash
# one-off device call (not committed): sm90-v18 r6: compute-sanitizer racecheck of the kept kernel (0490f2d, `base` of r5) on validate's synthetic MiniMax activations (their tile tests fail often, so the fallback and its per-element path run), each launcher configuration forced
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for cfg in 128x2x1x1 128x3x1x2 64x1x2x1 64x3x1x1 16x3x1x1 16x1x1x1x3 32x1x1x1x3; do
  NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool racecheck --error-exitcode 9 build/carry/base validate --shapes san:300:1000 --rows 150 --candidate sm90 --quiet --out /tmp/san > $R/racecheck-$cfg.txt 2>&1
  echo "racecheck $cfg: exit $?, $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY' $R/racecheck-$cfg.txt | tail -1) | $(grep -E '^status' $R/racecheck-$cfg.txt | cut -c1-60)"
done
NVFP4_SM90_CONFIG=128x2x1x1 timeout 60 build/carry/base validate --shapes san:300:1000 --rows 150 --candidate sm90 --out /tmp/san > $R/validate-paths.txt 2>&1; grep -iE "slow|tile|group" $R/validate-paths.txt | head -5
tar -czf $OUT/results.tgz -C $OUT r
