#!/usr/bin/env bash
# one-off device call: sm90-v21 r10: the one-chain loop waiting for chunk c + 2's ready barrier while chunk c + 1's MMAs run (early) instead of before chunk c's adds, against new (ff13643): validate, A/B at M = 16 ... 128 (twice, alternated) and 4096
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
for m in 1 16 64 128 333; do timeout 60 $B/early validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/va$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
timeout 60 $B/early validate --shapes odd:1000:1088,odd2:333:4160 --rows 100 --candidate sm90 --quiet --out /tmp/vo > $R/val-odd.txt 2>&1; echo "== validate odd rc $? $(grep -o "status: [A-Z]*" $R/val-odd.txt)"
for x in 1 2; do for v in new early; do for m in 16 64 128; do timeout 60 $B/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/ab-$v-m$m-$x.json > $R/ab-$v-m$m-$x.txt 2>&1; echo "== $v m$m $x: $(grep -E 'sm90 ' $R/ab-$v-m$m-$x.txt | grep -v 'pre-pass' | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ' ')"; done; done; done
tar -czf $OUT/results.tgz -C $OUT r
for v in new early; do timeout 100 $B/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/ab-$v-m4096.json > $R/ab-$v-m4096.txt 2>&1; echo "== $v m4096: $(grep -E 'sm90 ' $R/ab-$v-m4096.txt | grep -v 'pre-pass' | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
