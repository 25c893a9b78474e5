#!/bin/bash
# Device call (2026-12-07, thirty-eighth session): sm90-v44 r8. bench/sm90_hgmma_probe.cu of the working tree (after
# a5318c4): chain and ss beside a writer warpgroup (+w: 8 KB of swizzled 4-byte stores and a proxy fence per thread,
# repeated; +wnf: without the fence), 1-3 MMA warpgroups, N = 16 and 64. Two runs.
set -u
B=$PWD/build/carry114; R=$OUT/r8; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
echo "== $(tail -1 $R/device.txt)"
for x in 1 2; do timeout 60 $B/nvfp4_sm90_hgmma_probe --out $R/hgmma-probe-$x.json > $R/hgmma-probe-$x.txt 2>&1; echo "== probe run $x rc $?"; done
grep -E '^(16|64) \| [1-4] \| (chain|ss)' $R/hgmma-probe-1.txt
tar -czf $OUT/results8.tgz -C $OUT r8
