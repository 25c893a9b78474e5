#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r8: a28cc89 at M = 4096 on outlier activations (the default) and on N(0,1) activations, alternated: how much of the time the fallback's trips (tile misses) cost, which the measurement builds of r4, r6, r7 (and v16 r2) all removed with the ring or the settle step
set -u
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for rep in 1 2; do for act in outliers normal; do
  timeout 150 build/carry/base bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --activations $act --commit base --out $R/m4096-$act-$rep.json >$R/m4096-$act-$rep.txt 2>&1
  echo "== m4096 $act $rep"; grep -E "sm90" $R/m4096-$act-$rep.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done; done
python3 - $R <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/m*.json')):
    j=json.load(open(f))
    print(f.split('/')[-1], [k.get('tile_test_misses') for g in j.get('gemm',[]) for k in g.get('kernels',[]) if 'tile_test_misses' in k])
PY
tar -czf $OUT/results.tgz -C $OUT r
