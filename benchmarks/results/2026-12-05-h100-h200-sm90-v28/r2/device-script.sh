#!/bin/bash
# Device call (2026-12-05, twentieth session): sm90-v28 r2. `fin` = the one-chain loop with chunk c + 1's ready wait and
# weight words before chunk c's MMA wait, and the stage released early on tiles of <= 32 tokens and 128x1x1x1 (the
# working tree after v28 r1); `cur` = HEAD e11ace4. fin and cur timed in alternation, every linear at M = 16-4096, round 1
# with every baseline at M = 16 and 128; fin's GPU suite, validate (default; M = 16, 64, 128, 333), the 100-run check in
# two processes (hashes compared with v27's), round 2; then compute-sanitizer memcheck and racecheck while time is left.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/fin ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r2; mkdir -p $R; cp dev18.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
row() { grep -E ' sm90 ' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//;s/ sm90 //' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); el() { echo $(( $(date +%s) - t0 )); }
echo "== $(tail -1 $R/device.txt)"
bench() {  # name M iters backends binary commit
  [ $(el) -gt 520 ] && return
  timeout 60 $B/$5 bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit $6 --out $R/$1.json > $R/$1.txt 2>&1; echo "$1: $(row $R/$1.txt) [$(el) s]"
}
round() {
  for m in 16 4096 128 32 64; do
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $1 = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    bench cur-m$m-$1 $m $it sm90 cur e11ace4; bench fin-m$m-$1 $m $it $be fin worktree
  done; pack
}
round 1
timeout 200 $B/fin_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/fin-suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/fin-suite.txt | tr '\n' ' ') [$(el) s]"
grep -E 'FAILED|Failure' $R/fin-suite.txt | head; pack
timeout 60 $B/fin validate > $R/fin-validate-default.txt 2>&1; echo "== validate default rc $? $(tail -1 $R/fin-validate-default.txt)"
for m in 16 64 128 333; do timeout 60 $B/fin validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/fin-val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/fin-val-m$m.txt | sort | uniq -c | tr '\n' ' ') [$(el) s]"; done
rm -f $R/fin-repeat-hashes.txt
for run in 1 2; do NVFP4_REPEAT_HASH_FILE=$R/fin-repeat-hashes.txt timeout 120 $B/fin_tests --gtest_filter=Gpu.EveryBackendGivesIdenticalBitsOnEveryRun:Gpu.Sm90HundredRunsBitIdentical > /tmp/rep.txt 2>&1; echo "== repeat $run rc $? $(grep -E '^\[  (PASSED|FAILED)' /tmp/rep.txt) [$(el) s]"; done
pack
round 2
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for cfg in 16x3x1x1 128x1x1x1 128x2x1x1 32x3x1x1 16x4x1x1 64x1x1x1; do
  for tool in racecheck memcheck; do
    [ $(el) -gt 540 ] && break 2
    NVFP4_SM90_CONFIG=$cfg timeout 50 $CS --tool $tool --error-exitcode 9 $B/fin validate --shapes san:200:1000 --rows 300 \
      --candidate sm90,sm90-stream --out /tmp/dsan-$tool-$cfg > /tmp/san.txt 2>&1
    rc=$?; echo "$tool $cfg: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1), $(grep -o 'status: [A-Z]*' /tmp/san.txt | head -1) [$(el) s]" | tee -a $R/fin-compute-sanitizer.txt
    [ $rc = 0 ] || tail -5 /tmp/san.txt >> $R/fin-compute-sanitizer.txt
  done
done
pack
echo "done [$(el) s]"
