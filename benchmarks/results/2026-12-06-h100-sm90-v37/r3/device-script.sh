#!/bin/bash
# Device call (2026-12-06, thirty-second session): sm90-v37 r3. The K-split's copies by stage warps: hd = HEAD's kernel
# as built from the working tree with the new switch at its default (its SASS equals 4f8772d's in all 30 configurations);
# sw2 / sw3 = -DNVFP4_SM90_KS_STAGE_WARPS=2 / 3 (two or three warps of the producer take whole K-split stages in turn,
# each issuing a stage's weight copies and A' boxes from its lanes, instead of one warp per kind of copy); tsw2 / tsw3
# with -DNVFP4_SM90_TRACE. Their bits (Gpu.Sm90*, validate of out and fc2 at M = 16, 32), hd / sw2 / sw3 in alternation
# on out and fc2 at M = 16, 32, 8; the K-split configurations in one process; traces; racecheck of the faster.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry72/sw3 ] || tar -xJf build/carry72.tar.xz -C build
B=$PWD/build/carry72; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
short() { sed 's/ TFLOP[^;]*cuBLAS-bf16;/ ;/g' "$1"; }
echo "== $(tail -1 $R/device.txt)"
for v in sw3 sw2; do
  timeout 60 $B/${v}_tests --gtest_filter='Gpu.Sm90*' > $R/$v-tests.txt 2>&1; echo "== $v Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/$v-tests.txt | tr '\n' ' ') [$(el) s]"; grep -E '^\[  FAILED|Failure' $R/$v-tests.txt | head -4
done; pack
for m in 16 32; do timeout 60 $B/sw3 validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/sw3-val-m$m.txt 2>&1; echo "== sw3 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/sw3-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin sw2=$B/sw2 --bin sw3=$B/sw3 --rows 16,32,8 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 120 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; short $R/ab.txt; pack
for b in hd sw3 sw2; do
  timeout 60 $B/$b bench --no-quantizer --rows 16 --iters 30 --backend sm90 --sm90-config 16x1x1x1x2,16x1x1x1x3,16x1x1x1x4 --shapes attn_out_proj,mlp_fc2 --commit $b --out $R/cfg-$b-m16.json > $R/cfg-$b-m16.txt 2>&1
  timeout 60 $B/$b bench --no-quantizer --rows 32 --iters 30 --backend sm90 --sm90-config 32x1x1x1x2,32x1x1x1x3 --shapes attn_out_proj,mlp_fc2 --commit $b --out $R/cfg-$b-m32.json > $R/cfg-$b-m32.txt 2>&1
  echo "-- cfg $b [$(el) s]"; cat $R/cfg-$b-m16.txt $R/cfg-$b-m32.txt | grep "sm90@" | grep -v pre-pass | awk -F'|' '{print $1 "|" $2}' | tr -s ' '
done; pack
for t in tsw3 tsw2; do for c in 16x1x1x1x3 32x1x1x1x3; do
  m=${c%%x*}; NVFP4_SM90_TRACE_OUT=$R/trace-$t-m$m-$c.txt timeout 40 $B/$t bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit $t > /dev/null 2>&1
  echo "== trace $t $c rc $?"; python3 tools/sm90-trace-summary $R/trace-$t-m$m-$c.txt > $R/trace-$t-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk|e8 -> e0|e0 -> e2" $R/trace-$t-m$m-$c-summary.txt | head -12
done; done; pack
[ $(el) -lt 420 ] && { NVFP4_TEST_SM90_CONFIGS=16x1x1x1x3,32x1x1x1x3,16x1x1x1x2 timeout 150 compute-sanitizer --tool racecheck $B/sw3_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/racecheck-sw3.txt 2>&1; echo "== racecheck sw3 rc $? $(grep -E 'SUMMARY|PASSED|FAILED' $R/racecheck-sw3.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; pack; }
echo "done [$(el) s]"
