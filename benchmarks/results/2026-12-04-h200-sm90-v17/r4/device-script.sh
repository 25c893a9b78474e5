#!/usr/bin/env bash
# one-off device call (not committed): sm90-v17 r4: where the one-chain loop's time goes. noring = the new loop (r3) as a measurement build whose copy threads and verdict warp stop after the first ring round and whose consumers neither wait for a stage after its first round nor release one (output meaningless): the consumer step without the ring. Against new and a28cc89 (base), M = 4096 and M = 128 (64x1x2x1); ncu of new at M = 4096, attn_out_proj
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
for v in base new noring; do
  timeout 150 build/carry/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/m4096-$v.json >$R/m4096-$v.txt 2>&1
  echo "== m4096 $v"; grep -E "sm90" $R/m4096-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done
for v in base new noring; do
  timeout 100 build/carry/$v bench --no-quantizer --rows 128 --iters 30 --backend sm90 --sm90-config 64x1x2x1 --commit $v --out $R/m128-$v.json >$R/m128-$v.txt 2>&1
  echo "== m128 64x1x2x1 $v"; grep -E "sm90" $R/m128-$v.txt | grep -v "of which" | sed -e "s/ TFLOP.*x cuBLAS/ x/" | cut -c1-100
done
python3 - $R <<'PY'
import json,sys,glob
for f in sorted(glob.glob(sys.argv[1]+'/m*.json')):
    j=json.load(open(f))
    for g in j.get('gemm',[]):
        for k in g.get('kernels',[]):
            if 'tile_test_misses' in k: print(f.split('/')[-1], g.get('name',''), k.get('backend',''), 'misses', k['tile_test_misses'])
PY
if command -v ncu >/dev/null; then
  NVFP4_SM90_CONFIG=128x2x1x1 timeout 300 ncu --clock-control none --set full --import-source yes -k regex:sm90_gemm_nvfp4 -c 1 -f -o $R/ncu-new build/carry/new bench --no-quantizer --rows 4096 --shapes out --iters 1 --warmup 0 --backend sm90 > $R/ncu-run.txt 2>&1
  ncu --import $R/ncu-new.ncu-rep --page details > $R/ncu-new.txt 2>&1
  ncu --import $R/ncu-new.ncu-rep --page source --csv --print-source sass > $R/src.csv 2>/dev/null
  ncu --import $R/ncu-new.ncu-rep --page raw --csv > $R/raw.csv 2>/dev/null
  python3 tools/ncu-stalls $R/raw.csv $R/src.csv >> $R/ncu-new.txt
  rm -f $R/src.csv $R/raw.csv $R/ncu-new.ncu-rep
  grep -E "^    (Duration|Compute \(SM\) Throughput|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Warp Cycles Per Issued)" $R/ncu-new.txt | head
  grep -A12 "== stall reasons" $R/ncu-new.txt
  grep -A45 "== SASS lines" $R/ncu-new.txt
fi
tar -czf $OUT/results.tgz -C $OUT r
