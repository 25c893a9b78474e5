#!/usr/bin/env bash
# one-off device call: sm90-v21 r4: the one-chain loop decoding chunk c + 1 while chunk c's MMAs run, in two named fragment buffers (new; r3's form copied one buffer into the other and gave wrong bits) against base (r2's launcher build): GPU suite, memcheck, racecheck, validate, A/B at M = 16 ... 128 (twice, alternated) and 4096
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
for m in 1 16 32 64 65 96 128 200 333; do timeout 60 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/va$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
for m in 16 100 200; do timeout 60 $B/new validate --shapes odd:1000:1088,odd2:333:4160 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/vo$m > $R/val-odd-m$m.txt 2>&1; echo "== validate odd m$m rc $? $(grep -o "status: [A-Z]*" $R/val-odd-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
(cd build/h && timeout 200 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
tar -czf $OUT/results.tgz -C $OUT r
for x in 1 2; do for v in base new; do for m in 16 32 64 128; do timeout 60 $B/$v bench --no-quantizer --rows $m --iters 30 --backend sm90 --commit $v --out $R/ab-$v-m$m-$x.json > $R/ab-$v-m$m-$x.txt 2>&1; echo "== $v m$m $x: $(grep -E 'sm90 ' $R/ab-$v-m$m-$x.txt | grep -v 'pre-pass' | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ' ')"; done; done; done
tar -czf $OUT/results.tgz -C $OUT r
for v in base new; do timeout 120 $B/$v bench --no-quantizer --rows 4096 --iters 10 --backend sm90 --commit $v --out $R/ab-$v-m4096.json > $R/ab-$v-m4096.txt 2>&1; echo "== $v m4096: $(grep -E 'sm90 ' $R/ab-$v-m4096.txt | grep -v 'pre-pass' | awk -F'|' '{print $2}' | tr -s ' ' | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
(cd build/h && timeout 120 compute-sanitizer --tool memcheck --error-exitcode 9 ../carry/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/memcheck.txt 2>&1); echo "== memcheck rc $? $(grep -E 'ERROR SUMMARY|PASSED|FAILED' $R/memcheck.txt | tr '\n' ' ')"
for cfg in 128x2x1x1 64x3x1x1 16x4x1x1 128x1x1x1; do NVFP4_SM90_CONFIG=$cfg timeout 60 compute-sanitizer --tool racecheck $B/new validate --shapes san:300:1000 --rows 150 --candidate sm90 --quiet --out /tmp/san > $R/racecheck-$cfg.txt 2>&1; echo "== racecheck $cfg rc $? $(grep -E 'hazard|ERROR SUMMARY|status' $R/racecheck-$cfg.txt | tail -2 | tr '\n' ' ')"; done
tar -czf $OUT/results.tgz -C $OUT r
