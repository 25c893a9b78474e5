#!/usr/bin/env bash
# one-off device call: sm90-v22 r8: three copy threads (weight, A', records; one warp each) for the one-chain tiles of up to 64 tokens (ct3a) and also the two-chain tiles (ct3b), against the kept commit 546fb8e (one copy thread there), M = 16, 32, 64, 128, two rounds alternated; validate
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
for x in 1 2; do
  for m in 16 32 64 128; do
    for v in kept ct3a ct3b; do
      timeout 90 $B/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/m$m-$v-$x.json > $R/m$m-$v-$x.txt 2>&1; echo "== m$m $v $x: $(row $R/m$m-$v-$x.txt)"
    done
  done
done
tar -czf $OUT/results.tgz -C $OUT r
for v in ct3a ct3b; do for m in 16 64 128; do timeout 60 $B/$v validate --linear qkv,fc1 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v > $R/val-$v-m$m.txt 2>&1; echo "== validate $v m$m rc $? $(grep -o "status: [A-Z]*" $R/val-$v-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done; done
tar -czf $OUT/results.tgz -C $OUT r
