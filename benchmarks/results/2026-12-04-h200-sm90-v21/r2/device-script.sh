#!/usr/bin/env bash
# one-off device call: sm90-v21 r2: traces of the kept kernel at M = 16, 32, 128 (trace); the K-split chunk-sum warpgroups with two chains in flight per wait (pair: the next pair decoded under the MMAs, pairA: not) against new (the launcher change of r1); the launcher at M = 400 / 512; GPU suite
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
for v in pair pairA; do for m in 1 16 32; do timeout 60 $B/$v validate --linear qkv,out,fc1,fc2 --shapes odd:1000:1088 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$v$m > $R/val-$v-m$m.txt 2>&1; echo "== validate $v m$m rc $? $(grep -o "status: [A-Z]*" $R/val-$v-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done; done
for c in 16x1x1x1x2 16x1x1x1x4 32x1x1x1x2; do NVFP4_SM90_CONFIG=$c timeout 60 $B/pair validate --shapes odd:1000:1088,out --rows 16 --candidate sm90 --quiet --out /tmp/vc$c > $R/val-pair-$c.txt 2>&1; echo "== validate pair $c rc $? $(grep -o "status: [A-Z]*" $R/val-pair-$c.txt | sort | uniq -c | tr '\n' ' ')"; done
for x in 1 2; do for v in new pair pairA; do for m in 16 32; do timeout 60 $B/$v bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --commit $v --out $R/ab-$v-m$m-$x.json > $R/ab-$v-m$m-$x.txt 2>&1; echo "== $v m$m $x: $(grep -E 'sm90 ' $R/ab-$v-m$m-$x.txt | grep -v 'pre-pass' | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ' ')"; done; done; done
for sh in out:16 qkv:16 out:32 fc1:16 out:128 fc2:128; do n=${sh%%:*}; m=${sh##*:}; NVFP4_SM90_TRACE_OUT=$R/tr-$n$m timeout 60 $B/trace bench --no-quantizer --rows $m --shapes $n --iters 3 --warmup 1 --backend sm90 > /dev/null 2>&1; echo "== trace $n $m rc $?"; done
tar -czf $OUT/results.tgz -C $OUT r
for m in 400 512; do timeout 90 $B/new bench --no-quantizer --rows $m --iters 20 --backend sm90 --commit launcher --out $R/l-m$m.json > $R/l-m$m.txt 2>&1; echo "== launcher m$m"; grep -E 'sm90|cublas' $R/l-m$m.txt | grep -v pre-pass | sed -e 's/ TFLOP.*x cuBLAS/ x/' -e 's/  */ /g' | cut -c1-100; done
(cd build/h && timeout 200 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
tar -czf $OUT/results.tgz -C $OUT r
