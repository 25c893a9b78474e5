#!/bin/bash
# Device call (2026-12-05, eighteenth session): sm90-v26 r2. `pipe` = HEAD 9195099 + the paired one-chain loop for the
# tiles of up to 32 tokens (Cfg::kPipe: chunk c + 1 decoded under chunk c's MMAs and issued before their wait, c + 2
# decoded under c + 1's); `desc` = HEAD's kernel (23bd650). GPU suite, validate, the five paired configurations (16x1/2/3x1x1, 32x1/2x1x1) forced
# on an odd chunk count (also with a three-stage ring), compute-sanitizer, and the two timed in one call, alternated.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/pipe ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r2; mkdir -p $R; cp dev6.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results2.tgz -C $OUT r2; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
timeout 240 $B/pipe_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/pipe-suite.txt 2>&1; echo "== pipe suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/pipe-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/pipe-suite.txt | head; pack
timeout 60 $B/pipe validate > $R/pipe-validate-default.txt 2>&1; echo "== validate default rc $? $(tail -1 $R/pipe-validate-default.txt)"
for m in 1 16 32 333; do timeout 60 $B/pipe validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/pv$m > $R/pipe-val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/pipe-val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
for cfg in 16x1x1x1 16x2x1x1 16x3x1x1 32x1x1x1 32x2x1x1; do
  for ms in 6 3; do
    NVFP4_SM90_MAX_STAGES=$ms NVFP4_SM90_CONFIG=$cfg timeout 60 $B/pipe validate --shapes odd:1000:1337,even:712:1344 --rows 45 --candidate sm90,sm90-stream --quiet --out /tmp/pc > /tmp/pc.txt 2>&1
    echo "forced $cfg stages $ms: rc $? $(grep -o "status: [A-Z]*" /tmp/pc.txt | sort | uniq -c | tr '\n' ' ')" | tee -a $R/pipe-forced-configs.txt
  done
done
pack; st
bench() {  # name binary M iters [extra]
  local n=$1 b=$2 m=$3 it=$4; shift 4
  timeout 100 $B/$b bench --no-quantizer --rows $m --iters $it --backend sm90 --commit $b "$@" --out $R/$n.json > $R/$n.txt 2>&1; echo "== $n: $(row $R/$n.txt) $(st)"
}
for x in 1 2; do
  for m in 16 32; do for v in desc pipe; do bench m$m-$v-$x $v $m 30; done; done
  for v in desc pipe; do
    bench fc1-m16-cfg-$v-$x $v 16 30 --shapes mlp_fc1 --sm90-config 16x2x1x1,16x3x1x1,16x4x1x1
    bench qkv-m32-cfg-$v-$x $v 32 30 --shapes attn_qkv_proj --sm90-config 32x2x1x1,32x3x1x1
  done
  pack
done
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  for cfg in 16x3x1x1 16x2x1x1 32x2x1x1 16x1x1x1 32x1x1x1; do
    NVFP4_SM90_CONFIG=$cfg timeout 90 $CS --tool $tool --error-exitcode 9 $B/pipe validate --shapes san:200:1337 --rows 45 \
      --candidate sm90,sm90-stream --out /tmp/psan > /tmp/san.txt 2>&1
    rc=$?; echo "$tool $cfg: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1), $(grep -o 'status: [A-Z]*' /tmp/san.txt | head -1) $(st)" | tee -a $R/pipe-compute-sanitizer.txt
    [ $rc = 0 ] || tail -5 /tmp/san.txt >> $R/pipe-compute-sanitizer.txt
  done
  pack
done
if [ $(( $(date +%s) - t0 )) -lt 480 ]; then
  rm -f $R/pipe-repeat-hashes.txt
  for run in 1 2; do NVFP4_REPEAT_HASH_FILE=$R/pipe-repeat-hashes.txt timeout 60 $B/pipe_tests --gtest_filter=Gpu.EveryBackendGivesIdenticalBitsOnEveryRun:Gpu.Sm90HundredRunsBitIdentical > /tmp/rep.txt 2>&1; echo "== repeat $run rc $? $(grep -E '^\[  (PASSED|FAILED)' /tmp/rep.txt)"; done
  pack
fi
echo "done $(st)"
