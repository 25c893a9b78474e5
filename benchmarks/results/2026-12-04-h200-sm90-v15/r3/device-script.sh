#!/usr/bin/env bash
# one-off device call (not committed): sm90-v15 r3: per-warpgroup traces of the one-chain step (-DNVFP4_SM90_TRACE build of the commit)
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for run in "4096 out" "4096 qkv" "128 out" "128 fc1" "16 qkv"; do
  set -- $run
  NVFP4_SM90_TRACE_OUT=$R/trace-m$1-$2.txt timeout 120 build/carry/trace bench --no-quantizer --rows $1 --shapes $2 --iters 3 --warmup 1 --backend sm90 --commit trace > $R/bench-m$1-$2.txt 2>&1
  echo "== m$1 $2 exit $?"
  python3 tools/sm90-trace-summary $R/trace-m$1-$2.txt.wg 2>&1 | tee -a $R/summary.txt
done
tar -czf $OUT/results.tgz -C $OUT r
