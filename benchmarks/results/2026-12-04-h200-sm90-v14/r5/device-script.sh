#!/usr/bin/env bash
# one-off device call (not committed): sm90-v14 r5: traces of the helper form of r4 (an owner CTA) and the 32x1x1x1x4 failure's controls
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
B=build/carry/new
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for h in 0 1; do
  NVFP4_SM90_HELPERS=$h NVFP4_SM90_CONFIG=32x1x1x1x4 timeout 25 $B validate --linear out --rows 16 --candidate sm90 --quiet --out /tmp/vr >$R/real-32x4-h$h.txt 2>&1; echo "real 32x1x1x1x4 helpers=$h exit $? $(grep -E '^status' $R/real-32x4-h$h.txt | cut -c1-40)"
  NVFP4_SM90_HELPERS=$h NVFP4_SM90_CONFIG=32x1x1x1x4 timeout 25 $B validate --shapes wide:5376:1344,odd:1000:1088 --rows 16 --candidate sm90 --quiet --out /tmp/vw >$R/wide-32x4-h$h.txt 2>&1; echo "wide 32x1x1x1x4 helpers=$h exit $? $(grep -E '^status' $R/wide-32x4-h$h.txt | cut -c1-40)"
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in racecheck synccheck; do
  NVFP4_SM90_CONFIG=32x1x1x1x4 timeout 90 $CS --tool $tool --error-exitcode 9 $B validate --shapes wide:5376:1344 --rows 16 --candidate sm90 --quiet --out /tmp/san >$R/san-$tool.txt 2>&1
  echo "$tool 32x1x1x1x4 wide: exit $?, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $R/san-$tool.txt | tail -1)"
done
for h in 0 1; do
  for sc in "16 out 16x1x1x1x3" "16 fc2 16x1x1x1x3" "32 out 32x1x1x1x2"; do
    set -- $sc
    NVFP4_SM90_HELPERS=$h NVFP4_SM90_TRACE_OUT=$R/trace-h$h-m$1-$2-$3.txt build/carry/trace bench --no-quantizer --rows $1 --shapes $2 --backend sm90 --iters 3 --warmup 1 --sm90-config $3 >/dev/null 2>&1; echo "trace h$h $sc exit $?"
  done
done
tar -czf $OUT/results.tgz -C $OUT r
