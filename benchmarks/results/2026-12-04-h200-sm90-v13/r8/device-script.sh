#!/usr/bin/env bash
# one-off device call (not committed): sm90-v13 r8: chunk-sum warpgroups per K-split tile with 4-chunk stages (KS = 2, 3, 4), 8-chunk stages (c8), and the committed probes once
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/nvidia-smi.txt
NVFP4_SM90_CONFIG=16x1x1x1x2 timeout 100 build/carry/c8 validate --shapes odd:1000:1088,san:200:1000,k2:200:100 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v-c8 >$R/smoke-c8-16x1x1x1x2.txt 2>&1
echo "smoke c8 16x1x1x1x2 exit $? $(tail -2 $R/smoke-c8-16x1x1x1x2.txt | head -1 | cut -c1-60)"
for rep in 1 2; do
  build/carry/new bench --no-quantizer --rows 16 --iters 30 --backend sm90 --shapes out,fc2 --sm90-config 16x1x1x1x2,16x1x1x1x3,16x1x1x1x4 --commit new --out $R/ks-m16-new-$rep.json >$R/ks-m16-new-$rep.txt 2>&1
  echo "== new $rep"; grep -E "sm90" $R/ks-m16-new-$rep.txt | grep -v "of which" | cut -c1-50,60-75,90-130
  build/carry/c8 bench --no-quantizer --rows 16 --iters 30 --backend sm90 --shapes out,fc2 --sm90-config 16x1x1x1x2 --commit c8 --out $R/ks-m16-c8-$rep.json >$R/ks-m16-c8-$rep.txt 2>&1
  echo "== c8 $rep"; grep -E "sm90" $R/ks-m16-c8-$rep.txt | grep -v "of which" | cut -c1-50,60-75,90-130
done
PROBE_ONLY="a=tma G=1 stages=16 chunk-major,a=bulk G=4 stages=8 block-major,read" timeout 100 build/carry/probe 30 > $R/copy-probe.txt 2>&1; echo "probe exit $?"; cat $R/copy-probe.txt
PROBE_ONLY="tma  n128 m128 row128 st2 w8 rd2 sf1 c2" PROBE_TIMING=queued timeout 100 build/carry/sprobe 10 > $R/stream-probe.txt 2>&1; echo "sprobe exit $?"; tail -6 $R/stream-probe.txt
tar -czf $OUT/results.tgz -C $OUT r
