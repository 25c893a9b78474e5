#!/usr/bin/env bash
# one-off device call: sm90-v22 r1: K-split tiles of several row blocks (BMxKBx1x1x3: KB row blocks share the chunk-sum warpgroups and the applier) against the launcher's one-chain tiles for qkv and fc1 at M = 16 and 32; the K-split's KB = 1 kernels (whose SASS moved) against base (75bcaae); validate with every new configuration; the GPU suite
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  timeout 90 $B/new bench --no-quantizer --rows 16 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 16x3x1x1,16x4x1x1,16x2x1x1x3,16x3x1x1x3,16x4x1x1x3 --commit new --out $R/m16-qkvfc1-$x.json > $R/m16-qkvfc1-$x.txt 2>&1; echo "== m16 qkv,fc1 $x: $(row $R/m16-qkvfc1-$x.txt)"
  timeout 90 $B/new bench --no-quantizer --rows 32 --shapes qkv,fc1 --iters 30 --backend sm90 --sm90-config 32x3x1x1,32x2x1x1,32x2x1x1x3,32x3x1x1x3,32x4x1x1x3 --commit new --out $R/m32-qkvfc1-$x.json > $R/m32-qkvfc1-$x.txt 2>&1; echo "== m32 qkv,fc1 $x: $(row $R/m32-qkvfc1-$x.txt)"
  for v in base new; do for m in 16 32; do timeout 60 $B/$v bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --commit $v --out $R/ab-$v-m$m-$x.json > $R/ab-$v-m$m-$x.txt 2>&1; echo "== $v out,fc2 m$m $x: $(row $R/ab-$v-m$m-$x.txt)"; done; done
done
tar -czf $OUT/results.tgz -C $OUT r
for c in 16x2x1x1x3 16x3x1x1x3 16x4x1x1x3; do for m in 1 13 16; do NVFP4_SM90_CONFIG=$c timeout 60 $B/new validate --linear qkv,fc1 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v > $R/val-$c-m$m.txt 2>&1; echo "== validate $c m$m rc $? $(grep -o "status: [A-Z]*" $R/val-$c-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done; done
for c in 32x2x1x1x3 32x3x1x1x3 32x4x1x1x3; do for m in 17 32; do NVFP4_SM90_CONFIG=$c timeout 60 $B/new validate --linear qkv,fc1 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v > $R/val-$c-m$m.txt 2>&1; echo "== validate $c m$m rc $? $(grep -o "status: [A-Z]*" $R/val-$c-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done; done
for c in 16x2x1x1x3 16x3x1x1x3 16x4x1x1x3 32x2x1x1x3 32x3x1x1x3 32x4x1x1x3 16x1x1x1x3 32x1x1x1x3; do NVFP4_SM90_CONFIG=$c timeout 60 $B/new validate --shapes odd:1000:1088,odd2:333:4160 --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/vc > $R/val-odd-$c.txt 2>&1; echo "== validate odd $c rc $? $(grep -o "status: [A-Z]*" $R/val-odd-$c.txt | sort | uniq -c | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
timeout 200 $B/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/gpu-suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/gpu-suite.txt | tr '\n' ' ')"
grep -E 'FAILED|Failure' $R/gpu-suite.txt | head -20
tar -czf $OUT/results.tgz -C $OUT r
