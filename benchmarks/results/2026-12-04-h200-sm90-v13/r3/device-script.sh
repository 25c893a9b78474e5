#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r3: K-split verdict lanes prefetch weight records into L2 three rounds ahead (new) vs 1d40233 (kept); traces; ncu kernel durations
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
for cfg in 16x1x1x1x4 32x1x1x1x2; do
  NVFP4_SM90_CONFIG=$cfg timeout 100 build/carry/new validate --shapes odd:1000:1088,san:200:1000 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v-$cfg >$R/smoke-$cfg.txt 2>&1
  echo "smoke $cfg exit $? $(tail -2 $R/smoke-$cfg.txt | head -1 | cut -c1-60)"
done
for m in 16 32; do for bin in kept new kept2 new2 nc; do
  X=build/carry/${bin%2}
  $X bench --no-quantizer --rows $m --iters 30 --backend sm90 --shapes out,fc2 --commit $bin --out $R/bench-m$m-$bin.json >$R/bench-m$m-$bin.txt 2>&1
  echo "== m$m $bin"; grep -E "sm90" $R/bench-m$m-$bin.txt | grep -v "of which" | cut -c1-100
done; done
for bin in trace nct; do
  NVFP4_SM90_TRACE_OUT=$R/trace-$bin-m16-out.txt build/carry/$bin bench --no-quantizer --rows 16 --iters 3 --warmup 1 --backend sm90 --sm90-config 16x1x1x1x4 --shapes out --commit $bin >/dev/null 2>&1
  echo "trace $bin exit $?"
done
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 200 $NCU --metrics gpu__time_duration.sum -k regex:sm90 build/carry/new bench --no-quantizer --rows 16 --iters 2 --warmup 1 --backend sm90 --shapes out,qkv --commit new > $R/ncu-durations.txt 2>&1
echo "ncu exit $?"; grep -E "sm90_|gpu__time_duration" $R/ncu-durations.txt | head -40
tar -czf $OUT/results.tgz -C $OUT r
