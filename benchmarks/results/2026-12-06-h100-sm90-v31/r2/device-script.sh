#!/bin/bash
# Device call (2026-12-06, twenty-fifth session): sm90-v31 r2. t3e = HEAD + counters-shared + stage-verdict
# (= sv) + 96x3x1x1 / 96x2x1x1 built (three 96-token warpgroups at 160 registers, producer at 24);
# t3l = t3e with 96x3x1x1 loading the next weight words after the MMA wait (-DNVFP4_SM90_LATE_WORDS=1).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry2/t3e ] || tar -xJf build/carry2.tar.xz -C build
B=$PWD/build/carry2; mkdir -p $OUT/r2 $OUT/r3 $OUT/r4; cp "$0" $OUT/r2/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/r2/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $OUT/r2/device.txt)"
R=$OUT/r2
timeout 90 $B/t3e_tests --gtest_filter='Gpu.Sm90*' > $R/t3e-tests.txt 2>&1; echo "== t3e tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/t3e-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED' $R/t3e-tests.txt | head -5; grep -E '^\[sm90\] 96' $R/t3e-tests.txt | head -8
for cfg in 96x3x1x1 96x2x1x1; do for m in 128 512; do NVFP4_SM90_CONFIG=$cfg timeout 40 $B/t3e validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/d$cfg$m > $R/t3e-val-$cfg-m$m.txt 2>&1; echo "== t3e validate $cfg M=$m rc $? $(grep -o "status: [A-Z]*" $R/t3e-val-$cfg-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; done
tools/sm90-ab $OUT/r3 --bin t3e=$B/t3e --bin t3l=$B/t3l --rows 4096,2048,1024,512 --rounds 2 --sm90-config 128x2x1x1,96x3x1x1,96x2x1x1 --budget $(( 200 - $(el) )) --timeout 60; echo "== r3 ab rc $? [$(el) s]"
R=$OUT/r4
for b in "sv 128x3x1x2" "sv 256x2x1x2" "sv 256x1x1x2" "t3e 96x3x1x1" "t3e 96x2x1x1"; do set -- $b; for tool in memcheck racecheck; do
  [ $(el) -lt 260 ] || { echo "== skip $tool $1 $2 (time)"; continue; }
  NVFP4_SM90_CONFIG=$2 timeout 45 compute-sanitizer --tool $tool $B/$1 validate --shapes san:200:1000 --rows 300 --candidate sm90,sm90-stream --quiet --out /tmp/san$2$tool > $R/$1-$tool-$2.txt 2>&1; echo "== $tool $1 $2 rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|status' $R/$1-$tool-$2.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done; done
tar -czf $OUT/results.tgz -C $OUT r2 r3 r4
echo "done [$(el) s]"
