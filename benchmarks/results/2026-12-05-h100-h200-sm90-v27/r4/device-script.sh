#!/bin/bash
# Device call (2026-12-05, nineteenth session): sm90-v27 r4. `uni` = bc7fa38 (the warpgroup index broadcast from lane 0,
# so the stage counter and the wgmma descriptors live in uniform registers), `mult` = e838218 (the kernel before it):
# uni's GPU suite, validate (default; M = 16, 64, 128, 333), the 100-run check in two processes, memcheck and racecheck
# under six configurations; then both timed in alternation, every linear at M = 16, 32, 64, 128, 4096, two rounds.
set -u
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
mkdir -p build/h; [ -d build/h/golden ] || tar -xJf tests/data/golden.tar.xz -C build/h
[ -x build/carry/uni ] || tar -xJf build/carry.tar.xz -C build
B=build/carry; R=$OUT/r4; mkdir -p $R; cp dev14.sh $R/device-script.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv > $R/device.txt 2>&1
pack() { tar -czf $OUT/results4.tgz -C $OUT r4; }
row() { grep -E ' sm90 |cublas-bf16' $1 | grep -v 'pre-pass' | awk -F'|' '{print $1 "|" $2}' | sed 's/ [0-9]*x[0-9]*x[0-9]* */ /;s/attn_//;s/_proj//;s/mlp_//' | tr -s ' ' | tr '\n' ';'; }
t0=$(date +%s); st() { echo "[$(( $(date +%s) - t0 )) s]"; }
echo "== $(tail -1 $R/device.txt)"
timeout 240 $B/uni_tests --gtest_filter='Gpu.*:Sm90Layout.*:HopperFastPath.*:DeviceApi.*' > $R/uni-suite.txt 2>&1; echo "== suite rc $? $(grep -E '^\[  (PASSED|FAILED)' $R/uni-suite.txt | tr '\n' ' ') $(st)"
grep -E 'FAILED|Failure' $R/uni-suite.txt | head; pack
timeout 60 $B/uni validate > $R/uni-validate-default.txt 2>&1; echo "== validate default rc $? $(tail -1 $R/uni-validate-default.txt) $(st)"
for m in 16 64 128 333; do timeout 60 $B/uni validate --rows $m --candidate sm90,sm90-stream --quiet --out /tmp/dv$m > $R/uni-val-m$m.txt 2>&1; echo "== validate M=$m rc $? $(grep -o "status: [A-Z]*" $R/uni-val-m$m.txt | sort | uniq -c | tr '\n' ' ')"; done
rm -f $R/uni-repeat-hashes.txt
for run in 1 2; do NVFP4_REPEAT_HASH_FILE=$R/uni-repeat-hashes.txt timeout 120 $B/uni_tests --gtest_filter=Gpu.EveryBackendGivesIdenticalBitsOnEveryRun:Gpu.Sm90HundredRunsBitIdentical > /tmp/rep.txt 2>&1; echo "== repeat $run rc $? $(grep -E '^\[  (PASSED|FAILED)' /tmp/rep.txt) $(st)"; done
pack
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck racecheck; do
  for cfg in 16x3x1x1 16x1x1x1x2 128x2x1x1 128x3x1x2 32x1x1x1x3 64x3x1x1; do
    NVFP4_SM90_CONFIG=$cfg timeout 100 $CS --tool $tool --error-exitcode 9 $B/uni validate --shapes san:200:1000 --rows 300 \
      --candidate sm90,sm90-stream --out /tmp/dsan-$tool-$cfg > /tmp/san.txt 2>&1
    rc=$?; echo "$tool $cfg: exit $rc, $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.txt | tail -1), $(grep -o 'status: [A-Z]*' /tmp/san.txt | head -1)" >> $R/uni-compute-sanitizer.txt
    [ $rc = 0 ] || tail -5 /tmp/san.txt >> $R/uni-compute-sanitizer.txt
  done
done
echo "== sanitizer $(grep -c 'exit 0, .* 0 \(errors\|hazards\).*PASS' $R/uni-compute-sanitizer.txt) of 12 clean $(st)"; grep -v 'exit 0' $R/uni-compute-sanitizer.txt | head -5
pack
bench() {  # name M iters backends binary commit
  timeout 120 $B/$5 bench --no-quantizer --rows $2 --iters $3 --backend $4 --commit $6 --out $R/$1.json > $R/$1.txt 2>&1; echo "== $1: $(row $R/$1.txt) $(st)"
}
for x in 1 2; do
  for m in 16 32 64 128 4096; do
    it=30; [ $m = 4096 ] && it=10
    be=sm90; [ $x = 1 ] && { [ $m = 16 ] || [ $m = 128 ]; } && be=sm90,sm90-stream,comfy-hopper,cublas-fp8
    bench mult-m$m-$x $m $it sm90 mult e838218; bench uni-m$m-$x $m $it $be uni bc7fa38
  done
  pack
done
echo "done $(st)"
