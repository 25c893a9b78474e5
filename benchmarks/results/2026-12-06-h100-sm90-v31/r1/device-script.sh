#!/bin/bash
# Device call (2026-12-06, twenty-fourth session): sm90-v31. Binaries: cur = HEAD 22794ca; cs = HEAD +
# counters-shared-not-run.diff (the two-chain tiles' path counters in shared memory: 128x3x1x2's and
# 256x2x1x2's hot loops without local-memory accesses); sv = cs + the two-chain loop taking its stage
# and verdict through stage_ptr / verdict_at as the other loops do.
# Built on the CPU machine: tools/sm90-variant build/h cur (HEAD); git apply counters-shared-not-run.diff,
# tools/sm90-variant build/h cs; git apply stage-verdict-not-run.diff, tools/sm90-variant build/h sv;
# each variant's nvfp4 as build/carry/NAME and nvfp4_tests as build/carry/NAME_tests (cs, sv), stripped,
# then (cd build && tar -cJf carry.tar.xz carry); the call carries build/carry.tar.xz and this script.
# r3: cs's bits (GPU suite with every configuration; validate at M = 128 and 512), then cur / cs / sv
#     at M = 128 (qkv on 128x3x1x2) and M = 512 (out and fc2 on 128x3x1x2), two rounds; then sv's bits.
# r4: cur / cs at M = 4096 on 128x2x1x1 (the launcher's choice), 256x2x1x2 and 256x1x1x2, two rounds.
# r5: compute-sanitizer memcheck and racecheck of cs on 128x3x1x2 and 256x2x1x2 (time left permitting).
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/cs ] || tar -xJf build/carry.tar.xz -C build
B=$PWD/build/carry; mkdir -p $OUT/r3 $OUT/r4 $OUT/r5; cp "$0" $OUT/r3/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $OUT/r3/device.txt 2>&1
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $OUT/r3/device.txt)"
R=$OUT/r3
bits() {  # binary $1's bits: its GPU suite (every configuration), validate at M = 128 and 512
  local v=$1 m
  timeout 60 $B/${v}_tests --gtest_filter='Gpu.Sm90*' > $R/$v-tests.txt 2>&1; echo "== $v tests rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/$v-tests.txt | tr '\n' ' ') [$(el) s]"
  grep -E '^\[  FAILED' $R/$v-tests.txt | head -5
  for m in 128 512; do timeout 40 $B/$v validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/d$v$m > $R/$v-val-m$m.txt 2>&1; echo "== $v validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/$v-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
}
bits cs
tools/sm90-ab $R --bin cur=$B/cur --bin cs=$B/cs --bin sv=$B/sv --rows 128,512 --rounds 2 --budget $(( 130 - $(el) )) --timeout 40; echo "== r3 ab rc $? [$(el) s]"
[ $(el) -lt 170 ] && bits sv
tools/sm90-ab $OUT/r4 --bin cur=$B/cur --bin cs=$B/cs --rows 4096 --rounds 2 --sm90-config 128x2x1x1,256x2x1x2,256x1x1x2 --budget $(( 230 - $(el) )) --timeout 60; echo "== r4 ab rc $? [$(el) s]"
R=$OUT/r5
for cfg in 128x3x1x2 256x2x1x2; do for tool in memcheck racecheck; do
  [ $(el) -lt 240 ] || { echo "== skip $tool $cfg (time)"; continue; }
  NVFP4_SM90_CONFIG=$cfg timeout 45 compute-sanitizer --tool $tool $B/cs validate --shapes san:200:1000 --rows 300 --candidate sm90,sm90-stream --quiet --out /tmp/san$cfg$tool > $R/cs-$tool-$cfg.txt 2>&1; echo "== $tool cs $cfg rc $? $(grep -E 'RACECHECK SUMMARY|ERROR SUMMARY|status' $R/cs-$tool-$cfg.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
done; done
tar -czf $OUT/results.tgz -C $OUT r3 r4 r5
echo "done [$(el) s]"
