#!/usr/bin/env bash
# one-off device call: sm90-v21 r8: the K-split's copies issued by a warp's lanes, one copy per lane (lanes: the weight blocks of a stage by lanes 0-3 of the weight warp, its A' boxes by lanes of the A' warp) against base (f0d5f5a): validate with every K-split configuration, racecheck, A/B at M = 16 and 32
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
for m in 1 16 32; do timeout 60 $B/lanes validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
for c in 16x1x1x1x2 16x1x1x1x3 16x1x1x1x4 32x1x1x1x2 32x1x1x1x3; do NVFP4_SM90_CONFIG=$c timeout 60 $B/lanes validate --shapes odd:1000:1088,odd2:333:4160,out --rows 16 --candidate sm90,sm90-stream --quiet --out /tmp/vc > $R/val-$c.txt 2>&1; echo "== validate $c rc $? $(grep -o "status: [A-Z]*" $R/val-$c.txt)"; done
for x in 1 2; do for v in new lanes; do for m in 16 32; do timeout 60 $B/$v bench --no-quantizer --rows $m --shapes out,fc2 --iters 30 --backend sm90 --commit $v --out $R/ab-$v-m$m-$x.json > $R/ab-$v-m$m-$x.txt 2>&1; echo "== $v m$m $x: $(grep -E 'sm90 ' $R/ab-$v-m$m-$x.txt | grep -v 'pre-pass' | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ' ')"; done; done; done
tar -czf $OUT/results.tgz -C $OUT r
for c in 16x1x1x1x3 32x1x1x1x3; do NVFP4_SM90_CONFIG=$c timeout 90 compute-sanitizer --tool racecheck $B/lanes validate --shapes san:300:1000 --rows 16 --candidate sm90 --quiet --out /tmp/san > $R/racecheck-$c.txt 2>&1; echo "== racecheck $c rc $? $(grep -E 'hazard|ERROR SUMMARY|status' $R/racecheck-$c.txt | tail -2 | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
