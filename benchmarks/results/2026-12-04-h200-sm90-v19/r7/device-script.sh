#!/usr/bin/env bash
# one-off device call: sm90-v19 r7: the final commit (302b94a; its 256-token tiles' SASS changed by the group_step refactor, every other function's equals 6460ad7's): GPU suite, validate with the 256-token tiles forced, memcheck
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
tar -xJf build/carry.tar.xz -C build
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
R=$OUT/r; mkdir -p $R
cp gpu-tmp.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
B=build/carry
(cd build/h && timeout 240 ../carry/new_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*' > $R/tests.txt 2>&1); echo "== tests rc $? $(grep -E 'PASSED|FAILED' $R/tests.txt | head -3)"
for cfg in 256x1x1x2 256x2x1x2 128x3x1x2; do NVFP4_SM90_CONFIG=$cfg timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows 333 --candidate sm90,sm90-stream --quiet --out /tmp/v$cfg > $R/val-$cfg-m333.txt 2>&1; echo "== validate $cfg m333 rc $? $(grep -o "status: [A-Z]*" $R/val-$cfg-m333.txt)"; done
for m in 1 128; do timeout 120 $B/new validate --linear qkv,out,fc1,fc2 --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/val-m$m.txt 2>&1; echo "== validate m$m rc $? $(grep -o "status: [A-Z]*" $R/val-m$m.txt)"; done
timeout 150 compute-sanitizer --tool memcheck --error-exitcode 9 $B/new_tests --gtest_filter='Gpu.Sm90SlowPathAdversarial*' > $R/memcheck.txt 2>&1; echo "== memcheck rc $? $(tail -1 $R/memcheck.txt)"
tar -czf $OUT/results.tgz -C $OUT r
