#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r2: the copy probe with layouts and copy sizes; traces of the K-split with copies removed (NO_COPY + TRACE build)
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
timeout 200 build/carry/probe 30 > $R/copy-probe.txt 2>&1; echo "probe exit $?"; cat $R/copy-probe.txt
for sc in out:16x1x1x1x4 fc2:16x1x1x1x4 out:16x1x1x1x2 out:32x1x1x1x2; do
  sh=${sc%%:*}; cfg=${sc#*:}; m=${cfg%%x*}
  for bin in nct; do
    NVFP4_SM90_TRACE_OUT=$R/trace-$bin-m$m-$sh-$cfg.txt build/carry/$bin bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $cfg --shapes $sh --commit $bin >$R/tr-$bin-$sh-$cfg.txt 2>&1
    echo "trace $bin $sh $cfg exit $?"
  done
  build/carry/new bench --no-quantizer --rows $m --iters 30 --backend sm90 --sm90-config $cfg --shapes $sh --commit new > $R/b-new-$sh-$cfg.txt 2>&1
  grep -E "sm90" $R/b-new-$sh-$cfg.txt | grep -v "of which" | cut -c1-110
done
tar -czf $OUT/results.tgz -C $OUT r
