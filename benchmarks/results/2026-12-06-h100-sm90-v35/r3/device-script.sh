#!/bin/bash
# Device call (2026-12-06, thirtieth session): sm90-v35 r3. hd = c01ea8f's CLI; vr2 = the same tree with the K-split's
# verdict lanes testing two slot groups per round (-DNVFP4_SM90_VERDICT_GROUPS=2; r2's traces had the applier waiting
# 512-704 ns per group for the verdicts at 64 tokens); vr2_tests its test binary; tr / tr2 their -DNVFP4_SM90_TRACE builds.
# Bits of vr2 (Gpu.Sm90*: every K-split configuration; validate with the K-split picks at M = 16, 32 and forced at 64);
# hd / vr2 in alternation on out and fc2 at M = 16, 32 (the launcher's K-splits) and at M = 64 on 64x1x1x1 (hd's pick) and
# the forced K-splits 64x1x1x1x2 / x3; traces of tr2 (and tr) at M = 64 and 16; racecheck of vr2's K-split while time is left.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry64/vr2 ] || tar -xJf build/carry64.tar.xz -C build
B=$PWD/build/carry64; R=$OUT/r3; mkdir -p $R; cp "$0" $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results3.tgz -C $OUT r3; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
timeout 120 $B/vr2_tests --gtest_filter='Gpu.Sm90*' > $R/vr2-tests.txt 2>&1; echo "== vr2 Gpu.Sm90* rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/vr2-tests.txt | tr '\n' ' ') [$(el) s]"
grep -E '^\[  FAILED|Failure' $R/vr2-tests.txt | head -8; pack
for m in 16 32; do timeout 60 $B/vr2 validate --rows $m --linear out,fc2 --candidate sm90,sm90-stream --quiet --out /tmp/v$m > $R/vr2-val-m$m.txt 2>&1; echo "== vr2 validate M=$m rc $? $(grep -o 'status: [A-Z]*' $R/vr2-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
for c in 64x1x1x1x2 64x1x1x1x3; do NVFP4_SM90_CONFIG=$c timeout 60 $B/vr2 validate --rows 64 --linear out,fc2 --candidate sm90 --quiet --out /tmp/v64 > $R/vr2-val-m64-$c.txt 2>&1; echo "== vr2 validate M=64 $c rc $? $(grep -o 'status: [A-Z]*' $R/vr2-val-m64-$c.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done; pack
tools/sm90-ab $R/ab --bin hd=$B/hd --bin vr2=$B/vr2 --rows 16,32 --rounds 2 --shapes attn_out_proj,mlp_fc2 --budget 150 > $R/ab.txt 2>&1; echo "== ab rc $? [$(el) s]"; cat $R/ab.txt | tail -8
tools/sm90-ab $R/ab64 --bin hd=$B/hd --bin vr2=$B/vr2 --rows 64 --rounds 2 --shapes attn_out_proj,mlp_fc2 --sm90-config 64x1x1x1,64x1x1x1x2,64x1x1x1x3 --budget 260 > $R/ab64.txt 2>&1; echo "== ab64 rc $? [$(el) s]"; grep -E "sm90@" $R/ab64/*.txt | grep -v pre-pass | awk -F'|' '{print $1 "|" $2 "|" $NF}' | sed 's|.*/ab64/||'; pack
for t in tr2:64x1x1x1x2 tr2:64x1x1x1x3 tr2:16x1x1x1x2 tr:16x1x1x1x2; do
  b=${t%%:*}; c=${t#*:}; m=${c%%x*}
  NVFP4_SM90_TRACE_OUT=$R/trace-$b-m$m-$c.txt timeout 60 $B/$b bench --no-quantizer --rows $m --iters 3 --warmup 1 --backend sm90 --sm90-config $c --shapes attn_out_proj --commit $b > /dev/null 2>&1
  echo "== trace $b $c rc $?"; python3 tools/sm90-trace-summary $R/trace-$b-m$m-$c.txt > $R/trace-$b-m$m-$c-summary.txt 2>&1; grep -E "ns/chunk" $R/trace-$b-m$m-$c-summary.txt | head -8
done; pack
if [ $(el) -lt 150 ]; then
  NVFP4_TEST_SM90_CONFIGS=16x1x1x1x2,64x1x1x1x3 timeout 150 compute-sanitizer --tool racecheck $B/vr2_tests --gtest_filter='Gpu.Sm90Bf16OutputBuffersReusedAcrossTiles' > $R/vr2-racecheck.txt 2>&1; echo "== racecheck rc $? $(grep -E 'RACECHECK SUMMARY|PASSED|FAILED' $R/vr2-racecheck.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"
fi
echo "done [$(el) s]"; pack
