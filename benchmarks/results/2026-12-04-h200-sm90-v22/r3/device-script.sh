#!/usr/bin/env bash
# one-off device call: sm90-v22 r3: K-split tiles of several row blocks with one chunk a stage and four slots (new2: up to 15 ring stages instead of 6) at M = 16, the ring depth varied by NVFP4_SM90_MAX_STAGES; against the launcher's one-chain tiles
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/attn_qkv_proj 16x21504x5376/qkv/;s/mlp_fc1 16x28672x5376/fc1/' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for st in 6 9 12 16; do
    NVFP4_SM90_MAX_STAGES=$st timeout 90 $B/new2 bench --no-quantizer --rows 16 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 16x3x1x1,16x4x1x1,16x3x1x1x3,16x4x1x1x3 --commit new2 --out $R/m16-st$st-$x.json > $R/m16-st$st-$x.txt 2>&1; echo "== m16 stages<=$st $x: $(row $R/m16-st$st-$x.txt)"
  done
done
tar -czf $OUT/results.tgz -C $OUT r
for c in 16x3x1x1x3 16x4x1x1x3; do NVFP4_SM90_CONFIG=$c timeout 60 $B/new2 validate --shapes odd:1000:1088,odd2:333:4160,qkv --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/vc > $R/val-$c.txt 2>&1; echo "== validate $c rc $? $(grep -o "status: [A-Z]*" $R/val-$c.txt | sort | uniq -c | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
