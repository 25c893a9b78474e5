#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r7: what the ring costs at M = 4096, a28cc89 three ways in one call, alternated twice: base; nocopyhead (-DNVFP4_SM90_NO_COPY: after the first ring round the copy threads re-arm each stage without copying; barriers, verdicts and waits kept); noringhead (r6's: no copies, no waits, no releases after the first round). Outputs of the last two meaningless
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for rep in 1 2; do for v in base nocopyhead noringhead; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-$v-$rep.json >$R/m4096-$v-$rep.txt 2>&1
  echo "== m4096 $v $rep"; grep -E "sm90" $R/m4096-$v-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done
tar -czf $OUT/results.tgz -C $OUT r
